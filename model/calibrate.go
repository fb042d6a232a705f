// Calibration: run prompts through the model and gather each weight
// matrix's input-channel energies (the importance matrix, imatrix.go).

package model

import (
	"fmt"

	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/kernels/norm"
)

// namedMatrix is a weight matrix of the model and the checkpoint tensor it
// is built from.
type namedMatrix struct {
	name string
	m    *quant.Matrix
}

// weightMatrices lists the matrices the forward pass multiplies whose
// format a conversion chooses — attention (KDA q/k/v/o and its gate
// projections, MLA q/kv_a/o), dense MLP, routed and shared experts,
// lm_head — with their checkpoint names, in model order (the names the
// loader reads them by; the router, always f32, is left out).
func (m *Model) weightMatrices() []namedMatrix {
	var out []namedMatrix
	add := func(name string, w *quant.Matrix) { out = append(out, namedMatrix{name, w}) }
	for l := range m.Layers {
		ly := &m.Layers[l]
		p := fmt.Sprintf("model.layers.%d.", l)
		a := p + "self_attn."
		if w := ly.KDA; w != nil {
			add(a+"q_proj.weight", w.Q)
			add(a+"k_proj.weight", w.K)
			add(a+"v_proj.weight", w.V)
			add(a+"f_a_proj.weight", w.FA)
			add(a+"f_b_proj.weight", w.FB)
			add(a+"b_proj.weight", w.Beta)
			add(a+"g_a_proj.weight", w.GA)
			add(a+"g_b_proj.weight", w.GB)
			add(a+"o_proj.weight", w.O)
		}
		if w := ly.MLA; w != nil {
			add(a+"q_proj.weight", w.Q)
			add(a+"kv_a_proj_with_mqa.weight", w.KVA)
			add(a+"o_proj.weight", w.O)
		}
		if f := ly.MLP; f != nil {
			add(p+"mlp.gate_proj.weight", f.Gate)
			add(p+"mlp.up_proj.weight", f.Up)
			add(p+"mlp.down_proj.weight", f.Down)
		}
		if b := ly.MoE; b != nil {
			x := p + "block_sparse_moe."
			for e := range b.Experts {
				ex := &b.Experts[e]
				ep := fmt.Sprintf("%sexperts.%d.", x, e)
				add(ep+"w1.weight", ex.Gate)
				add(ep+"w3.weight", ex.Up)
				add(ep+"w2.weight", ex.Down)
			}
			if s := b.Shared; s != nil {
				add(x+"shared_experts.gate_proj.weight", s.Gate)
				add(x+"shared_experts.up_proj.weight", s.Up)
				add(x+"shared_experts.down_proj.weight", s.Down)
			}
		}
	}
	head := "lm_head.weight"
	if m.Shapes.TiedEmbeddings {
		head = "model.embed_tokens.weight"
	}
	add(head, m.LMHead)
	return out
}

// Calibrate runs each prompt (token ids) through the model from an empty
// state, as one prefill, and gathers for every weight matrix the
// sum over the rows it multiplied of each input channel's squared
// activation, and the number of rows (a routed expert's rows are the
// tokens routed to it; lm_head's every position, as if all logits were
// computed). Sums are kept in float64 and each matrix's rows
// are added in token order, so the result does not depend on the thread
// count. progress, if set, is called after each prompt. The model is
// unchanged afterwards; Calibrate must not run beside another call on m.
func (m *Model) Calibrate(prompts [][]int32, progress func(done, total int)) (*Imatrix, error) {
	mats := m.weightMatrices()
	slot := make(map[*quant.Matrix]int, len(mats))
	for i, nm := range mats {
		slot[nm.m] = i
	}
	sums := make([][]float64, len(mats))
	rows := make([]int64, len(mats))
	for i, nm := range mats {
		sums[i] = make([]float64, nm.m.K)
	}
	add := func(i int, K int, x []float32, n int) {
		s := sums[i]
		for r := 0; r < n; r++ {
			for j, v := range x[r*K : (r+1)*K] {
				s[j] += float64(v) * float64(v)
			}
		}
		rows[i] += int64(n)
	}
	// called concurrently only for different matrices (moe.BlockOptions);
	// lm_head is fed by the hidden-state hook below instead (every
	// position, without computing every position's logits)
	m.observe = func(w *quant.Matrix, x []float32, n int) {
		if i, ok := slot[w]; ok && w != m.LMHead {
			add(i, w.K, x, n)
		}
	}
	defer func() { m.observe = nil }()
	C, L := m.Shapes.Hidden, len(m.Layers)
	head := slot[m.LMHead]
	var xn []float32
	last := func(i, _ int, h []float32) { // h [n, C] after the last layer
		if i != L {
			return
		}
		n := len(h) / C
		if cap(xn) < n*C {
			xn = make([]float32, n*C)
		}
		norm.RMSNormWith(m.rules(), xn[:n*C], h, m.Norm, float32(m.Cfg.RMSNormEps)) // lm_head's input [n, C]
		add(head, C, xn, n)
	}
	im := &Imatrix{Digest: ShapeDigest(m.Cfg), Config: configSizes(m.Cfg), Entries: map[string]*ImatrixEntry{}}
	for p, ids := range prompts {
		st := m.NewState(0)
		_, err := m.PrefillWith(st, ids, PrefillOptions{Hidden: last})
		st.Close()
		if err != nil {
			return nil, fmt.Errorf("model: calibration prompt %d: %w", p+1, err)
		}
		im.Prompts++
		im.Tokens += int64(len(ids))
		if progress != nil {
			progress(p+1, len(prompts))
		}
	}
	for i, nm := range mats {
		if rows[i] == 0 {
			im.Unseen = append(im.Unseen, nm.name)
			continue
		}
		im.Entries[nm.name] = &ImatrixEntry{Sum: sums[i], Rows: rows[i]}
	}
	return im, nil
}
