package arch

import "slices"

// Kind is the token mixer of a decoder layer.
type Kind uint8

const (
	// KindInvalid is returned for a layer index out of range, or one that a
	// (not validated) config lists in neither or both layer lists.
	KindInvalid Kind = iota
	// KDA is Kimi Delta Attention, the gated linear-attention recurrence.
	KDA
	// MLA is Multi-head Latent Attention (full softmax attention over a
	// compressed cache), listed in full_attn_layers.
	MLA
)

// String returns "kda", "mla" or "invalid".
func (k Kind) String() string {
	switch k {
	case KDA:
		return "kda"
	case MLA:
		return "mla"
	}
	return "invalid"
}

// LayerKind returns the mixer of layer l (0-based): KDA when l+1 is in
// linear_attn_config.kda_layers, MLA when l+1 is in full_attn_layers.
func (c *Config) LayerKind(l int) Kind {
	if l < 0 || l >= c.NumHiddenLayers {
		return KindInvalid
	}
	kda := slices.Contains(c.LinearAttn.KDALayers, l+1)
	mla := slices.Contains(c.LinearAttn.FullAttnLayers, l+1)
	switch {
	case kda && !mla:
		return KDA
	case mla && !kda:
		return MLA
	}
	return KindInvalid
}

// IsMoE reports whether layer l (0-based) has a mixture-of-experts block
// rather than a dense MLP: num_experts is set, l ≥ first_k_dense_replace and
// l % moe_layer_freq == 0.
func (c *Config) IsMoE(l int) bool {
	return l >= 0 && l < c.NumHiddenLayers && c.NumExperts > 0 &&
		l >= c.FirstKDenseReplace && c.MoELayerFreq > 0 && l%c.MoELayerFreq == 0
}

// NumKDALayers returns how many layers are KDA layers.
func (c *Config) NumKDALayers() int {
	return c.countKind(c.LinearAttn.KDALayers, c.LinearAttn.FullAttnLayers)
}

// NumMLALayers returns how many layers are MLA layers.
func (c *Config) NumMLALayers() int {
	return c.countKind(c.LinearAttn.FullAttnLayers, c.LinearAttn.KDALayers)
}

// countKind counts the layers 1..num_hidden_layers that are in own and not
// in other, as LayerKind classifies them. It costs O(len(own)+len(other)).
func (c *Config) countKind(own, other []int) int {
	exclude := make(map[int]bool, len(other))
	for _, x := range other {
		exclude[x] = true
	}
	seen := make(map[int]bool, len(own))
	n := 0
	for _, x := range own {
		if x >= 1 && x <= c.NumHiddenLayers && !seen[x] && !exclude[x] {
			seen[x] = true
			n++
		}
	}
	return n
}

// NumMoELayers returns how many layers have a mixture-of-experts block.
func (c *Config) NumMoELayers() int {
	L, f := c.NumHiddenLayers, c.MoELayerFreq
	if c.NumExperts <= 0 || f <= 0 || L <= 0 {
		return 0
	}
	first := max(c.FirstKDenseReplace, 0)
	first = (first + f - 1) / f * f // the first multiple of f at or after it
	if first > L-1 {
		return 0
	}
	return (L-1-first)/f + 1
}

// NumDenseLayers returns how many layers have a dense MLP.
func (c *Config) NumDenseLayers() int {
	return max(c.NumHiddenLayers, 0) - c.NumMoELayers()
}
