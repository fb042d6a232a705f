package arch

import (
	"math"
	"math/bits"
)

// ParamCount breaks the model's parameters down by part. Mixer counts include
// the mixer's own norms (KDA o_norm, MLA kv_a_layernorm), convolutions,
// A_log and dt_bias; Norms counts the two per-layer RMSNorms and the final
// norm. For the 48B model: Total 49,122,681,728, ActivePerToken 3,106,972,544.
type ParamCount struct {
	Embedding int64 // embed_tokens [377,487,360]
	LMHead    int64 // lm_head; 0 when tied to the embedding [377,487,360]

	KDAPerLayer int64 // one KDA mixer [39,514,272]
	KDAMixers   int64 // all KDA mixers [790,285,440]
	MLAPerLayer int64 // one MLA mixer [29,114,880]
	MLAMixers   int64 // all MLA mixers [203,804,160]

	DenseMLP      int64 // all dense MLPs [63,700,992]
	Routers       int64 // router weight + e_score_correction_bias, all MoE layers [15,342,080]
	SharedExperts int64 // all shared experts [184,025,088]
	PerExpert     int64 // one routed expert (w1, w2, w3) [7,077,888]
	RoutedExperts int64 // all routed experts of all MoE layers [47,110,422,528]
	Norms         int64 // input/post-attention norms of every layer + model.norm [126,720]

	Total int64 // every parameter in the checkpoint [49,122,681,728]

	// ActivePerToken counts the parameters one token's forward pass uses:
	// everything except the embedding table (of which one row is read) and
	// the routed experts that are not chosen, i.e. top-k experts per MoE
	// layer. lm_head is included, also when it is tied to the embedding.
	ActivePerToken int64 // [3,106,972,544]
}

// ParamCount counts the parameters of the model c describes. c should be
// valid (see Validate); a valid config never overflows.
func (c *Config) ParamCount() ParamCount {
	p, _ := c.paramCount()
	return p
}

// ActiveParamsPerToken returns the parameters one decoded token uses (see
// ParamCount.ActivePerToken).
func (c *Config) ActiveParamsPerToken() int64 {
	return c.ParamCount().ActivePerToken
}

// paramCount counts the parameters; ok is false when a count overflows int64.
func (c *Config) paramCount() (p ParamCount, ok bool) {
	s := c.Shapes()
	var k counter
	C, V := int64(s.Hidden), int64(s.Vocab)

	p.Embedding = k.mul(V, C)
	if !s.TiedEmbeddings {
		p.LMHead = p.Embedding
	}

	H, D, P, W := int64(s.KDAHeads), int64(s.KDAHeadDim), int64(s.KDAProj), int64(s.ConvKernel)
	p.KDAPerLayer = k.add(
		k.mul(3, P, C), // q_proj, k_proj, v_proj
		k.mul(3, P, W), // q/k/v_conv1d
		k.mul(D, C),    // f_a_proj
		k.mul(P, D),    // f_b_proj
		H,              // A_log
		P,              // dt_bias
		k.mul(H, C),    // b_proj
		k.mul(D, C),    // g_a_proj
		k.mul(P, D),    // g_b_proj
		D,              // o_norm
		k.mul(C, P),    // o_proj
	)
	p.KDAMixers = k.mul(p.KDAPerLayer, int64(s.NumKDALayers))

	R := int64(s.KVLoraRank)
	p.MLAPerLayer = k.add(
		k.mul(int64(s.MLAQDim), C),   // q_proj
		k.mul(int64(s.MLAKVADim), C), // kv_a_proj_with_mqa
		R,                            // kv_a_layernorm
		k.mul(int64(s.MLAKVBDim), R), // kv_b_proj
		k.mul(C, int64(s.MLAODim)),   // o_proj
	)
	p.MLAMixers = k.mul(p.MLAPerLayer, int64(s.NumMLALayers))

	p.DenseMLP = k.mul(3, C, int64(s.DenseInter), int64(s.NumDenseLayers))

	E, M := int64(s.Experts), int64(s.NumMoELayers)
	p.Routers = k.mul(k.add(k.mul(E, C), E), M)
	p.SharedExperts = k.mul(3, C, int64(s.SharedInter), M)
	p.PerExpert = k.mul(3, C, int64(s.ExpertInter))
	p.RoutedExperts = k.mul(p.PerExpert, E, M)

	p.Norms = k.mul(C, k.add(k.mul(2, int64(s.Layers)), 1))

	p.Total = k.add(p.Embedding, p.LMHead, p.KDAMixers, p.MLAMixers, p.DenseMLP,
		p.Routers, p.SharedExperts, p.RoutedExperts, p.Norms)

	lmHead := k.mul(V, C) // computed per token even when tied
	activeRouted := k.mul(p.PerExpert, int64(s.TopK), M)
	p.ActivePerToken = k.add(p.Total, -p.Embedding, -p.LMHead, lmHead, -p.RoutedExperts, activeRouted)
	return p, !k.overflow
}

// KDAStateBytesPerSeq returns the bytes of KDA state one sequence carries
// across all KDA layers, in float32: the recurrent state (H·D·D values per
// layer) and the short-convolution tails (the last W−1 pre-conv q, k and v
// projections, 3·H·D·(W−1) values per layer). It does not depend on the
// context length. For the 48B model: 20·(524,288 + 36,864)·4 = 44,892,160.
func (c *Config) KDAStateBytesPerSeq() int64 {
	n, _ := c.kdaStateBytes()
	return n
}

// kdaStateBytes computes KDAStateBytesPerSeq; ok is false on overflow.
func (c *Config) kdaStateBytes() (n int64, ok bool) {
	s := c.Shapes()
	var k counter
	n = k.mul(int64(s.NumKDALayers), k.add(int64(s.KDAStateValues), int64(s.KDAConvTailValues)), 4)
	return n, !k.overflow
}

// counter does int64 arithmetic that records overflow instead of wrapping.
type counter struct{ overflow bool }

// mul returns the product of xs, or 0 (recording overflow) if it does not
// fit in an int64 or a factor is negative.
func (k *counter) mul(xs ...int64) int64 {
	r := uint64(1)
	for _, x := range xs {
		if x < 0 {
			k.overflow = true
			return 0
		}
		hi, lo := bits.Mul64(r, uint64(x))
		if hi != 0 || lo > math.MaxInt64 {
			k.overflow = true
			return 0
		}
		r = lo
	}
	return int64(r)
}

// add returns the sum of xs, or 0 (recording overflow) if it does not fit.
func (k *counter) add(xs ...int64) int64 {
	var s int64
	for _, x := range xs {
		if (x > 0 && s > math.MaxInt64-x) || (x < 0 && s < math.MinInt64-x) {
			k.overflow = true
			return 0
		}
		s += x
	}
	return s
}
