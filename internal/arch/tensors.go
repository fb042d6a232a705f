package arch

import "fmt"

// TensorSpec is one tensor of a Hugging Face checkpoint: its name and its
// shape (PyTorch order, e.g. [out, in] for a linear weight).
type TensorSpec struct {
	Name  string
	Shape []int64
}

// Tensors per block, as listed by TensorNames.
const (
	kdaTensors   = 15 // q/k/v_proj, q/k/v_conv1d, f_a/f_b_proj, A_log, dt_bias, b_proj, g_a/g_b_proj, o_norm, o_proj
	mlaTensors   = 5  // q_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj
	denseTensors = 3  // mlp.gate_proj, up_proj, down_proj
)

// TensorNames lists every tensor the checkpoint of c must hold, with its
// shape, in model order: model.embed_tokens.weight, then for each layer
// model.layers.{i}.input_layernorm.weight, the mixer's tensors
// (self_attn.*), post_attention_layernorm.weight and the feed-forward's
// tensors (mlp.* or block_sparse_moe.*), then model.norm.weight and
// lm_head.weight (absent when tie_word_embeddings is true). For the 48B model
// there are 20,493.
//
// Notable shapes: KDA A_log is [1, 1, H, 1], dt_bias [H·D], the conv weights
// [H·D, 1, W]; the MoE router bias gate.e_score_correction_bias is [E];
// routed experts are experts.{e}.w1/w3 [I, C] and w2 [C, I]; the shared
// experts are fused into one MLP of width I·S. c should be valid (see
// Validate).
func (c *Config) TensorNames() []TensorSpec {
	s := c.Shapes()
	n, _ := c.numTensors()
	out := make([]TensorSpec, 0, min(n, maxTensors))
	add := func(name string, shape ...int) {
		sh := make([]int64, len(shape))
		for i, d := range shape {
			sh[i] = int64(d)
		}
		out = append(out, TensorSpec{Name: name, Shape: sh})
	}
	C := s.Hidden
	add("model.embed_tokens.weight", s.Vocab, C)
	for l := range s.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", C)
		switch c.LayerKind(l) {
		case KDA:
			H, D, P, W := s.KDAHeads, s.KDAHeadDim, s.KDAProj, s.ConvKernel
			a := p + "self_attn."
			add(a+"q_proj.weight", P, C)
			add(a+"k_proj.weight", P, C)
			add(a+"v_proj.weight", P, C)
			add(a+"q_conv1d.weight", P, 1, W)
			add(a+"k_conv1d.weight", P, 1, W)
			add(a+"v_conv1d.weight", P, 1, W)
			add(a+"f_a_proj.weight", s.KDAGateRank, C)
			add(a+"f_b_proj.weight", P, s.KDAGateRank)
			add(a+"A_log", 1, 1, H, 1)
			add(a+"dt_bias", P)
			add(a+"b_proj.weight", H, C)
			add(a+"g_a_proj.weight", s.KDAGateRank, C)
			add(a+"g_b_proj.weight", P, s.KDAGateRank)
			add(a+"o_norm.weight", D)
			add(a+"o_proj.weight", C, P)
		case MLA:
			a := p + "self_attn."
			add(a+"q_proj.weight", s.MLAQDim, C)
			add(a+"kv_a_proj_with_mqa.weight", s.MLAKVADim, C)
			add(a+"kv_a_layernorm.weight", s.KVLoraRank)
			add(a+"kv_b_proj.weight", s.MLAKVBDim, s.KVLoraRank)
			add(a+"o_proj.weight", C, s.MLAODim)
		}
		add(p+"post_attention_layernorm.weight", C)
		if !c.IsMoE(l) {
			add(p+"mlp.gate_proj.weight", s.DenseInter, C)
			add(p+"mlp.up_proj.weight", s.DenseInter, C)
			add(p+"mlp.down_proj.weight", C, s.DenseInter)
			continue
		}
		m := p + "block_sparse_moe."
		add(m+"gate.weight", s.Experts, C)
		add(m+"gate.e_score_correction_bias", s.Experts)
		for e := range s.Experts {
			x := fmt.Sprintf("%sexperts.%d.", m, e)
			add(x+"w1.weight", s.ExpertInter, C)
			add(x+"w2.weight", C, s.ExpertInter)
			add(x+"w3.weight", s.ExpertInter, C)
		}
		if s.SharedInter > 0 {
			add(m+"shared_experts.gate_proj.weight", s.SharedInter, C)
			add(m+"shared_experts.up_proj.weight", s.SharedInter, C)
			add(m+"shared_experts.down_proj.weight", C, s.SharedInter)
		}
	}
	add("model.norm.weight", C)
	if !s.TiedEmbeddings {
		add("lm_head.weight", s.Vocab, C)
	}
	return out
}

// NumTensors returns len(c.TensorNames()) without building the list.
func (c *Config) NumTensors() int64 {
	n, _ := c.numTensors()
	return n
}

// numTensors counts the checkpoint tensors; ok is false on overflow.
func (c *Config) numTensors() (n int64, ok bool) {
	s := c.Shapes()
	var k counter
	moe := k.add(2, k.mul(3, int64(s.Experts))) // router weight and bias, routed experts
	if s.SharedInter > 0 {
		moe = k.add(moe, 3)
	}
	lmHead := int64(1)
	if s.TiedEmbeddings {
		lmHead = 0
	}
	n = k.add(
		2+lmHead, // embed_tokens, model.norm, lm_head
		k.mul(2, int64(s.Layers)),
		k.mul(kdaTensors, int64(s.NumKDALayers)),
		k.mul(mlaTensors, int64(s.NumMLALayers)),
		k.mul(denseTensors, int64(s.NumDenseLayers)),
		k.mul(moe, int64(s.NumMoELayers)),
	)
	return n, !k.overflow
}
