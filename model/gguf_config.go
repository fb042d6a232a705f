package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
)

// GGUFArch is the general.architecture of Kimi Linear GGUF files
// (llama.cpp's converter writes it, and its keys are "kimi-linear.*").
const GGUFArch = "kimi-linear"

// ConfigFromGGUF rebuilds the Hugging Face config of the Kimi Linear model
// in a GGUF file from its metadata (the "kimi-linear.*" keys llama.cpp's
// converter writes) and, where the metadata has no key for a size, from
// the tensors' shapes (the KDA head count from ssm_a). The result is
// validated like a config.json. A file of another architecture, a missing
// or mistyped key, or sizes that contradict each other give one error
// naming the file and the key.
//
// The converter writes attention.head_count_kv as one entry per layer,
// 0 for a KDA layer and the MLA head count otherwise: that is the layer
// pattern. Settings the format does not record are those of every Kimi
// Linear release, as llama.cpp assumes too: no RoPE in MLA
// (mla_use_nope), sigmoid routing with renormalised top-k weights, one
// expert group unless expert_group_count says otherwise.
func ConfigFromGGUF(f *gguf.File) (*arch.Config, error) {
	md := f.Metadata
	a, err := md.String("general.architecture")
	if err != nil {
		return nil, err
	}
	if a != GGUFArch {
		return nil, fmt.Errorf("model: %s: general.architecture is %q, not %q: not a Kimi Linear file", f.Path, a, GGUFArch)
	}
	r := ggufReader{md: md, path: f.Path}
	key := func(k string) string { return GGUFArch + "." + k }
	c := &arch.Config{
		Source:                  f.Path + " (GGUF metadata)",
		ModelType:               arch.ModelType,
		Architectures:           []string{arch.Architecture},
		HiddenAct:               "silu",
		MLAUseNope:              true,
		MoERouterActivationFunc: "sigmoid",
		MoERenormalize:          true,
		MoELayerFreq:            1,
		UseGroupedTopK:          true,
		NumExpertGroup:          1,
		TopKGroup:               1,
		RoutedScalingFactor:     1,
	}
	c.NumHiddenLayers = r.int(key("block_count"))
	if n := c.NumHiddenLayers; n > len(f.Tensors) { // checked before the per-layer keys allocate from it
		r.fail(key("block_count"), fmt.Sprintf("is %d, but the file holds %d tensors (every layer has its own)", n, len(f.Tensors)))
		c.NumHiddenLayers = 0
	}
	c.HiddenSize = r.int(key("embedding_length"))
	c.IntermediateSize = r.int(key("feed_forward_length"))
	c.NumAttentionHeads = r.int(key("attention.head_count"))
	c.NumKeyValueHeads = c.NumAttentionHeads
	c.RMSNormEps = r.float(key("attention.layer_norm_rms_epsilon"))
	c.KVLoraRank = r.int(key("attention.kv_lora_rank"))
	c.QKRopeHeadDim = r.int(key("rope.dimension_count"))
	c.QKNopeHeadDim = r.int(key("attention.key_length_mla")) - c.QKRopeHeadDim
	c.VHeadDim = r.int(key("attention.value_length_mla"))
	c.LinearAttn.HeadDim = r.int(key("kda.head_dim"))
	c.LinearAttn.ShortConvKernelSize = r.int(key("ssm.conv_kernel"))
	if md.Has(key("attention.q_lora_rank")) {
		if q := r.int(key("attention.q_lora_rank")); q != 0 {
			r.fail(key("attention.q_lora_rank"), fmt.Sprintf("is %d: a query LoRA is not Kimi Linear", q))
		}
	}
	if md.Has(key("expert_count")) {
		c.NumExperts = r.int(key("expert_count"))
		c.NumExpertsPerToken = r.int(key("expert_used_count"))
		c.MoEIntermediateSize = r.int(key("expert_feed_forward_length"))
		c.NumSharedExperts = r.optInt(key("expert_shared_count"), 0)
		c.FirstKDenseReplace = r.optInt(key("leading_dense_block_count"), 0)
		c.NumExpertGroup = r.optInt(key("expert_group_count"), 1)
		c.TopKGroup = r.optInt(key("expert_group_used_count"), 1)
		if md.Has(key("expert_weights_scale")) {
			c.RoutedScalingFactor = r.float(key("expert_weights_scale"))
		}
		if md.Has(key("expert_weights_norm")) {
			c.MoERenormalize = r.bool(key("expert_weights_norm"))
		}
		if md.Has(key("expert_gating_func")) {
			// llama_expert_gating_func_type: 1 softmax, 2 sigmoid
			if g := r.int(key("expert_gating_func")); g != 2 {
				r.fail(key("expert_gating_func"), fmt.Sprintf("is %d; Kimi Linear routes with sigmoid (2)", g))
			}
		}
	}
	if md.Has(key("context_length")) {
		c.ModelMaxLength = r.int(key("context_length"))
	}
	if md.Has(key("rope.freq_base")) {
		c.RopeTheta = r.float(key("rope.freq_base"))
	}
	// the layer pattern
	kv := r.perLayer(key("attention.head_count_kv"), c.NumHiddenLayers)
	for l, n := range kv {
		if n == 0 {
			c.LinearAttn.KDALayers = append(c.LinearAttn.KDALayers, l+1)
		} else {
			c.LinearAttn.FullAttnLayers = append(c.LinearAttn.FullAttnLayers, l+1)
		}
	}
	// the vocabulary: the key if present, else the embedding's rows
	emb, ok := f.Tensor("token_embd.weight")
	switch {
	case md.Has(key("vocab_size")):
		c.VocabSize = r.int(key("vocab_size"))
	case ok && len(emb.Dims) == 2:
		c.VocabSize = int(emb.Dims[1])
	default:
		r.fail(key("vocab_size"), "missing, and there is no 2-D token_embd.weight to read it from")
	}
	// the KDA head count: not in the metadata; ssm_a holds one value per head
	if l := firstKDA(c); l >= 0 {
		name := fmt.Sprintf("blk.%d.ssm_a", l)
		t, ok := f.Tensor(name)
		if !ok {
			r.errs = append(r.errs, fmt.Sprintf("tensor %q (the KDA head count) is missing", name))
		} else {
			c.LinearAttn.NumHeads = int(t.NumElements())
		}
	}
	c.TieWordEmbeddings = !hasTensor(f, "output.weight")
	c.BOSTokenID = r.optInt("tokenizer.ggml.bos_token_id", 0)
	c.EOSTokenID = r.optInt("tokenizer.ggml.eos_token_id", 0)
	c.PadTokenID = r.optInt("tokenizer.ggml.padding_token_id", 0)
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("model: %s: %s", f.Path, strings.Join(r.errs, "; "))
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return c, nil
}

func firstKDA(c *arch.Config) int {
	if len(c.LinearAttn.KDALayers) == 0 {
		return -1
	}
	return c.LinearAttn.KDALayers[0] - 1
}

func hasTensor(f *gguf.File, name string) bool { _, ok := f.Tensor(name); return ok }

// ggufReader collects metadata problems (every one is reported).
type ggufReader struct {
	md   *gguf.Metadata
	path string
	errs []string
}

func (r *ggufReader) fail(key, msg string) {
	r.errs = append(r.errs, fmt.Sprintf("metadata key %q %s", key, msg))
}

// err records a getter's error, without the file name (the caller adds it).
func (r *ggufReader) err(key string, err error) {
	var ge *gguf.Error
	if errors.As(err, &ge) {
		r.fail(key, ge.Msg)
		return
	}
	r.fail(key, err.Error())
}

// int reads a non-negative integer key that fits an int32 (every size of
// the model does).
func (r *ggufReader) int(key string) int {
	u, err := r.md.Uint(key)
	if err != nil {
		r.err(key, err)
		return 0
	}
	if u > 1<<31-1 {
		r.fail(key, fmt.Sprintf("is %d, too large", u))
		return 0
	}
	return int(u)
}

func (r *ggufReader) optInt(key string, def int) int {
	if !r.md.Has(key) {
		return def
	}
	return r.int(key)
}

// float reads a float key; a float32 value becomes the shortest decimal
// that rounds to it (1e-5, not 9.99999974e-06: the config.json value the
// converter read), which the engine rounds back to the same float32.
func (r *ggufReader) float(key string) float64 {
	v, err := r.md.Float(key)
	if err != nil {
		r.err(key, err)
		return 0
	}
	if raw, _ := r.md.Get(key); raw.Type == gguf.ValueFloat32 {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', -1, 32), 64)
	}
	return v
}

func (r *ggufReader) bool(key string) bool {
	v, err := r.md.Bool(key)
	if err != nil {
		r.err(key, err)
	}
	return v
}

// perLayer reads a key that is either one integer for every layer or an
// array of one per layer.
func (r *ggufReader) perLayer(key string, layers int) []int {
	v, ok := r.md.Get(key)
	if !ok {
		r.fail(key, "missing (it gives the layer pattern: 0 for a KDA layer)")
		return nil
	}
	out := make([]int, layers)
	if a, ok := v.AsArray(); ok {
		xs, ok := a.Ints()
		if !ok || len(xs) != layers {
			r.fail(key, fmt.Sprintf("is %s; want %d integers, one per layer", v, layers))
			return nil
		}
		for i, x := range xs {
			if x < 0 || x > 1<<20 {
				r.fail(key, fmt.Sprintf("entry %d is %d", i, x))
				return nil
			}
			out[i] = int(x)
		}
		return out
	}
	n := r.int(key)
	for i := range out {
		out[i] = n
	}
	return out
}
