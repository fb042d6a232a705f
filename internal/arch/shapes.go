package arch

// Shapes holds the sizes a kernel needs, derived from a Config. All widths
// count elements. For the 48B model the values are given in brackets.
type Shapes struct {
	Layers int // num_hidden_layers [27]
	Hidden int // hidden_size, C [2304]
	Vocab  int // vocab_size [163840]

	NumKDALayers   int // [20]
	NumMLALayers   int // [7]
	NumMoELayers   int // [26]
	NumDenseLayers int // [1]

	// KDA layers.
	KDAHeads          int // linear_attn_config.num_heads, H [32]
	KDAHeadDim        int // linear_attn_config.head_dim, D = d_k = d_v [128]
	KDAProj           int // H·D, the width of q, k, v, the decay gate and the output gate [4096]
	KDAGateRank       int // rank of the f_a/f_b and g_a/g_b low-rank projections (= D) [128]
	ConvKernel        int // short_conv_kernel_size, W [4]
	KDAStateValues    int // H·D·D: recurrent state per layer and sequence [524288]
	KDAConvTailValues int // 3·H·D·(W−1): q/k/v conv inputs carried per layer and sequence [36864]

	// MLA layers.
	MLAHeads               int // num_attention_heads [32]
	QKNope                 int // qk_nope_head_dim, dn [128]
	QKRope                 int // qk_rope_head_dim, dr (never rotated) [64]
	QKHead                 int // dn+dr, the q/k head dim; the softmax scale is QKHead^-1/2 [192]
	VHead                  int // v_head_dim, dv [128]
	KVLoraRank             int // kv_lora_rank, r [512]
	MLAQDim                int // heads·(dn+dr), q_proj output [6144]
	MLAKVADim              int // r+dr, kv_a_proj_with_mqa output [576]
	MLAKVBDim              int // heads·(dn+dv), kv_b_proj output [8192]
	MLAODim                int // heads·dv, o_proj input [4096]
	MLACacheValuesPerToken int // r+dr: normalised latent plus k_pe, per token and MLA layer [576]

	// Feed-forward.
	Experts        int  // num_experts, 0 when there is no MoE [256]
	TopK           int  // num_experts_per_token [8]
	ExpertGroups   int  // num_expert_group [1]
	TopKGroup      int  // topk_group [1]
	SharedExperts  int  // num_shared_experts [1]
	ExpertInter    int  // moe_intermediate_size, one routed expert's width [1024]
	SharedInter    int  // moe_intermediate_size·num_shared_experts, the fused shared expert's width [1024]
	DenseInter     int  // intermediate_size, the dense MLP's width [9216]
	TiedEmbeddings bool // tie_word_embeddings: lm_head reuses the embedding table [false]
}

// Shapes derives the kernel shapes of c. c should be valid (see Validate).
func (c *Config) Shapes() Shapes {
	la := c.LinearAttn
	s := Shapes{
		Layers:         c.NumHiddenLayers,
		Hidden:         c.HiddenSize,
		Vocab:          c.VocabSize,
		NumKDALayers:   c.NumKDALayers(),
		NumMLALayers:   c.NumMLALayers(),
		NumMoELayers:   c.NumMoELayers(),
		NumDenseLayers: c.NumDenseLayers(),

		KDAHeads:    la.NumHeads,
		KDAHeadDim:  la.HeadDim,
		KDAProj:     la.NumHeads * la.HeadDim,
		KDAGateRank: la.HeadDim,
		ConvKernel:  la.ShortConvKernelSize,

		MLAHeads:               c.NumAttentionHeads,
		QKNope:                 c.QKNopeHeadDim,
		QKRope:                 c.QKRopeHeadDim,
		QKHead:                 c.QKNopeHeadDim + c.QKRopeHeadDim,
		VHead:                  c.VHeadDim,
		KVLoraRank:             c.KVLoraRank,
		MLAQDim:                c.NumAttentionHeads * (c.QKNopeHeadDim + c.QKRopeHeadDim),
		MLAKVADim:              c.KVLoraRank + c.QKRopeHeadDim,
		MLAKVBDim:              c.NumAttentionHeads * (c.QKNopeHeadDim + c.VHeadDim),
		MLAODim:                c.NumAttentionHeads * c.VHeadDim,
		MLACacheValuesPerToken: c.KVLoraRank + c.QKRopeHeadDim,

		DenseInter:     c.IntermediateSize,
		TiedEmbeddings: c.TieWordEmbeddings,
	}
	s.KDAStateValues = s.KDAProj * s.KDAHeadDim
	if s.ConvKernel > 0 {
		s.KDAConvTailValues = 3 * s.KDAProj * (s.ConvKernel - 1)
	}
	if c.NumExperts > 0 {
		s.Experts = c.NumExperts
		s.TopK = c.NumExpertsPerToken
		s.ExpertGroups = c.NumExpertGroup
		s.TopKGroup = c.TopKGroup
		s.SharedExperts = c.NumSharedExperts
		s.ExpertInter = c.MoEIntermediateSize
		s.SharedInter = c.MoEIntermediateSize * c.NumSharedExperts
	}
	return s
}

// Linear is one distinct linear projection of the model, y = W·x with W of
// shape [N, K] (PyTorch [out, in]); none has a bias.
type Linear struct {
	// Name identifies the projection: "kda.q_proj", "mla.kv_b_proj",
	// "dense.gate_proj", "moe.gate" (the router), "moe.expert.w1",
	// "moe.shared.down_proj", "lm_head", ...
	Name string
	N    int // output features (rows of W)
	K    int // input features (columns of W)
	// Uses is how many times the projection is applied per token in one
	// forward pass of the whole model: the number of layers that have it,
	// times top-k for routed experts. MLA's kv_b_proj is counted once per MLA
	// layer (the prefill form; the absorbed decode form applies it per head
	// to the query and the attention output instead).
	Uses int
	// Stored is how many matrices of this shape the checkpoint holds: the
	// number of layers that have it, times num_experts for routed experts;
	// 0 for a tied lm_head.
	Stored int
}

// Params returns N·K, the parameters of one matrix.
func (l Linear) Params() int64 { return int64(l.N) * int64(l.K) }

// Linears lists every distinct linear projection of the model, grouped by
// block: KDA, MLA, dense MLP, MoE (router, routed experts, shared experts),
// lm_head. Blocks the model does not use are left out.
func (s Shapes) Linears() []Linear {
	var out []Linear
	add := func(name string, n, k, uses, stored int) {
		out = append(out, Linear{Name: name, N: n, K: k, Uses: uses, Stored: stored})
	}
	C := s.Hidden
	if L := s.NumKDALayers; L > 0 {
		P, R := s.KDAProj, s.KDAGateRank
		add("kda.q_proj", P, C, L, L)
		add("kda.k_proj", P, C, L, L)
		add("kda.v_proj", P, C, L, L)
		add("kda.f_a_proj", R, C, L, L)
		add("kda.f_b_proj", P, R, L, L)
		add("kda.b_proj", s.KDAHeads, C, L, L)
		add("kda.g_a_proj", R, C, L, L)
		add("kda.g_b_proj", P, R, L, L)
		add("kda.o_proj", C, P, L, L)
	}
	if L := s.NumMLALayers; L > 0 {
		add("mla.q_proj", s.MLAQDim, C, L, L)
		add("mla.kv_a_proj_with_mqa", s.MLAKVADim, C, L, L)
		add("mla.kv_b_proj", s.MLAKVBDim, s.KVLoraRank, L, L)
		add("mla.o_proj", C, s.MLAODim, L, L)
	}
	if L := s.NumDenseLayers; L > 0 {
		add("dense.gate_proj", s.DenseInter, C, L, L)
		add("dense.up_proj", s.DenseInter, C, L, L)
		add("dense.down_proj", C, s.DenseInter, L, L)
	}
	if L := s.NumMoELayers; L > 0 {
		add("moe.gate", s.Experts, C, L, L)
		I, used, stored := s.ExpertInter, s.TopK*L, s.Experts*L
		add("moe.expert.w1", I, C, used, stored)
		add("moe.expert.w3", I, C, used, stored)
		add("moe.expert.w2", C, I, used, stored)
		if s.SharedInter > 0 {
			add("moe.shared.gate_proj", s.SharedInter, C, L, L)
			add("moe.shared.up_proj", s.SharedInter, C, L, L)
			add("moe.shared.down_proj", C, s.SharedInter, L, L)
		}
	}
	lmStored := 1
	if s.TiedEmbeddings {
		lmStored = 0
	}
	add("lm_head", s.Vocab, C, 1, lmStored)
	return out
}

// Linear returns the projection called name from Linears.
func (s Shapes) Linear(name string) (Linear, bool) {
	for _, l := range s.Linears() {
		if l.Name == name {
			return l, true
		}
	}
	return Linear{}, false
}
