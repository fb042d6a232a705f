package arch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Sanity limits. Real models are far below them; they keep a corrupt or
// hostile config from making the helpers allocate or loop without bound.
const (
	maxDim     = 1 << 20 // any single width (vocabulary, hidden size, heads, ...)
	maxLayers  = 1 << 12 // num_hidden_layers
	maxExperts = 1 << 16 // num_experts
	maxTensors = 1 << 24 // checkpoint tensors implied by the config
)

// FieldError is one problem with one config key. Validate returns them all
// as one error (errors.As on it finds the first) whose message has one line
// per problem and names the source once, on the first.
type FieldError struct {
	Source string // the config's Source, e.g. the path of config.json
	Key    string // config.json key, nested keys joined with '.'
	Msg    string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Source, e.Key, e.Msg)
}

// validator collects FieldErrors for one config.
type validator struct {
	source string
	errs   []error
}

func (v *validator) add(key, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Source: v.source, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// size checks that val is a positive integer no larger than limit.
func (v *validator) size(key string, val, limit int) bool {
	switch {
	case val == 0:
		v.add(key, "missing, null or 0; must be a positive integer")
	case val < 0:
		v.add(key, "must be a positive integer, got %d", val)
	case val > limit:
		v.add(key, "%d is implausibly large (limit %d)", val, limit)
	default:
		return true
	}
	return false
}

// Validate checks that c describes a Kimi Linear model this package (and the
// engine) supports. It reports every problem it finds, one per line, each
// naming the config key, the first also c.Source; it returns nil when there
// is none.
//
// Unsupported variants are rejected with a message saying so: query LoRA
// (q_lora_rank set), RoPE in MLA (mla_use_nope false), softmax routing,
// multi-token-prediction layers, the MLA output gate of later Kimi models, and
// activations other than SiLU.
func (c *Config) Validate() error {
	if c == nil {
		return errors.New("arch: nil Config")
	}
	src := c.Source
	if src == "" {
		src = "config"
	}
	v := &validator{source: src}

	if c.ModelType != ModelType && !slices.Contains(c.Architectures, Architecture) {
		v.add("model_type", "got %q (architectures %q); want %q or architectures containing %q: not a Kimi Linear config",
			c.ModelType, c.Architectures, ModelType, Architecture)
	}

	// Global sizes.
	v.size("vocab_size", c.VocabSize, maxDim)
	v.size("hidden_size", c.HiddenSize, maxDim)
	layersOK := v.size("num_hidden_layers", c.NumHiddenLayers, maxLayers)
	if !(c.RMSNormEps > 0) || math.IsInf(c.RMSNormEps, 0) {
		v.add("rms_norm_eps", "must be a positive number, got %g", c.RMSNormEps)
	}
	if c.HiddenAct != "silu" {
		v.add("hidden_act", "got %q; only \"silu\" (SwiGLU MLPs) is supported", c.HiddenAct)
	}
	if c.NumNextNPredictLayers != 0 {
		v.add("num_nextn_predict_layers", "got %d; multi-token-prediction layers are not supported (Kimi Linear has 0)",
			c.NumNextNPredictLayers)
	}
	if c.VocabSize > 0 {
		for _, id := range []struct {
			key string
			val int
		}{{"bos_token_id", c.BOSTokenID}, {"eos_token_id", c.EOSTokenID}, {"pad_token_id", c.PadTokenID}} {
			if id.val < 0 || id.val >= c.VocabSize {
				v.add(id.key, "%d is outside the vocabulary 0..%d", id.val, c.VocabSize-1)
			}
		}
	}

	// Layer kinds, then the mixer sizes the layers need.
	v.layerLists(c, layersOK)
	nMLA, nMoE := 0, 0
	if layersOK {
		nMLA, nMoE = c.NumMLALayers(), c.NumMoELayers()
	}
	la := c.LinearAttn
	if !la.empty() {
		v.size("linear_attn_config.num_heads", la.NumHeads, maxDim)
		v.size("linear_attn_config.head_dim", la.HeadDim, maxDim)
		v.size("linear_attn_config.short_conv_kernel_size", la.ShortConvKernelSize, maxDim)
	}
	if nMLA > 0 {
		v.size("num_attention_heads", c.NumAttentionHeads, maxDim)
		v.size("kv_lora_rank", c.KVLoraRank, maxDim)
		v.size("qk_nope_head_dim", c.QKNopeHeadDim, maxDim)
		v.size("qk_rope_head_dim", c.QKRopeHeadDim, maxDim)
		v.size("v_head_dim", c.VHeadDim, maxDim)
	}
	if c.NumKeyValueHeads < 0 {
		v.add("num_key_value_heads", "must not be negative, got %d", c.NumKeyValueHeads)
	}
	if c.QLoraRank != nil {
		v.add("q_lora_rank", "got %d; query LoRA is not supported: Kimi Linear uses null (a plain q_proj)", *c.QLoraRank)
	}
	if !c.MLAUseNope {
		v.add("mla_use_nope", "false or missing; must be true: MLA with rotary position embeddings (RoPE) is not supported")
	}
	if c.MLAUseOutputGate {
		v.add("mla_use_output_gate", "true; the MLA output gate is not supported (Kimi Linear has none)")
	}

	// Feed-forward.
	if c.FirstKDenseReplace < 0 {
		v.add("first_k_dense_replace", "must not be negative, got %d", c.FirstKDenseReplace)
	}
	if c.MoELayerFreq < 1 {
		v.add("moe_layer_freq", "must be a positive integer, got %d", c.MoELayerFreq)
	}
	if layersOK && c.NumHiddenLayers-nMoE > 0 {
		v.size("intermediate_size", c.IntermediateSize, maxDim)
	}
	if c.NumExperts < 0 {
		v.add("num_experts", "must not be negative, got %d (use null or leave it out for no MoE)", c.NumExperts)
	}
	if c.NumExperts > 0 {
		v.validateMoE(c)
	}

	// Sizes whose products would overflow, or imply absurd checkpoints.
	if len(v.errs) == 0 {
		if _, ok := c.paramCount(); !ok {
			v.add("num_experts", "the sizes imply more than 2^63 parameters")
		} else if _, ok := c.kdaStateBytes(); !ok {
			v.add("linear_attn_config", "the sizes imply more than 2^63 bytes of KDA state")
		} else if n, ok := c.numTensors(); !ok || n > maxTensors {
			v.add("num_experts", "the sizes imply more than %d checkpoint tensors", maxTensors)
		}
	}
	if len(v.errs) == 0 {
		return nil
	}
	return problems(v.errs)
}

// problems is Validate's error: every FieldError of one config, one line
// each, the source named on the first line only ("SOURCE: key: msg", then
// "key: msg"), so that the lines joined into one do not repeat it.
type problems []error

func (p problems) Error() string {
	var b strings.Builder
	for i, err := range p {
		if i > 0 {
			b.WriteByte('\n')
		}
		first, ok0 := p[0].(*FieldError)
		if fe, ok := err.(*FieldError); ok && ok0 && i > 0 && fe.Source == first.Source {
			b.WriteString(fe.Key + ": " + fe.Msg)
		} else {
			b.WriteString(err.Error())
		}
	}
	return b.String()
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (p problems) Unwrap() []error { return p }

// validateMoE checks the mixture-of-experts keys of a config with experts.
func (v *validator) validateMoE(c *Config) {
	E := c.NumExperts
	v.size("num_experts", E, maxExperts)
	if k := c.NumExpertsPerToken; k < 1 || k > E {
		v.add("num_experts_per_token", "top-k = %d; must be between 1 and num_experts = %d", k, E)
	}
	v.size("moe_intermediate_size", c.MoEIntermediateSize, maxDim)
	if c.NumSharedExperts < 0 || c.NumSharedExperts > maxExperts {
		v.add("num_shared_experts", "must be between 0 and %d, got %d", maxExperts, c.NumSharedExperts)
	}
	if c.MoERouterActivationFunc != "sigmoid" {
		v.add("moe_router_activation_func", "got %q; only \"sigmoid\" routing is supported", c.MoERouterActivationFunc)
	}
	if f := c.RoutedScalingFactor; !(f > 0) || math.IsInf(f, 0) {
		v.add("routed_scaling_factor", "must be a positive number, got %g", f)
	}
	G, TG := c.NumExpertGroup, c.TopKGroup
	if G < 1 {
		v.add("num_expert_group", "must be a positive integer, got %d", G)
		return
	}
	if E%G != 0 {
		v.add("num_expert_group", "%d does not divide num_experts = %d", G, E)
		return
	}
	if TG < 1 || TG > G {
		v.add("topk_group", "%d; must be between 1 and num_expert_group = %d", TG, G)
		return
	}
	if c.UseGroupedTopK && G > 1 {
		if E/G < 2 {
			v.add("num_expert_group", "%d groups of %d expert; grouped top-k scores each group by its best 2 experts",
				G, E/G)
		}
		if k := c.NumExpertsPerToken; k > TG*(E/G) {
			v.add("num_experts_per_token", "top-k = %d exceeds the %d experts in the topk_group = %d groups kept",
				k, TG*(E/G), TG)
		}
	}
}

// empty reports whether linear_attn_config is absent (or all zero).
func (la LinearAttnConfig) empty() bool {
	return la.NumHeads == 0 && la.HeadDim == 0 && la.ShortConvKernelSize == 0 &&
		len(la.KDALayers) == 0 && len(la.FullAttnLayers) == 0
}

// layerLists checks linear_attn_config.kda_layers and full_attn_layers: every
// layer 1..num_hidden_layers must be in exactly one of them.
func (v *validator) layerLists(c *Config, layersOK bool) {
	la := c.LinearAttn
	if la.empty() {
		v.add("linear_attn_config", "missing or empty; Kimi Linear needs num_heads, head_dim, "+
			"short_conv_kernel_size, kda_layers and full_attn_layers")
		return
	}
	L := c.NumHiddenLayers
	lists := []struct {
		key  string
		vals []int
		seen map[int]bool
	}{
		{"linear_attn_config.kda_layers", la.KDALayers, map[int]bool{}},
		{"linear_attn_config.full_attn_layers", la.FullAttnLayers, map[int]bool{}},
	}
	for _, list := range lists {
		var bad, dup []int
		for _, x := range list.vals {
			switch {
			case x < 1 || (layersOK && x > L):
				bad = append(bad, x)
			case list.seen[x]:
				dup = append(dup, x)
			default:
				list.seen[x] = true
			}
		}
		if len(bad) > 0 {
			msg := fmt.Sprintf("%s out of range", formatInts(bad))
			if layersOK {
				msg += fmt.Sprintf(" 1..%d", L)
			}
			if slices.Contains(bad, 0) {
				msg += "; the layer lists are 1-based (layer 1 is the first layer) but this one looks 0-based"
			}
			v.add(list.key, "%s", msg)
		}
		if len(dup) > 0 {
			v.add(list.key, "layers %s listed more than once", formatInts(dup))
		}
	}
	var both []int
	for x := range lists[0].seen {
		if lists[1].seen[x] {
			both = append(both, x)
		}
	}
	if len(both) > 0 {
		slices.Sort(both)
		v.add("linear_attn_config", "layers %s (1-based) are in both kda_layers and full_attn_layers; "+
			"each layer must be in exactly one", formatInts(both))
	}
	if !layersOK {
		return
	}
	var neither []int
	for x := 1; x <= L; x++ {
		if !lists[0].seen[x] && !lists[1].seen[x] {
			neither = append(neither, x)
		}
	}
	if len(neither) > 0 {
		v.add("linear_attn_config", "layers %s (1-based) are in neither kda_layers nor full_attn_layers; "+
			"every layer 1..%d must be in exactly one", formatInts(neither), L)
	}
}

// formatInts prints a list of integers, shortened when long.
func formatInts(xs []int) string {
	const show = 12
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i == show {
			fmt.Fprintf(&b, " … (%d in all)", len(xs))
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, x)
	}
	b.WriteByte(']')
	return b.String()
}
