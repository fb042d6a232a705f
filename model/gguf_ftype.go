// llama.cpp's file types and llama-quantize's choice of each tensor's type
// in a kimi-linear file (krun synth writes the same file).

package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
)

// GGUFFileType is one of llama.cpp's file types (enum llama_ftype), as
// llama-quantize names it on its command line.
type GGUFFileType struct {
	Name string    // "Q4_K_M"
	ID   uint32    // LLAMA_FTYPE_MOSTLY_Q4_K_M = 15: the file's general.file_type
	Base gguf.Type // llama_ftype_get_default_type: q4_K
}

// llama_ftype values (include/llama.h).
const (
	ftypeF32      = 0
	ftypeF16      = 1
	ftypeQ4_0     = 2
	ftypeQ8_0     = 7
	ftypeQ2_K     = 10
	ftypeQ3_K_S   = 11
	ftypeQ3_K_M   = 12
	ftypeQ4_K_M   = 15
	ftypeQ5_K_M   = 17
	ftypeQ6_K     = 18
	ftypeIQ4_NL   = 25
	ftypeIQ4_XS   = 30
	ftypeBF16     = 32
	ftypeMXFP4MoE = 38
)

// GGUFFileTypes are the file types krun synth writes: those whose every
// tensor type quant.FillRandomGGUF draws, each checked tensor by tensor
// against llama-quantize's own files of the golden tiny model
// (TestSynthGGUFTypesGolden).
var GGUFFileTypes = []GGUFFileType{
	{"F32", ftypeF32, gguf.TypeF32},
	{"F16", ftypeF16, gguf.TypeF16},
	{"BF16", ftypeBF16, gguf.TypeBF16},
	{"Q8_0", ftypeQ8_0, gguf.TypeQ8_0},
	{"Q6_K", ftypeQ6_K, gguf.TypeQ6_K},
	{"Q5_K_M", ftypeQ5_K_M, gguf.TypeQ5_K},
	{"Q4_K_M", ftypeQ4_K_M, gguf.TypeQ4_K},
	{"Q4_0", ftypeQ4_0, gguf.TypeQ4_0},
	{"IQ4_XS", ftypeIQ4_XS, gguf.TypeIQ4_XS},
	{"IQ4_NL", ftypeIQ4_NL, gguf.TypeIQ4_NL},
	{"Q3_K_M", ftypeQ3_K_M, gguf.TypeQ3_K},
	{"Q3_K_S", ftypeQ3_K_S, gguf.TypeQ3_K},
	{"Q2_K", ftypeQ2_K, gguf.TypeQ2_K},
	{"MXFP4_MOE", ftypeMXFP4MoE, gguf.TypeMXFP4},
}

// GGUFFileTypeNames lists GGUFFileTypes' names.
func GGUFFileTypeNames() []string {
	var n []string
	for _, t := range GGUFFileTypes {
		n = append(n, t.Name)
	}
	return n
}

// ParseGGUFFileType finds a file type by its name (any case).
func ParseGGUFFileType(name string) (GGUFFileType, error) {
	for _, t := range GGUFFileTypes {
		if strings.EqualFold(t.Name, strings.TrimSpace(name)) {
			return t, nil
		}
	}
	return GGUFFileType{}, fmt.Errorf("unknown GGUF file type %q (%s)", name, strings.Join(GGUFFileTypeNames(), ", "))
}

// GGUFTensorShape is a tensor's name and ggml dimensions (Dims[0] the row
// length).
type GGUFTensorShape struct {
	Name string
	Dims []uint64
}

// LlamaQuantTypes returns the ggml type llama-quantize gives each tensor
// of a kimi-linear file of cfg when it quantizes the converter's output
// (convert_hf_to_gguf.py, which writes f32 every tensor llama-quantize
// leaves alone) to ft without an importance matrix: a port of
// llama_tensor_get_type and llama_tensor_get_type_impl, with
// tensor_allows_quantization, tensor_get_category and
// tensor_type_fallback, in llama.cpp's src/llama-quant.cpp (commit
// 4695f001fece), for the file types of GGUFFileTypes. The result is
// indexed like ts; the rules that count tensors (attn_v's) visit them in
// llama-quantize's order (GGUFTensorLess), whatever ts's. In short:
//
//   - 1-D tensors, names not ending in "weight" (ssm_a, ssm_dt.bias,
//     exp_probs_b.bias), "_norm.weight", ffn_gate_inp and ssm_conv1d_*
//     keep their type: f32. F32, F16 and BF16 put every other tensor in
//     that type; the quantized types start from ft.Base and adjust:
//   - output.weight: q8_0 for MXFP4_MOE, Q8_0 and where the row length is
//     not a multiple of ft.Base's block, else q6_K; token_embd.weight
//     ft.Base (q8_0 for MXFP4_MOE);
//   - MXFP4_MOE: every 3-D tensor mxfp4 (the routed experts, and MLA's
//     attn_k_b and attn_v_b: [dn, r, H] and [r, dv, H]), the rest q8_0;
//   - attn_v (KDA's v_proj; MLA has none), in file order i of n: Q2_K
//     q3_K (q4_K if GQA ≥ 4), Q3_K_M q5_K for the first 2 and q4_K after,
//     IQ4_* q5_K if GQA ≥ 4, Q4_K_M and Q5_K_M q6_K where use_more_bits(i,
//     n); q8_0 with exactly 8 experts (the same for attn_k). GQA is layer
//     0's head count over its KV head count: 0 for a KDA layer 0;
//   - ffn_down, ffn_down_exps, ffn_down_shexp of layer l of L: Q2_K q3_K,
//     Q3_K_M q5_K for l < L/16 else q4_K, Q4_K_M and Q5_K_M q6_K where
//     use_more_bits(l, L), IQ4_* q5_K for l < L/8;
//   - attn_output: Q2_K q3_K, Q3_K_M q4_K; q5_K with exactly 8 experts
//     for Q2_K, Q3_K_S, Q3_K_M, Q4_K_M, IQ4_NL, IQ4_XS;
//   - then a row length that is not a multiple of the type's block falls
//     back: q2_K, q3_K → q4_0, q4_K → q5_0, q5_K → q5_1, q6_K → q8_0,
//     iq4_xs → iq4_nl (f16 if still not a multiple of 32).
//
// use_more_bits(i, n) is i < n/8 || i ≥ 7n/8 || (i − n/8) % 3 == 2.
func LlamaQuantTypes(ft GGUFFileType, cfg *arch.Config, ts []GGUFTensorShape) ([]gguf.Type, error) {
	if _, err := ParseGGUFFileType(ft.Name); err != nil {
		return nil, err
	}
	q := &quantState{ft: ft.ID, layers: cfg.NumHiddenLayers, experts: cfg.NumExperts, tied: true}
	if cfg.LayerKind(0) == arch.MLA {
		q.gqa = cfg.NumAttentionHeads // the converter's head_count_kv is 1 for MLA
	}
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return GGUFTensorCompare(ts[a].Name, ts[b].Name) })
	// init_quantize_state_counters
	for _, t := range ts {
		c := tensorCategory(t.Name)
		if c.attnVLike() {
			q.nAttnV++
		}
		if c == catOutput {
			q.tied = false
		}
	}
	out := make([]gguf.Type, len(ts))
	for _, i := range order {
		t := ts[i]
		if !allowsQuantization(t.Name, t.Dims) {
			out[i] = gguf.TypeF32
			continue
		}
		typ := ft.Base
		if typ.IsQuantized() {
			var err error
			if typ, err = q.tensorType(typ, t); err != nil {
				return nil, err
			}
			if typ, err = typeFallback(t, typ); err != nil {
				return nil, err
			}
		}
		out[i] = typ
	}
	return out, nil
}

// GGUFTensorCompare orders tensor names as llama.cpp's model loader does
// (weight_name_comparer), the order llama-quantize writes them in: the
// tensors outside blocks first, then block by block (blk.N by N), each
// group by name.
func GGUFTensorCompare(a, b string) int {
	return cmp.Or(cmp.Compare(blockOf(a), blockOf(b)), strings.Compare(a, b))
}

// blockOf is N of a "blk.N." name, or −1.
func blockOf(name string) int {
	l := -1
	fmt.Sscanf(name, "blk.%d.", &l)
	return l
}

// tensorCat is llama-quant.cpp's tensor_category.
type tensorCat int

const (
	catOther tensorCat = iota
	catTokenEmbd
	catAttnQ
	catAttnV
	catAttnK
	catAttnQKV
	catAttnKVB
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
	catOutput
)

func (c tensorCat) attnVLike() bool { return c == catAttnV || c == catAttnQKV || c == catAttnKVB }

// tensorCategory is tensor_get_category.
func tensorCategory(name string) tensorCat {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	}
	for _, c := range []struct {
		sub string
		cat tensorCat
	}{
		{"attn_qkv.weight", catAttnQKV}, {"attn_kv_b.weight", catAttnKVB}, {"attn_v.weight", catAttnV},
		{"attn_k.weight", catAttnK}, {"attn_q.weight", catAttnQ}, {"attn_output.weight", catAttnOutput},
		{"ffn_up", catFFNUp}, {"ffn_gate", catFFNGate}, {"ffn_down", catFFNDown},
	} {
		if strings.Contains(name, c.sub) {
			return c.cat
		}
	}
	return catOther
}

// noQuantize are the name parts tensor_allows_quantization refuses (those
// that concern kimi-linear: ffn_gate_inp, ssm_conv1d; the rest for
// completeness).
var noQuantize = []string{
	"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
	"ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
	"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight",
	"time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
	"time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
	"time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_",
	".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
}

// allowsQuantization is tensor_allows_quantization: tensors of 2 or more
// dimensions (ggml_n_dims: trailing 1s do not count) whose name ends in
// "weight", but norms and the noQuantize names.
func allowsQuantization(name string, dims []uint64) bool {
	if len(trimOnes(dims)) < 2 || !strings.HasSuffix(name, "weight") ||
		name == "position_embd.weight" || name == "token_types.weight" {
		return false
	}
	for _, s := range noQuantize {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// quantState is quantize_state_impl: the model's hyperparameters and the
// counters the rules keep.
type quantState struct {
	ft                    uint32
	layers, experts, gqa  int
	tied                  bool // no output.weight: token_embd is the output too
	nAttnV, iAttnV        int
	iFFNDown, iFFNGate    int
	iFFNUp                int
	hasImatrix, falconArc bool // always false here (kept to read like the C)
}

func useMoreBits(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }

// layerInfo is layer_info: with experts the layer is parsed from the name.
func (q *quantState) layerInfo(counter int, name string) (int, int, error) {
	if max(1, q.experts) > 1 {
		l := blockOf(name)
		if l < 0 {
			return 0, 0, fmt.Errorf("model: failed to determine the layer of tensor %s", name)
		}
		if l >= q.layers {
			return 0, 0, fmt.Errorf("model: bad layer %d for tensor %s: must be in [0, %d)", l, name, q.layers)
		}
		return l, q.layers, nil
	}
	return counter, q.layers, nil
}

// tensorType is llama_tensor_get_type_impl for the file types of
// GGUFFileTypes (the IQ1/IQ2/IQ3 and TQ branches left out: no such type
// is offered).
func (q *quantState) tensorType(typ gguf.Type, t GGUFTensorShape) (gguf.Type, error) {
	ft := q.ft
	cat := tensorCategory(t.Name)
	is := func(fts ...uint32) bool { return slices.Contains(fts, ft) }
	switch {
	case cat == catOutput || (q.tied && cat == catTokenEmbd):
		switch {
		case ft == ftypeMXFP4MoE:
			typ = gguf.TypeQ8_0
		case t.Dims[0]%uint64(typ.BlockSize()) != 0:
			typ = gguf.TypeQ8_0
		case typ != gguf.TypeQ8_0:
			typ = gguf.TypeQ6_K
		}
	case ft == ftypeMXFP4MoE:
		typ = gguf.TypeQ8_0
		if len(t.Dims) > 2 && t.Dims[2] > 1 {
			typ = gguf.TypeMXFP4
		}
	case cat == catTokenEmbd:
		// only the IQ1-IQ3 and TQ types change it
	case cat.attnVLike():
		switch {
		case ft == ftypeQ2_K:
			typ = gguf.TypeQ3_K
			if q.gqa >= 4 {
				typ = gguf.TypeQ4_K
			}
		case ft == ftypeQ3_K_M:
			typ = gguf.TypeQ4_K
			if q.iAttnV < 2 {
				typ = gguf.TypeQ5_K
			}
		case is(ftypeIQ4_NL, ftypeIQ4_XS) && q.gqa >= 4:
			typ = gguf.TypeQ5_K
		case is(ftypeQ4_K_M, ftypeQ5_K_M) && useMoreBits(q.iAttnV, q.nAttnV):
			typ = gguf.TypeQ6_K
		}
		if q.experts == 8 {
			typ = gguf.TypeQ8_0
		}
		q.iAttnV++
	case cat == catAttnK:
		if q.experts == 8 {
			typ = gguf.TypeQ8_0
		}
	case cat == catAttnQ:
		// only IQ3_XS and IQ3_XXS change it
	case cat == catFFNDown:
		l, n, err := q.layerInfo(q.iFFNDown, t.Name)
		if err != nil {
			return 0, err
		}
		switch {
		case ft == ftypeQ2_K:
			typ = gguf.TypeQ3_K
		case ft == ftypeQ3_K_M:
			switch {
			case l < n/16:
				typ = gguf.TypeQ5_K
			case !q.falconArc || useMoreBits(l, n):
				typ = gguf.TypeQ4_K
			default:
				typ = gguf.TypeQ3_K
			}
		case ft == ftypeQ4_K_M:
			if useMoreBits(l, n) {
				typ = gguf.TypeQ6_K
			}
		case l < n/8 && is(ftypeIQ4_NL, ftypeIQ4_XS) && !q.hasImatrix:
			typ = gguf.TypeQ5_K
		case ft == ftypeQ5_K_M && useMoreBits(l, n):
			typ = gguf.TypeQ6_K
		}
		q.iFFNDown++
	case cat == catAttnOutput:
		if q.experts == 8 {
			if is(ftypeQ2_K, ftypeQ3_K_S, ftypeQ3_K_M, ftypeIQ4_NL, ftypeQ4_K_M, ftypeIQ4_XS) {
				typ = gguf.TypeQ5_K
			}
		} else {
			switch ft {
			case ftypeQ2_K:
				typ = gguf.TypeQ3_K
			case ftypeQ3_K_M:
				typ = gguf.TypeQ4_K
			}
		}
	case cat == catAttnQKV:
		switch ft {
		case ftypeQ3_K_M:
			typ = gguf.TypeQ4_K
		case ftypeQ4_K_M:
			typ = gguf.TypeQ5_K
		case ftypeQ5_K_M:
			typ = gguf.TypeQ6_K
		}
	case cat == catFFNGate:
		if _, _, err := q.layerInfo(q.iFFNGate, t.Name); err != nil {
			return 0, err
		}
		q.iFFNGate++ // (only IQ3_XS changes the type)
	case cat == catFFNUp:
		if _, _, err := q.layerInfo(q.iFFNUp, t.Name); err != nil {
			return 0, err
		}
		q.iFFNUp++
	}
	return typ, nil
}

// typeFallback is tensor_type_fallback: a type whose block does not divide
// the row length falls back to one of 32-blocks, or f16.
func typeFallback(t GGUFTensorShape, typ gguf.Type) (gguf.Type, error) {
	ncols := t.Dims[0]
	if ncols%uint64(typ.BlockSize()) == 0 {
		return typ, nil
	}
	var fb gguf.Type
	switch typ {
	case gguf.TypeIQ1_S, gguf.TypeIQ1_M, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S, gguf.TypeIQ3_XXS, gguf.TypeIQ3_S, gguf.TypeIQ4_XS:
		fb = gguf.TypeIQ4_NL
	case gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeTQ1_0, gguf.TypeTQ2_0:
		fb = gguf.TypeQ4_0
	case gguf.TypeQ4_K:
		fb = gguf.TypeQ5_0
	case gguf.TypeQ5_K:
		fb = gguf.TypeQ5_1
	case gguf.TypeQ6_K:
		fb = gguf.TypeQ8_0
	default:
		return 0, fmt.Errorf("model: tensor %s: row length %d is not a multiple of %s's block %d, and llama-quantize has no fallback for %s",
			t.Name, ncols, typ, typ.BlockSize(), typ)
	}
	if ncols%uint64(fb.BlockSize()) != 0 {
		fb = gguf.TypeF16
	}
	return fb, nil
}
