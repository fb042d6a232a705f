// What a kimi-linear GGUF file keeps in memory and reads per decoded token
// when krun runs it in place, and how it runs in a memory budget: from RAM,
// or paged from disk (krun plan --gguf).

package model

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/kernels/mla"
	"github.com/ktune/ktune/model/kfile"
)

// GGUFLayout is a kimi-linear GGUF file's weights as LoadGGUF runs them in
// place: the matrices are views of the file's mapping, copied into memory
// when they fit (placeWeights), the embedding table stays mapped and is
// read one row per token, and the small tensors, the routers and MLA's
// k_b/v_b are widened to f32 copies on the heap at load.
type GGUFLayout struct {
	Cfg      *arch.Config
	FileType uint32 // general.file_type
	// FileBytes is the file's size (all parts; a NewSynthGGUF layout's:
	// the size it writes).
	FileBytes int64
	// Data is the tensors' bytes (the mapping); Params their values.
	Data, Params int64
	// Embedding is token_embd's bytes: mapped, one row read per token,
	// never copied (not counted as resident, as in PlanFit).
	Embedding int64
	// Hot is the matrices every token reads, in place at the file's
	// types: attention (KDA q/k/v/o, MLA q/kv_a/o), the KDA gates, the
	// dense MLP, the shared experts and lm_head. Experts is the routed
	// experts of every MoE layer.
	Hot, Experts int64
	// HotCopied and ExpertsCopied are Hot and Experts as a copy into
	// memory holds them: each matrix (each expert's gate, up and down) at
	// a page boundary (kfile.Alignment), as placeWeights lays them out.
	HotCopied, ExpertsCopied int64
	// Heap is the f32 copies the engine makes at load (norms, conv taps,
	// A_log, biases, the routers, MLA's kv_b from k_b and v_b), as
	// LoadGGUF's estimate counts them; HeapPerToken is their part a token
	// reads as weights (the routers and kv_b; the norms and taps are not
	// counted, as Model.DecodeWeightBytes does not).
	Heap, HeapPerToken int64
	// Routed is the routed experts a token reads: the top-k of each MoE
	// layer (TopK of NumExperts, in MoELayers layers).
	Routed                      int64
	TopK, NumExperts, MoELayers int
	// RelErr is the importance-weighted relative RMS weight error of the
	// file's types (GGUFRelErr, weighted as PlanFit weighs its groups);
	// NaN where a type of the file has no measured figure.
	RelErr float64

	kdaPerSeq int64 // EstimateMemory's KDAStatePerSeq
}

// TokenBytes is the weight bytes a decoded token reads: the hot matrices,
// the routers and kv_b, and the top-k routed experts of each MoE layer
// (not the embedding row) — what Model.DecodeWeightBytes counts for the
// loaded model, less the embedding row, and what krun bench's "of bound"
// column divides by the read ceiling.
func (l *GGUFLayout) TokenBytes() int64 { return l.Hot + l.HeapPerToken + l.Routed }

// Copied is the memory the in-place matrices take once copied.
func (l *GGUFLayout) Copied() int64 { return l.HotCopied + l.ExpertsCopied }

// BitsPerWeight is the file's tensor bytes × 8 over its values.
func (l *GGUFLayout) BitsPerWeight() float64 {
	if l.Params == 0 {
		return 0
	}
	return 8 * float64(l.Data) / float64(l.Params)
}

// GGUFRelErr is the relative RMS weight error ‖Ŵ−W‖/‖W‖ of a ggml type as
// llama-quantize makes it without an importance matrix: ggml's own
// quantizer (ggml_quantize_chunk) on 256×4096 Gaussian rows, the
// measurement FitFormats' figures come from (docs/quant-error.md). f32,
// bf16 and f16 hold a bf16 checkpoint's values (f16 exactly for every
// |w| from 2⁻¹⁷ to 65504, and within 2⁻²⁵ below): 0. iq4_nl, iq4_xs and
// mxfp4 were not measured and are absent.
var GGUFRelErr = map[gguf.Type]float64{
	gguf.TypeF32: 0, gguf.TypeBF16: 0, gguf.TypeF16: 0,
	gguf.TypeQ8_0: 0.0053,
	gguf.TypeQ6_K: 0.0177,
	gguf.TypeQ5_1: 0.0378,
	gguf.TypeQ5_K: 0.0361,
	gguf.TypeQ5_0: 0.0427,
	gguf.TypeQ4_1: 0.0782,
	gguf.TypeQ4_K: 0.0713,
	gguf.TypeQ4_0: 0.0859,
	gguf.TypeQ3_K: 0.1507,
	gguf.TypeQ2_K: 0.2962,
}

// ggufFitClass is the PlanFit group class of a kimi-linear GGUF tensor
// ("" for the embedding, the routers and the f32 tensors, which take no
// format in PlanFit's objective). MLA's k_b and v_b (kv_b_proj, f32 in a
// converted .kt) count as attention: a GGUF file quantizes them.
func ggufFitClass(name string) FitClass {
	switch {
	case name == "output.weight":
		return FitHead
	case strings.HasSuffix(name, "_exps.weight"):
		return FitExperts
	case strings.HasSuffix(name, "_shexp.weight"):
		return FitShared
	}
	for _, s := range []string{".attn_q.", ".attn_k.", ".attn_v.", ".attn_output.", ".attn_kv_a_mqa.", ".attn_k_b.", ".attn_v_b.", ".attn_kv_b."} {
		if strings.Contains(name, s) {
			return FitAttention
		}
	}
	for _, s := range []string{".ssm_f_a.", ".ssm_f_b.", ".ssm_g_a.", ".ssm_g_b.", ".ssm_beta."} {
		if strings.Contains(name, s) {
			return FitGates
		}
	}
	for _, s := range []string{".ffn_gate.", ".ffn_up.", ".ffn_down."} {
		if strings.Contains(name, s) {
			return FitDense
		}
	}
	return ""
}

// NewGGUFLayout computes the layout of a kimi-linear file of cfg holding
// tensors ts (names, dims and types as gguf.Open reads them; Size may be
// 0: it is computed). Which tensors are views, heap copies or the
// embedding is what the engine's build asks its source for (Plan with
// every group AsStored, as LoadGGUF loads), so the figures follow the
// engine. fileBytes and fileType are recorded as given.
func NewGGUFLayout(cfg *arch.Config, ts []gguf.TensorInfo, fileType uint32, fileBytes int64) (*GGUFLayout, error) {
	p, err := newGGUFPlan(cfg)
	if err != nil {
		return nil, err
	}
	return p.layout(ts, fileType, fileBytes)
}

// ggufPlan is what the engine builds cfg from, each tensor with its GGUF
// tensor: the part of a layout that does not depend on the types.
type ggufPlan struct {
	cfg   *arch.Config
	sh    arch.Shapes
	specs []TensorSpec
	refs  []ggufRef
	layer []int // an expert spec's layer

	kdaPerSeq int64
}

func newGGUFPlan(cfg *arch.Config) (*ggufPlan, error) {
	opt := LoadOptions{}
	opt.storedDefaults()
	specs, err := TensorSpecs(cfg, opt)
	if err != nil {
		return nil, err
	}
	mem, err := EstimateMemory(cfg, LoadOptions{}, 2)
	if err != nil {
		return nil, err
	}
	p := &ggufPlan{cfg: cfg, sh: cfg.Shapes(), kdaPerSeq: mem.KDAStatePerSeq}
	for _, s := range specs {
		ref, _ := ggufName(arch.TensorSpec{Name: s.Name, Shape: s.Shape}, p.sh)
		if ref.name == "" {
			return nil, fmt.Errorf("model: %s has no GGUF tensor", s.Name)
		}
		if ref.expert > 0 {
			continue // the stacked tensor is counted with expert 0
		}
		p.specs, p.refs = append(p.specs, s), append(p.refs, ref)
		l := -1
		if ref.expert == 0 {
			l = blockOf(ref.name)
		}
		p.layer = append(p.layer, l)
	}
	return p, nil
}

// layout is NewGGUFLayout on p's config.
func (p *ggufPlan) layout(ts []gguf.TensorInfo, fileType uint32, fileBytes int64) (*GGUFLayout, error) {
	byName := map[string]gguf.TensorInfo{}
	l := &GGUFLayout{Cfg: p.cfg, FileType: fileType, FileBytes: fileBytes, kdaPerSeq: p.kdaPerSeq}
	for _, t := range ts {
		if t.Size == 0 {
			n, err := t.Type.ByteSize(t.Dims)
			if err != nil {
				return nil, fmt.Errorf("model: tensor %s: %w", t.Name, err)
			}
			t.Size = n
		}
		byName[t.Name] = t
		l.Data += int64(t.Size)
		l.Params += int64(t.NumElements())
	}
	tensor := func(name string) (int64, error) {
		t, ok := byName[name]
		if !ok {
			return 0, fmt.Errorf("model: the file has no tensor %s", name)
		}
		return int64(t.Size), nil
	}
	align := func(n int64) int64 { return alignUp(n, kfile.Alignment) }
	E := int64(p.sh.Experts)
	expert := map[int]int64{} // one expert's gate+up+down, by layer
	for i, s := range p.specs {
		ref := p.refs[i]
		switch s.Kind {
		case EmbeddingTable:
			n, err := tensor(ref.name)
			if err != nil {
				return nil, err
			}
			l.Embedding = n
		case Float32:
			l.Heap += 4 * s.Elements()
			if ref.vb != "" || strings.HasSuffix(s.Name, "kv_b_proj.weight") {
				l.HeapPerToken += 4 * s.Elements() // W_UK, W_UV
			}
		case Packed:
			if s.DType != AsStored { // the router: f32 on the heap
				n := quant.Size(s.DType, s.N(), s.K(), false)
				l.Heap += n
				l.HeapPerToken += n
				continue
			}
			n, err := tensor(ref.name)
			if err != nil {
				return nil, err
			}
			if ref.expert == 0 { // the stacked tensor: E slabs
				l.Experts += n
				l.ExpertsCopied += E * align(n/E)
				expert[p.layer[i]] += n / E
				continue
			}
			l.Hot += n
			l.HotCopied += align(n)
		}
	}
	for _, n := range expert {
		l.Routed += int64(p.sh.TopK) * n
	}
	l.TopK, l.NumExperts, l.MoELayers = p.sh.TopK, p.sh.Experts, len(expert)
	l.RelErr = ggufRelErr(p.cfg, ts)
	return l, nil
}

// ggufRelErr is √(Σ importance·params·err² / Σ importance·params) over the
// tensors PlanFit's groups cover, each with PlanFit's importance
// (FitSensitivity, the edge layers' weight, the share of the routed
// experts a token reads); NaN if a type has no GGUFRelErr figure.
func ggufRelErr(cfg *arch.Config, ts []gguf.TensorInfo) float64 {
	s := cfg.Shapes()
	var num, den float64
	for _, t := range ts {
		c := ggufFitClass(t.Name)
		if c == "" {
			continue
		}
		imp := FitSensitivity[c]
		if l := blockOf(t.Name); (c == FitExperts || c == FitDense) && (l < FitEdgeLayers || l >= s.Layers-FitEdgeLayers) {
			imp *= FitEdgeWeight
		}
		if c == FitExperts {
			imp *= float64(s.TopK) / float64(s.Experts)
		}
		e, ok := GGUFRelErr[t.Type]
		if !ok {
			return math.NaN()
		}
		w := imp * float64(t.NumElements())
		num += w * e * e
		den += w
	}
	if den == 0 {
		return 0
	}
	return math.Sqrt(num / den)
}

// OpenGGUFLayout reads the layout of a kimi-linear GGUF file (or of the
// split set a part of it belongs to) from its header, checking its
// tensors against its config as LoadGGUF does; no tensor data is read.
// Problems of the file are InputErrors naming it.
func OpenGGUFLayout(path string) (*GGUFLayout, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, inputErr(fmt.Errorf("model: %w", err))
	}
	defer f.Close()
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, inputErr(err)
	}
	if _, err := NewGGUFSource(f, cfg, 1); err != nil {
		return nil, inputErr(err)
	}
	var size int64
	for _, p := range f.Parts {
		st, err := os.Stat(p)
		if err != nil {
			return nil, inputErr(fmt.Errorf("model: %w", err))
		}
		size += st.Size()
	}
	ft, _ := f.Metadata.Uint("general.file_type")
	return NewGGUFLayout(cfg, f.Tensors, uint32(ft), size)
}

// GGUFTypeLayouts are the layouts of cfg's file in every file type of
// GGUFFileTypes, as llama-quantize allocates them (LlamaQuantTypes) and
// krun synth writes them (FileBytes: SynthGGUF.Size, with synth's
// placeholder vocabulary), in GGUFFileTypes' order. No file is written.
func GGUFTypeLayouts(cfg *arch.Config) ([]*GGUFLayout, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	p, err := newGGUFPlan(cfg)
	if err != nil {
		return nil, err
	}
	shapes := synthGGUFShapes(cfg)
	var out []*GGUFLayout
	for _, ft := range GGUFFileTypes {
		s, err := newSynthGGUF(cfg, ft, 0, shapes)
		if err != nil {
			return nil, err
		}
		size, err := s.Size()
		if err != nil {
			return nil, err
		}
		ts := make([]gguf.TensorInfo, len(s.Tensors))
		for i, t := range s.Tensors {
			ts[i] = gguf.TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type}
		}
		l, err := p.layout(ts, ft.ID, size)
		if err != nil {
			return nil, fmt.Errorf("model: GGUF %s: %w", ft.Name, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// GGUFFit is how a GGUF layout runs in a memory budget.
type GGUFFit struct {
	Budget, Reserve    int64
	KDAState, MLACache int64 // Seqs sequences of Context tokens
	Context, Seqs      int
	CacheDType         kernel.DType
	// Need is what running from RAM takes: the heap copies, the copied
	// matrices, the KDA state and the MLA cache.
	Need int64
	// Resident: Need + Reserve ≤ Budget; the model runs from RAM.
	Resident bool
	// MinBudget is the least budget that runs it from RAM (the reserve
	// rule of FitOptions.Reserve).
	MinBudget int64
	// Runs: the heap copies and the states fit beside the reserve
	// (Room ≥ 0); otherwise the budget cannot run the model at all.
	Runs bool
	// Room is what the budget leaves the mapped weights' pages: Budget −
	// Reserve − Heap − the states.
	Room int64
	// Paged (Runs, not Resident): HotFits says the hot matrices fit in
	// Room; ExpertShare is the share of the routed experts' bytes that
	// fits beside them; DiskPerToken the expected bytes a token then reads
	// from disk (see Fit).
	HotFits      bool
	ExpertShare  float64
	DiskPerToken int64
}

// Fit places l in budget bytes with opt's context, sequences, cache
// format and reserve (FitOptions' defaults and reserve rule; Search,
// Formats and the embedding options do not apply). Resident when the
// copies, the matrices, the states and the reserve fit: the model runs
// from RAM. Otherwise the matrices stay mapped and the OS pages them from
// disk, and the estimate assumes: the page cache holds the hot matrices
// (every token reads them) and, in the rest of Room, the same share of
// every MoE layer's experts (the most-routed ones; the router balances
// its load, so each expert is taken as routed equally often); a token
// then reads from disk (1 − ExpertShare) of its routed experts' bytes.
// Where the hot matrices do not fit, nothing routed stays and a token
// reads at least the hot bytes beyond Room and all its routed experts.
// Read-ahead waste, the embedding rows and page granularity are not
// counted.
func (l *GGUFLayout) Fit(budget int64, opt FitOptions) (GGUFFit, error) {
	opt = opt.withDefaults(l.Cfg)
	switch opt.CacheDType {
	case kernel.F32, kernel.BF16, kernel.Q8:
	default:
		return GGUFFit{}, fmt.Errorf("model: MLA cache dtype %q not supported (f32, bf16, q8)", opt.CacheDType)
	}
	f := GGUFFit{Budget: budget, Context: opt.Context, Seqs: opt.Seqs, CacheDType: opt.CacheDType}
	s := l.Cfg.Shapes() // the states as EstimateMemory counts them
	f.KDAState = int64(opt.Seqs) * l.kdaPerSeq
	f.MLACache = int64(opt.Seqs) * int64(opt.Context) * int64(s.NumMLALayers) * int64(mla.RowBytes(s.MLACacheValuesPerToken, opt.CacheDType))
	switch f.Reserve = opt.Reserve; {
	case f.Reserve == 0:
		f.Reserve = DefaultReserve(budget)
	case f.Reserve < 0:
		f.Reserve = 0
	}
	base := l.Heap + f.KDAState + f.MLACache
	f.Need = base + l.Copied()
	f.MinBudget = minBudget(f.Need, opt.Reserve)
	f.Resident = f.Need+f.Reserve <= budget
	f.Room = budget - f.Reserve - base
	f.Runs = f.Room >= 0
	switch {
	case f.Resident:
		f.HotFits, f.ExpertShare = true, 1
	case !f.Runs:
	case f.Room >= l.Hot:
		f.HotFits = true
		if l.Experts > 0 {
			f.ExpertShare = min(1, float64(f.Room-l.Hot)/float64(l.Experts))
		}
		f.DiskPerToken = int64(math.Round((1 - f.ExpertShare) * float64(l.Routed)))
	default:
		f.DiskPerToken = l.Hot - f.Room + l.Routed
	}
	return f, nil
}

// InRAM reports whether every weight stays in memory: Resident, or mapped
// with all of the file's matrices in the page cache (Room holds them at
// the file's size, though not the page-aligned copy): no disk reads once
// every page was touched.
func (f GGUFFit) InRAM() bool { return f.Resident || f.Runs && f.HotFits && f.ExpertShare >= 1 }

// GGUFFileTypeName is llama.cpp's name of a general.file_type (enum
// llama_ftype), or "file type N" for one it does not name.
func GGUFFileTypeName(id uint32) string {
	if int(id) < len(llamaFtypeNames) && llamaFtypeNames[id] != "" {
		return llamaFtypeNames[id]
	}
	return fmt.Sprintf("file type %d", id)
}

// llamaFtypeNames are include/llama.h's LLAMA_FTYPE_* (ALL_F32, MOSTLY_*)
// by value; the removed ones (4–6, 33–35) are empty.
var llamaFtypeNames = []string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
	36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0", 41: "Q2_0",
}

// GGUFQualityOrder orders layouts best first: by bits per weight, the
// lossless ones (RelErr 0: f32, bf16 and f16 hold a bf16 checkpoint's
// values) first as equals; equals by the smaller file, then bf16 (the
// checkpoint's own type) first. Bits per weight rank the types only
// roughly: at about equal bits the codebook types (iq4_nl, iq4_xs) are
// usually more accurate than q4_0, which this order does not know.
func GGUFQualityOrder(ls []*GGUFLayout) []int {
	key := func(l *GGUFLayout) float64 {
		if l.RelErr == 0 {
			return math.Inf(1)
		}
		return l.BitsPerWeight()
	}
	idx := make([]int, len(ls))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := ls[i], ls[j]
		return cmp.Or(-cmp.Compare(key(a), key(b)), cmp.Compare(a.FileBytes, b.FileBytes),
			bf16First(a, b))
	})
	return idx
}

// bf16First orders a bf16 layout before another.
func bf16First(a, b *GGUFLayout) int {
	switch {
	case a.FileType == b.FileType:
		return 0
	case a.FileType == ftypeBF16:
		return -1
	case b.FileType == ftypeBF16:
		return 1
	}
	return 0
}

// BestGGUF is the index of the best layout (GGUFQualityOrder) that runs
// from RAM in its fit (fits[i] is ls[i]'s; GGUFFit.InRAM), or −1 if none
// does.
func BestGGUF(ls []*GGUFLayout, fits []GGUFFit) int {
	for _, i := range GGUFQualityOrder(ls) {
		if fits[i].InRAM() {
			return i
		}
	}
	return -1
}
