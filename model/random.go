package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/kernels/kda"
	"github.com/ktune/ktune/kernels/mla"
	"github.com/ktune/ktune/kernels/moe"
)

// SyntheticConfig is the 48B model's config cut to layers decoder layers
// (1 ≤ layers ≤ 27): every width is Kimi Linear's (hidden 2304, 32 heads,
// 256 experts of 1024, vocabulary 163840); layer 0 keeps its dense MLP,
// the layers keep Kimi's 3:1 KDA/MLA pattern (MLA at 4, 8, …, 24 counting
// from 1) and the last one is MLA: for 27 layers, the 48B config itself.
func SyntheticConfig(layers int) (*arch.Config, error) {
	if layers < 1 || layers > 27 {
		return nil, fmt.Errorf("model: synthetic model of %d layers; want 1..27", layers)
	}
	c := arch.Kimi48B()
	mla := map[int]bool{}
	for _, l := range c.LinearAttn.FullAttnLayers {
		mla[l] = true
	}
	c.Source = fmt.Sprintf("synthetic Kimi Linear (%d layers at 48B widths)", layers)
	c.NumHiddenLayers = layers
	c.LinearAttn.KDALayers, c.LinearAttn.FullAttnLayers = nil, nil
	for l := 1; l <= layers; l++ {
		if l == layers && layers > 1 || mla[l] {
			c.LinearAttn.FullAttnLayers = append(c.LinearAttn.FullAttnLayers, l)
		} else {
			c.LinearAttn.KDALayers = append(c.LinearAttn.KDALayers, l)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Random builds a model of cfg with random weights (for benchmarks; its
// outputs mean nothing): packed matrices are filled directly with random
// quantized values and scales chosen so that activations stay of order 1,
// the embedding table is random BF16 in memory, norms are 1. opt is as for
// Load (DType, Threads, Classes, …); the same memory check applies.
func Random(cfg *arch.Config, opt LoadOptions, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := opt.defaults(cfg); err != nil {
		return nil, err
	}
	mem, err := EstimateMemory(cfg, opt, 2)
	if err != nil {
		return nil, err
	}
	if err := checkFits(&mem, &opt, cfg.Source); err != nil {
		return nil, err
	}
	// the embedding table is in memory here, not mapped
	mem.WeightsHeap += mem.WeightsMapped
	mem.Budgeted += mem.WeightsMapped
	mem.WeightsMapped = 0

	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := cfg.Shapes()
	m := &Model{Cfg: cfg, Shapes: s, opt: opt, mem: mem, timing: timer{opt.OpTimer}}
	mat := func(n, k int, dt kernel.DType) *quant.Matrix { return randomMatrix(r, dt, n, k) }
	attn, ffn, ex := opt.AttnDType, opt.FFNDType, opt.ExpertDType

	m.Embed = Embedding{V: s.Vocab, C: s.Hidden, DType: safetensors.BF16, Data: make([]byte, 2*s.Vocab*s.Hidden)}
	fillBF16(r, m.Embed.Data, 1)
	C := s.Hidden
	m.Layers = make([]Layer, s.Layers)
	for l := range m.Layers {
		ly := &m.Layers[l]
		ly.Kind = cfg.LayerKind(l)
		ly.InNorm, ly.PostNorm = ones(C), ones(C)
		switch ly.Kind {
		case arch.KDA:
			H, D, P, W, g := s.KDAHeads, s.KDAHeadDim, s.KDAProj, s.ConvKernel, opt.GateDType
			ly.KDA = &kda.LayerWeights{Hidden: C, Heads: H, HeadDim: D, ConvWidth: W, Eps: float32(cfg.RMSNormEps),
				Q: mat(P, C, attn), K: mat(P, C, attn), V: mat(P, C, attn),
				FA: mat(D, C, g), FB: mat(P, D, g), Beta: mat(H, C, g), GA: mat(D, C, g), GB: mat(P, D, g),
				O:     mat(C, P, attn),
				ConvQ: uniform(r, P*W, 0.5), ConvK: uniform(r, P*W, 0.5), ConvV: uniform(r, P*W, 0.5),
				ALog: make([]float32, H), DtBias: make([]float32, P), ONorm: ones(D)}
		case arch.MLA:
			w := &mla.LayerWeights{Hidden: C, Heads: s.MLAHeads, DN: s.QKNope, DR: s.QKRope, DV: s.VHead, R: s.KVLoraRank, KVEps: kvEps,
				Q: mat(s.MLAQDim, C, attn), KVA: mat(s.MLAKVADim, C, attn), KVANorm: ones(s.KVLoraRank), O: mat(C, s.MLAODim, attn)}
			if err := w.SplitKVB(uniform(r, s.MLAKVBDim*s.KVLoraRank, float32(math.Sqrt(3/float64(s.KVLoraRank))))); err != nil {
				return nil, err
			}
			ly.MLA = w
		}
		if !cfg.IsMoE(l) {
			ly.MLP = &MLP{Gate: mat(s.DenseInter, C, ffn), Up: mat(s.DenseInter, C, ffn), Down: mat(C, s.DenseInter, ffn)}
			continue
		}
		blk := &moe.BlockWeights{Hidden: C, Cfg: routerConfig(cfg), Router: mat(s.Experts, C, kernel.F32), Bias: make([]float32, s.Experts)}
		for range s.Experts {
			blk.Experts = append(blk.Experts, moe.Expert{Gate: mat(s.ExpertInter, C, ex), Up: mat(s.ExpertInter, C, ex), Down: mat(C, s.ExpertInter, ex)})
		}
		if s.SharedInter > 0 {
			blk.Shared = &moe.Expert{Gate: mat(s.SharedInter, C, ffn), Up: mat(s.SharedInter, C, ffn), Down: mat(C, s.SharedInter, ffn)}
		}
		ly.MoE = blk
	}
	m.Norm = ones(C)
	m.LMHead = mat(s.Vocab, C, opt.HeadDType)
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("model: %s: %w", cfg.Source, err)
	}
	return m, nil
}

// randomMatrix is an n×k matrix in dt whose weights are uniform with
// variance 1/k (so y = W·x keeps x's scale), written straight into the
// packed layout: the values are i.i.d., so where each lands does not matter,
// only that the Q8/Q4 scales are sane.
func randomMatrix(r *rand.Rand, dt kernel.DType, n, k int) *quant.Matrix {
	m, err := quant.New(dt, n, k, false)
	if err != nil {
		panic(err) // the shapes come from a validated config
	}
	a := float32(math.Sqrt(3 / float64(k))) // uniform(−a, a) has variance 1/k
	switch dt {
	case kernel.F32:
		for i := 0; i+4 <= len(m.Data); i += 4 {
			binary.LittleEndian.PutUint32(m.Data[i:], math.Float32bits(a*(2*r.Float32()-1)))
		}
	case kernel.BF16:
		fillBF16(r, m.Data, a)
	case kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K: // symmetric codes, sd 1/√k
		quant.FillRandom(r, m, 0, m.Panels(), 1/math.Sqrt(float64(k)))
	case kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2:
		fillBytes(r, m.Data)
		// scales: Q8 codes are uniform in −128..127 (σ ≈ 74), Q4 in −8..7 (σ ≈ 4.6), Q3 in −4..3 (σ ≈ 2.3),
		// Q6 in −32..31 (σ ≈ 18.5), Q5 in −16..15 (σ ≈ 9.2), Q2 in 0..3 about the offset 1.5 (σ ≈ 1.12, max 1.5)
		wb, d := 8*quant.LineBytes, a/128
		switch dt {
		case kernel.Q4:
			wb, d = 4*quant.LineBytes, a/8
		case kernel.Q3:
			wb, d = quant.Q3Lines*quant.LineBytes, a/4
		case kernel.Q6:
			wb, d = quant.Q6Lines*quant.LineBytes, a/32
		case kernel.Q5:
			wb, d = quant.Q5Lines*quant.LineBytes, a/16
		case kernel.Q2:
			wb, d = quant.Q2Lines*quant.LineBytes, a/1.5
		}
		scale := half.F32ToF16(d)
		if dt == kernel.Q2 { // scale word: code 7, offset (7−1)/4 = 1.5
			scale = scale&^quant.Q2CodeMask | 7
		}
		gb := m.GroupBytes()
		for off := 0; off < len(m.Data); off += gb {
			if dt == kernel.Q8 { // codes in −127..127, as Quantize writes them
				for i, u := range m.Data[off : off+wb] {
					if u == 0 {
						m.Data[off+i] = 1
					}
				}
			}
			for i := 0; i < quant.PanelRows; i++ {
				binary.LittleEndian.PutUint16(m.Data[off+wb+2*i:], scale)
			}
		}
	}
	return m
}

func fillBytes(r *rand.Rand, b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for ; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
}

// fillBF16 fills b with BF16 values uniform in (−a, a).
func fillBF16(r *rand.Rand, b []byte, a float32) {
	for i := 0; i+2 <= len(b); i += 2 {
		binary.LittleEndian.PutUint16(b[i:], half.F32ToBF16(a*(2*r.Float32()-1)))
	}
}

func uniform(r *rand.Rand, n int, a float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = a * (2*r.Float32() - 1)
	}
	return v
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// DecodeWeightBytes is the weight bytes one decode step of one sequence
// reads: every matrix except the routed experts, top-k experts per MoE
// layer (the shared expert included), MLA's f32 W_UK and W_UV, and one
// embedding row. Bytes per token ÷ a measured read bandwidth is the
// decode roofline.
func (m *Model) DecodeWeightBytes() int64 {
	var n int64
	for _, b := range m.DecodeWeightBytesByOp() {
		n += b
	}
	return n
}

// PassWeightBytes is the weight bytes one forward pass reads when its
// tokens were routed as hits says ([layer][expert] tokens, the difference
// of ExpertCounts around the pass): DecodeWeightBytes with each MoE layer's
// top-k experts replaced by the experts its tokens touched, each read
// once, and without the embedding rows (a few KiB per token). Bytes ÷ a
// measured read bandwidth is the pass's bandwidth bound.
func (m *Model) PassWeightBytes(hits [][]int64) int64 {
	var n int64
	for op, b := range m.DecodeWeightBytesByOp() {
		if op != OpMoE && op != OpEmbed {
			n += b
		}
	}
	for l := range m.Layers {
		b := m.Layers[l].MoE
		if b == nil {
			continue
		}
		touched := 0
		if l < len(hits) {
			for _, c := range hits[l] {
				if c > 0 {
					touched++
				}
			}
		}
		x := b.Experts[0]
		n += int64(len(b.Router.Data)) + int64(touched)*int64(len(x.Gate.Data)+len(x.Up.Data)+len(x.Down.Data))
		if s := b.Shared; s != nil {
			n += int64(len(s.Gate.Data) + len(s.Up.Data) + len(s.Down.Data))
		}
	}
	return n
}

// ExpertMatrixBytes is the mean size of one routed expert's matrix (gate,
// up or down) over the MoE layers: what a decode step reads from storage
// at a time where the experts are paged (0 without experts).
func (m *Model) ExpertMatrixBytes() int64 {
	var n, k int64
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil && len(b.Experts) > 0 {
			x := b.Experts[0]
			n += int64(len(x.Gate.Data) + len(x.Up.Data) + len(x.Down.Data))
			k += 3
		}
	}
	if k == 0 {
		return 0
	}
	return n / k
}

// DecodeWeightBytesByOp splits DecodeWeightBytes by op family (the
// OpTimer's Op… names): each op's weight bytes ÷ the read bandwidth is
// that op's roof. Norms are not counted (a few KiB).
func (m *Model) DecodeWeightBytesByOp() map[string]int64 {
	n := map[string]int64{}
	size := func(xs ...*quant.Matrix) (s int64) {
		for _, x := range xs {
			s += int64(len(x.Data))
		}
		return s
	}
	for l := range m.Layers {
		ly := &m.Layers[l]
		if w := ly.KDA; w != nil {
			n[OpKDA] += size(w.Q, w.K, w.V, w.FA, w.FB, w.Beta, w.GA, w.GB, w.O)
		}
		if w := ly.MLA; w != nil {
			n[OpMLA] += size(w.Q, w.KVA, w.O) + 4*int64(len(w.WUK)+len(w.WUV))
		}
		if f := ly.MLP; f != nil {
			n[OpMLP] += size(f.Gate, f.Up, f.Down)
		}
		if b := ly.MoE; b != nil {
			x := b.Experts[0]
			n[OpMoE] += size(b.Router) + int64(b.Cfg.TopK)*size(x.Gate, x.Up, x.Down)
			if s := b.Shared; s != nil {
				n[OpMoE] += size(s.Gate, s.Up, s.Down)
			}
		}
	}
	n[OpLMHead] = size(m.LMHead)
	n[OpEmbed] = int64(m.Embed.RowBytes())
	return n
}
