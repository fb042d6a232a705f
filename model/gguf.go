package model

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
)

// GGUFSource is a Kimi Linear GGUF file (llama.cpp's "kimi-linear"
// architecture) as a Source: the engine asks for tensors by their Hugging
// Face names, and the source finds each in the file and undoes what
// llama.cpp's converter did to it on the way:
//
//   - names: blk.N.attn_q → model.layers.N.self_attn.q_proj, ssm_f_a →
//     f_a_proj, ssm_beta → b_proj, ssm_norm → o_norm, ffn_gate_inp → the
//     router, exp_probs_b → its score bias, *_shexp → the shared expert, …
//     (ggufName lists them all);
//   - shapes: ggml orders dimensions fastest first ([in, out] for a
//     weight), the reverse of PyTorch; the conv taps [W, 1, H·D] and ssm_a
//     [1, H] are the HF tensors' bytes under reversed dimensions;
//   - the routed experts are stacked in one 3-D tensor per projection
//     ([in, out, experts]): expert e is the e-th slab;
//   - ssm_a holds −exp(A_log), not A_log: A_log is recovered as the f32
//     value whose −exp the KDA kernel computes back to exactly ssm_a;
//   - MLA's kv_b_proj is split per head into k_b (nope rows, transposed:
//     [dn, r, H]) and v_b ([r, dv, H]) for llama.cpp's absorbed attention:
//     they are interleaved back into kv_b_proj [H·(dn+dv), r] (a file from
//     an older converter with one attn_kv_b tensor is read as is).
//
// Matrices asked for AsStored are, with InPlace, views of the file's
// blocks in their GGUF format (kernel.GGUFQ4_K, …: read where they lie,
// at their own bits); without, repacked from their ggml type into the
// kernels' panel formats (quant.FromGGML): exactly where a format holds
// the same values, otherwise as Repack says. Asked for a dtype (a preset),
// they are dequantized and packed into it.
type GGUFSource struct {
	File *gguf.File
	// InPlace hands out AsStored matrices as views of the mapping.
	InPlace bool
	// Repack is how a ggml type without an exact repack is packed.
	Repack quant.GGMLRepack
	// Search requantizes with quant.QuantizeWeighted's scale search.
	Search bool
	// Imatrix, if set, weights the search of the requantized matrices it
	// covers (LoadOptions.Imatrix).
	Imatrix *Imatrix
	// EmbedF32 makes Embedding widen a quantized table to f32 (for a
	// model file, whose raw tensors are f32, f16 or bf16).
	EmbedF32 bool

	cfg     *arch.Config
	refs    map[string]ggufRef
	threads int
}

// ggufRef locates an HF tensor in the file.
type ggufRef struct {
	name   string // the GGUF tensor
	expert int    // the slab of a stacked expert tensor, or -1
	vb     string // kv_b_proj: the v_b tensor (name is k_b); "" for attn_kv_b
	aLog   bool   // ssm_a: undo −exp
}

// NewGGUFSource checks f's tensors against cfg (from ConfigFromGGUF):
// every tensor present with its shape and a type we read, none left over.
// All problems are reported in one error naming the file.
func NewGGUFSource(f *gguf.File, cfg *arch.Config, threads int) (*GGUFSource, error) {
	if threads <= 0 {
		threads = pool.Default().Size()
	}
	s := &GGUFSource{File: f, cfg: cfg, refs: map[string]ggufRef{}, threads: threads}
	var missing, shape, types []string
	used := map[string]bool{}
	check := func(name string, want []uint64) {
		t, ok := f.Tensor(name)
		if !ok {
			missing = append(missing, name)
			return
		}
		used[name] = true
		if !slices.Equal(trimOnes(t.Dims), trimOnes(want)) {
			shape = append(shape, fmt.Sprintf("%s is %v, want %v", name, t.Dims, want))
		}
		if !ggmlReadable(t.Type) {
			types = append(types, fmt.Sprintf("%s is %s", name, t.Type))
		}
	}
	sh := cfg.Shapes()
	for _, spec := range cfg.TensorNames() {
		ref, want := ggufName(spec, sh)
		if ref.name == "" {
			missing = append(missing, "(a tensor for "+spec.Name+")")
			continue
		}
		s.refs[spec.Name] = ref
		if ref.expert > 0 {
			continue // the stacked tensor was checked with expert 0
		}
		if ref.vb != "" {
			check(ref.name, []uint64{uint64(sh.QKNope), uint64(sh.KVLoraRank), uint64(sh.MLAHeads)})
			check(ref.vb, []uint64{uint64(sh.KVLoraRank), uint64(sh.VHead), uint64(sh.MLAHeads)})
			continue
		}
		check(ref.name, want)
	}
	var extra []string
	for _, t := range f.Tensors {
		if !used[t.Name] {
			extra = append(extra, t.Name)
		}
	}
	if len(missing)+len(shape)+len(types)+len(extra) == 0 {
		return s, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s does not hold the Kimi Linear model its metadata describes", f.Path)
	list := func(what string, xs []string) {
		if len(xs) == 0 {
			return
		}
		sort.Strings(xs)
		fmt.Fprintf(&b, "; %d %s: ", len(xs), what)
		if len(xs) > 10 {
			xs = append(xs[:10:10], fmt.Sprintf("… and %d more", len(xs)-10))
		}
		b.WriteString(strings.Join(xs, ", "))
	}
	list("missing tensors", missing)
	list("mis-shaped tensors", shape)
	list("tensors of a type krun cannot read", types)
	list("extra tensors", extra)
	return nil, fmt.Errorf("%s", b.String())
}

// ggmlReadable lists the ggml types krun reads: those it runs in place
// (quant.GGUFDType; quant.FromGGML and quant.DequantizeGGML take them
// too). The codebook types beyond iq4_nl and iq4_xs (iq1_*, iq2_*,
// iq3_*) and the ternary tq1_0 and tq2_0 are not among them.
func ggmlReadable(t gguf.Type) bool {
	_, ok := quant.GGUFDType(t)
	return ok
}

// trimOnes drops trailing 1s (ggml's converter and quantizer write
// [W, 1, P] or [W, 1, P, 1] for the same tensor).
func trimOnes(d []uint64) []uint64 {
	for len(d) > 0 && d[len(d)-1] == 1 {
		d = d[:len(d)-1]
	}
	return d
}

// reversed is the ggml order of a PyTorch shape.
func reversed(sh []int64) []uint64 {
	out := make([]uint64, len(sh))
	for i, d := range sh {
		out[len(sh)-1-i] = uint64(d)
	}
	return out
}

// ggmlNames maps the HF names inside a layer to llama.cpp's.
var ggmlNames = map[string]string{
	"input_layernorm.weight":          "attn_norm.weight",
	"post_attention_layernorm.weight": "ffn_norm.weight",
	// KDA
	"self_attn.k_proj.weight":   "attn_k.weight",
	"self_attn.v_proj.weight":   "attn_v.weight",
	"self_attn.q_conv1d.weight": "ssm_conv1d_q.weight",
	"self_attn.k_conv1d.weight": "ssm_conv1d_k.weight",
	"self_attn.v_conv1d.weight": "ssm_conv1d_v.weight",
	"self_attn.f_a_proj.weight": "ssm_f_a.weight",
	"self_attn.f_b_proj.weight": "ssm_f_b.weight",
	"self_attn.A_log":           "ssm_a",
	"self_attn.dt_bias":         "ssm_dt.bias",
	"self_attn.b_proj.weight":   "ssm_beta.weight",
	"self_attn.g_a_proj.weight": "ssm_g_a.weight",
	"self_attn.g_b_proj.weight": "ssm_g_b.weight",
	"self_attn.o_norm.weight":   "ssm_norm.weight",
	// KDA and MLA
	"self_attn.q_proj.weight": "attn_q.weight",
	"self_attn.o_proj.weight": "attn_output.weight",
	// MLA
	"self_attn.kv_a_proj_with_mqa.weight": "attn_kv_a_mqa.weight",
	"self_attn.kv_a_layernorm.weight":     "attn_kv_a_norm.weight",
	// dense MLP
	"mlp.gate_proj.weight": "ffn_gate.weight",
	"mlp.up_proj.weight":   "ffn_up.weight",
	"mlp.down_proj.weight": "ffn_down.weight",
	// MoE
	"block_sparse_moe.gate.weight":                     "ffn_gate_inp.weight",
	"block_sparse_moe.gate.e_score_correction_bias":    "exp_probs_b.bias",
	"block_sparse_moe.shared_experts.gate_proj.weight": "ffn_gate_shexp.weight",
	"block_sparse_moe.shared_experts.up_proj.weight":   "ffn_up_shexp.weight",
	"block_sparse_moe.shared_experts.down_proj.weight": "ffn_down_shexp.weight",
}

// expertNames maps a routed expert's projection to its stacked tensor.
var expertNames = map[string]string{"w1.weight": "ffn_gate_exps.weight", "w2.weight": "ffn_down_exps.weight", "w3.weight": "ffn_up_exps.weight"}

// ggufName finds the GGUF tensor of an HF tensor and the ggml dimensions
// it must have; a zero ref means the name is not one we know.
func ggufName(spec arch.TensorSpec, sh arch.Shapes) (ggufRef, []uint64) {
	ref := ggufRef{expert: -1}
	switch spec.Name {
	case "model.embed_tokens.weight":
		ref.name = "token_embd.weight"
	case "model.norm.weight":
		ref.name = "output_norm.weight"
	case "lm_head.weight":
		ref.name = "output.weight"
	}
	if ref.name != "" {
		return ref, reversed(spec.Shape)
	}
	var l int
	var rest string
	if n, _ := fmt.Sscanf(spec.Name, "model.layers.%d.", &l); n != 1 {
		return ggufRef{}, nil
	}
	rest = strings.TrimPrefix(spec.Name, fmt.Sprintf("model.layers.%d.", l))
	blk := fmt.Sprintf("blk.%d.", l)
	if g, ok := ggmlNames[rest]; ok {
		ref.name = blk + g
		ref.aLog = rest == "self_attn.A_log"
		return ref, reversed(spec.Shape)
	}
	if rest == "self_attn.kv_b_proj.weight" {
		ref.name, ref.vb = blk+"attn_k_b.weight", blk+"attn_v_b.weight"
		return ref, nil
	}
	var e int
	var w string
	if n, _ := fmt.Sscanf(rest, "block_sparse_moe.experts.%d.%s", &e, &w); n == 2 {
		if g, ok := expertNames[w]; ok {
			ref.name, ref.expert = blk+g, e
			return ref, append(reversed(spec.Shape), uint64(sh.Experts))
		}
	}
	return ggufRef{}, nil
}

// Close closes the file.
func (s *GGUFSource) Close() error { return s.File.Close() }

// Mapped reports whether AsStored matrices are views of the mapping
// (InPlace); the small f32 tensors are copies either way (InMapping tells
// which bytes are views).
func (s *GGUFSource) Mapped() bool { return s.InPlace }

// InMapping reports whether b lies in the file's mapping (a view, not
// process memory).
func (s *GGUFSource) InMapping(b []byte) bool { _, ok := s.File.Offset(b); return ok }

// Where names the file (the part holding name, for a split file).
func (s *GGUFSource) Where(name string) string {
	if r, ok := s.refs[name]; ok {
		if t, ok := s.File.Tensor(r.name); ok && t.Part < len(s.File.Parts) {
			return s.File.Parts[t.Part]
		}
	}
	return s.File.Path
}

// tensor returns the info and bytes of an HF tensor's GGUF tensor (the
// expert's slab of a stacked one), as n rows of k.
func (s *GGUFSource) tensor(name string) (t gguf.TensorInfo, raw []byte, n, k int, err error) {
	r, ok := s.refs[name]
	if !ok {
		return t, nil, 0, 0, fmt.Errorf("not a tensor of the model")
	}
	t, _ = s.File.Tensor(r.name)
	if raw, err = s.File.TensorData(r.name); err != nil {
		return t, nil, 0, 0, err
	}
	k = int(t.Dims[0])
	n = int(t.NumElements()) / max(k, 1)
	if r.expert >= 0 {
		n /= int(t.Dims[2])
		per := len(raw) / int(t.Dims[2])
		raw = raw[r.expert*per : (r.expert+1)*per]
	}
	return t, raw, n, k, nil
}

// named prefixes an error with the GGUF name of the HF tensor name (the
// loader's message names the HF one).
func (s *GGUFSource) named(name string, err error) error {
	if err == nil {
		return nil
	}
	if r, ok := s.refs[name]; ok {
		return fmt.Errorf("GGUF tensor %q: %w", r.name, err)
	}
	return err
}

// Matrix repacks a weight (see GGUFSource): for dt AsStored into its ggml
// type's format (quant.FromGGML under Repack), else requantized into dt
// from the dequantized values.
func (s *GGUFSource) Matrix(name string, dt kernel.DType) (*quant.Matrix, error) {
	m, err := s.matrix(name, dt)
	return m, s.named(name, err)
}

func (s *GGUFSource) matrix(name string, dt kernel.DType) (*quant.Matrix, error) {
	r := s.refs[name]
	if r.vb != "" || r.aLog {
		return nil, fmt.Errorf("not a matrix")
	}
	t, raw, n, k, err := s.tensor(name)
	if err != nil {
		return nil, err
	}
	if dt != AsStored {
		rowBytes := len(raw) / max(n, 1)
		return packRowsWeighted(dt, n, k, s.threads, s.Search, s.Imatrix.importance(name, dt), func(dst []float32, r0, r1 int) error {
			return ggmlRows(t, raw[r0*rowBytes:r1*rowBytes], dst)
		})
	}
	if s.InPlace {
		// no check of the values: verifyGGUF's, once per file (gguf_verify.go)
		return quant.GGUFView(t.Type, n, k, raw)
	}
	if err := checkFloatRows(t, raw, k); err != nil {
		return nil, err
	}
	m, _, err := quant.FromGGML(t.Type, raw, n, k, s.Repack)
	return m, err
}

// ggmlRows dequantizes whole rows and refuses a value that is not finite.
func ggmlRows(t gguf.TensorInfo, raw []byte, dst []float32) error {
	if err := quant.DequantizeGGML(t.Type, raw, dst); err != nil {
		return err
	}
	return firstNonFinite(dst, int(t.Dims[0]))
}

// checkFloatRows refuses a NaN or ±Inf in an unquantized tensor (a
// quantized one's scales are checked by quant.FromGGML).
func checkFloatRows(t gguf.TensorInfo, raw []byte, k int) error {
	if t.Type != gguf.TypeF32 && t.Type != gguf.TypeF16 && t.Type != gguf.TypeBF16 {
		return nil
	}
	const rows = 64
	rowBytes := int(t.Type.BlockBytes()) * k / t.Type.BlockSize()
	buf := make([]float32, rows*k)
	for r0 := 0; r0*rowBytes < len(raw); r0 += rows {
		r1 := min(r0+rows, len(raw)/rowBytes)
		if err := quant.DequantizeGGML(t.Type, raw[r0*rowBytes:r1*rowBytes], buf[:(r1-r0)*k]); err != nil {
			return err
		}
		if err := firstNonFinite(buf[:(r1-r0)*k], k); err != nil {
			return fmt.Errorf("%w (row offset %d)", err, r0)
		}
	}
	return nil
}

func firstNonFinite(v []float32, k int) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("value %v at row %d, column %d is not finite", x, i/max(k, 1), i%max(k, 1))
		}
	}
	return nil
}

// Float32 dequantizes a small tensor to f32, undoing the converter's
// transforms of A_log and kv_b_proj.
func (s *GGUFSource) Float32(name string) ([]float32, error) {
	v, err := s.float32(name)
	return v, s.named(name, err)
}

func (s *GGUFSource) float32(name string) ([]float32, error) {
	r, ok := s.refs[name]
	if !ok {
		return nil, fmt.Errorf("not a tensor of the model")
	}
	if r.vb != "" {
		return s.kvB(r)
	}
	t, raw, _, _, err := s.tensor(name)
	if err != nil {
		return nil, err
	}
	v := make([]float32, t.NumElements())
	if err := ggmlRows(t, raw, v); err != nil {
		return nil, err
	}
	if r.aLog {
		for i, a := range v {
			x, err := aLogOf(a)
			if err != nil {
				return nil, fmt.Errorf("head %d: %w", i, err)
			}
			v[i] = x
		}
	}
	return v, nil
}

// aLogOf inverts the converter's a = −exp(A_log): it returns the f32 x
// nearest log(−a) for which the KDA kernel's −f32(exp(f64(x))) is exactly
// a (the kernel then sees the file's value); if no neighbour gives a
// exactly (it always does for |a| of ordinary size), the nearest is kept.
func aLogOf(a float32) (float32, error) {
	if !(a < 0) || math.IsInf(float64(a), 0) {
		return 0, fmt.Errorf("ssm_a is %v; it holds −exp(A_log), which is negative and finite", a)
	}
	x := float32(math.Log(-float64(a)))
	back := func(x float32) float32 { return -float32(math.Exp(float64(x))) }
	if back(x) == a {
		return x, nil
	}
	for _, dir := range []float64{math.Inf(1), math.Inf(-1)} {
		y := x
		for range 4 {
			y = float32(math.Nextafter32(y, float32(dir)))
			if back(y) == a {
				return y, nil
			}
		}
	}
	return x, nil
}

// kvB rebuilds kv_b_proj [H·(dn+dv), r] from k_b [dn, r, H] (each head's
// nope rows, transposed) and v_b [r, dv, H].
func (s *GGUFSource) kvB(r ggufRef) ([]float32, error) {
	sh := s.cfg.Shapes()
	H, dn, dv, R := sh.MLAHeads, sh.QKNope, sh.VHead, sh.KVLoraRank
	read := func(name string) ([]float32, error) {
		t, _ := s.File.Tensor(name)
		raw, err := s.File.TensorData(name)
		if err != nil {
			return nil, err
		}
		v := make([]float32, t.NumElements())
		if err := ggmlRows(t, raw, v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
	kb, err := read(r.name)
	if err != nil {
		return nil, err
	}
	vb, err := read(r.vb)
	if err != nil {
		return nil, err
	}
	out := make([]float32, H*(dn+dv)*R)
	for h := range H {
		for d := range dn { // k_b[h][c][d]
			row := out[(h*(dn+dv)+d)*R:]
			for c := range R {
				row[c] = kb[(h*R+c)*dn+d]
			}
		}
		for d := range dv { // v_b[h][d][c]
			copy(out[(h*(dn+dv)+dn+d)*R:(h*(dn+dv)+dn+d+1)*R], vb[(h*dv+d)*R:])
		}
	}
	return out, nil
}

// Embedding returns an f32, f16 or bf16 table in place; a quantized table
// is read by EmbeddingGGML.
func (s *GGUFSource) Embedding(name string) (safetensors.DType, []byte, error) {
	t, raw, _, _, err := s.tensor(name)
	if err != nil {
		return "", nil, err
	}
	dt, ok := map[gguf.Type]safetensors.DType{gguf.TypeF32: safetensors.F32, gguf.TypeF16: safetensors.F16, gguf.TypeBF16: safetensors.BF16}[t.Type]
	if !ok && s.EmbedF32 {
		v := make([]float32, t.NumElements())
		if err := ggmlRows(t, raw, v); err != nil {
			return "", nil, err
		}
		return safetensors.F32, safetensors.F32Bytes(v), nil
	}
	if !ok {
		return "", nil, fmt.Errorf("stored as %s", t.Type)
	}
	if err := checkFloatRows(t, raw, int(t.Dims[0])); err != nil {
		return "", nil, err
	}
	return dt, raw, nil
}

// EmbeddingGGML returns the table's ggml type and bytes in place: rows are
// dequantized one at a time on lookup.
func (s *GGUFSource) EmbeddingGGML(name string) (gguf.Type, []byte, error) {
	t, raw, _, _, err := s.tensor(name)
	return t.Type, raw, err
}

// LoadGGUF opens a Kimi Linear GGUF file (or the first part of a split
// one) and builds the model from it. A weight group whose dtype opt leaves
// unset (or sets to AsStored) runs its matrices' ggml blocks in place, in
// their GGUF formats, from the file's mapping (GGUFSource.InPlace):
// nothing is converted, placed as opt.Weights says (weights.go: copied
// into memory when they fit, else mapped, its experts prefetched when
// routed to, so a file larger than RAM runs); with opt.Weights =
// WeightsRepack they are repacked into the panel formats instead
// (opt.GGUFRepack for the types without an exact repack). A group given a
// dtype (a preset) is requantized from the dequantized weights. The
// embedding table is read in place and dequantized row by row. In place,
// every block's scales and every float are checked once per file
// (VerifyGGUFOnce, remembered by the file's identity) unless opt.NoVerify.
// The model is refused if the memory it must keep resident (the copies,
// the budgeted caches) exceeds the available memory. Problems of the file are InputErrors naming
// it: a file of another architecture, missing or contradictory metadata,
// a missing, extra, mis-shaped or unreadable tensor, a value that is not
// finite.
func LoadGGUF(path string, opt LoadOptions) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, inputErr(fmt.Errorf("model: %w", err))
	}
	m, err := loadGGUF(f, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

func loadGGUF(f *gguf.File, opt LoadOptions) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, inputErr(err)
	}
	opt.storedDefaults()
	if err := opt.defaults(cfg); err != nil {
		return nil, err
	}
	src, err := NewGGUFSource(f, cfg, opt.Threads)
	if err != nil {
		return nil, inputErr(err)
	}
	src.Repack, src.Search, src.Imatrix = opt.GGUFRepack, opt.QuantSearch, opt.Imatrix
	src.InPlace = opt.Weights != WeightsRepack
	if src.InPlace && !opt.NoVerify {
		if err := VerifyGGUFOnce(f, opt.Threads); err != nil {
			return nil, err
		}
	}
	mem, err := src.estimate(cfg, opt)
	if err != nil {
		return nil, err
	}
	if err := checkFits(&mem, &opt, "GGUF file "+f.Path); err != nil {
		return nil, err
	}
	m, err := buildFrom(cfg, src, opt, mem)
	if err != nil || !src.InPlace {
		return m, err
	}
	m.mem.WeightsMapped = mem.WeightsMapped
	m.mapped = true
	if err := m.placeWeights(f.Path, f.Offset, opt); err != nil { // weights.go
		m.closer = nil // the caller closes f
		m.Close()
		return nil, err
	}
	m.file, m.inFile = f.Path, f.Contains // a fault there is a FaultError (forward.go)
	m.statFiles(f.Parts)
	m.startExpertCache(f.Locate, func() (blockReader, error) { return openDirect(f.Parts) }) // expertcache.go
	m.SetPrefetch(PrefetchDefault())                                                         // expert prefetch (prefetch.go)
	m.startPreload()                                                                         // the page cache warmed in the background (preload.go)
	return m, nil
}

// estimate is the memory report before loading: each tensor at the size
// it will have (Plan's list, matrices in the format their ggml type
// repacks into unless requantized); with InPlace, the file's tensor data
// mapped and only copies on the heap.
func (s *GGUFSource) estimate(cfg *arch.Config, opt LoadOptions) (MemoryReport, error) {
	r, err := EstimateMemory(cfg, opt, 0)
	if err != nil {
		return r, err
	}
	plan, err := TensorSpecs(cfg, opt)
	if err != nil {
		return r, err
	}
	r.WeightsHeap = 0
	for _, p := range plan {
		switch p.Kind {
		case Float32:
			r.WeightsHeap += 4 * p.Elements()
		case EmbeddingTable:
			if t, ok := s.File.Tensor(s.refs[p.Name].name); ok && !s.InPlace {
				r.WeightsMapped = int64(t.Size)
			}
		case Packed:
			dt, hasMin, _ := s.StoredFormat(p.Name, p.DType)
			if quant.IsGGUF(dt) {
				continue // a view (InPlace)
			}
			r.WeightsHeap += quant.Size(dt, p.N(), p.K(), hasMin)
		}
	}
	if s.InPlace {
		r.WeightsMapped = s.File.DataSize()
	}
	r.budget()
	return r, nil
}

// StoredFormat is the format Matrix(name, dt) packs into: dt, or for
// AsStored the GGUF format of its ggml type (InPlace) or the panel format
// it repacks into (GGMLTarget).
func (s *GGUFSource) StoredFormat(name string, dt kernel.DType) (kernel.DType, bool, error) {
	if dt != AsStored {
		return dt, false, nil
	}
	t, ok := s.File.Tensor(s.refs[name].name)
	if !ok {
		return "", false, fmt.Errorf("not a tensor of the model")
	}
	if gdt, ok := quant.GGUFDType(t.Type); ok && s.InPlace {
		return gdt, false, nil
	}
	f, hasMin := GGMLTarget(t.Type, s.Repack)
	return f, hasMin, nil
}

// GGMLTarget is the packed format quant.FromGGML gives a matrix of ggml
// type t under mode, found by repacking one block of ordinary values
// (every byte 0x3b: finite f16 scales, non-zero quants, scales whose
// products need more than an f16, so that a type whose exact repack
// depends on its values shows its f32 fallback). TestGGMLTarget checks
// that the golden files load as estimated.
func GGMLTarget(t gguf.Type, mode quant.GGMLRepack) (kernel.DType, bool) {
	bs := max(t.BlockSize(), 1)
	probe := bytes.Repeat([]byte{0x3b}, t.BlockBytes())
	if t == gguf.TypeMXFP4 {
		probe[0] = 120 // an ordinary exponent: scale 2^−8 (0x3b is 2^−69, beyond f16)
	}
	m, _, err := quant.FromGGML(t, probe, 1, bs, mode)
	if err != nil {
		return kernel.F32, false
	}
	return m.DType, m.HasMin
}
