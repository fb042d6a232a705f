package moe

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/kernels/gemm"
)

// OpBlock is the registry name of the MoE block (router, experts, shared
// expert). Shape: n tokens, e experts, k top-k, c hidden, i expert width
// (one shared expert of width i).
const OpBlock = "moe.block"

var blockKeys = []string{"n", "e", "k", "c", "i"}

type problem struct {
	shape kernel.Shape
	dt    kernel.DType
	b     *BlockWeights
	x, y  []float32
	n     int
}

func (p *problem) Shape() kernel.Shape { return p.shape }
func (p *problem) DType() kernel.DType { return p.dt }
func (p *problem) Reset()              { clear(p.y) }
func (p *problem) Output() []float32   { return p.y }

// RandomBlock builds a block of random weights at a shape, the experts in
// dt (tests, tuning and benchmarks).
func RandomBlock(r *rand.Rand, dt kernel.DType, e, k, c, i int) (*BlockWeights, error) {
	mat := func(dt kernel.DType, n, kk int) (*quant.Matrix, error) {
		return quant.Random(r, dt, n, kk, false, 1/math.Sqrt(float64(kk)))
	}
	router, err := mat(kernel.F32, e, c)
	if err != nil {
		return nil, err
	}
	b := &BlockWeights{Hidden: c, Router: router, Bias: make([]float32, e),
		Cfg: RouterConfig{Experts: e, TopK: k, Groups: 1, TopKGroup: 1, Renormalize: true, Scale: 2.446}}
	for j := range b.Bias {
		b.Bias[j] = float32(0.1 * r.NormFloat64())
	}
	expert := func() (Expert, error) {
		g, err1 := mat(dt, i, c)
		u, err2 := mat(dt, i, c)
		d, err3 := mat(dt, c, i)
		for _, err := range []error{err1, err2, err3} {
			if err != nil {
				return Expert{}, err
			}
		}
		return Expert{g, u, d}, nil
	}
	for j := 0; j < e; j++ {
		ex, err := expert()
		if err != nil {
			return nil, err
		}
		b.Experts = append(b.Experts, ex)
	}
	sh, err := expert()
	if err != nil {
		return nil, err
	}
	b.Shared = &sh
	return b, b.Validate()
}

func newProblem(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
	n, e, k, c, i := s.Get("n"), s.Get("e"), s.Get("k"), s.Get("c"), s.Get("i")
	if n < 1 || e < 1 || k < 1 || k > e || c < 1 || i < 1 {
		return nil, fmt.Errorf("%s: bad shape %s", OpBlock, s)
	}
	r := rand.New(rand.NewPCG(seed, 11))
	b, err := RandomBlock(r, dt, e, k, c, i)
	if err != nil {
		return nil, err
	}
	p := &problem{shape: s, dt: dt, b: b, n: n, x: make([]float32, n*c), y: make([]float32, n*c)}
	for j := range p.x {
		p.x[j] = float32(r.NormFloat64())
	}
	return p, nil
}

// expectedExperts is how many distinct experts n tokens touch on average
// with uniform routing.
func expectedExperts(n, e, k int) float64 {
	return float64(e) * (1 - math.Pow(1-float64(k)/float64(e), float64(n)))
}

func cost(s kernel.Shape, dt kernel.DType) kernel.Cost {
	n, e, k, c, i := s.Get("n"), s.Get("e"), s.Get("k"), s.Get("c"), s.Get("i")
	per := float64(3 * quant.Size(dt, i, c, false))
	fl := float64(n) * float64(k+1) * 6 * float64(c) * float64(i)
	return kernel.Cost{
		FLOPs: fl + 2*float64(n*e*c),
		Bytes: (expectedExperts(n, e, k)+1)*per + float64(4*e*c) + float64(8*n*c),
	}
}

// refForward is the reference block: float64 logits rounded to f32 for the
// shared routing code, then float64 experts over the dequantized weights.
func refForward(b *BlockWeights, y, x []float32, n int) {
	C, E, K := b.Hidden, b.Cfg.Experts, b.Cfg.TopK
	logits := make([]float32, n*E)
	row := make([]float32, C)
	for e := 0; e < E; e++ {
		b.Router.DequantizeRow(e, row)
		for t := 0; t < n; t++ {
			logits[t*E+e] = float32(dot64(x[t*C:(t+1)*C], row))
		}
	}
	ids, w := make([]int32, n*K), make([]float32, n*K)
	Route(ids, w, nil, logits, b.Bias, n, &b.Cfg)
	for t := 0; t < n; t++ {
		acc := make([]float64, C)
		xt := x[t*C : (t+1)*C]
		for k := 0; k < K; k++ {
			refExpert(acc, xt, &b.Experts[ids[t*K+k]], float64(w[t*K+k]))
		}
		if b.Shared != nil {
			refExpert(acc, xt, b.Shared, 1)
		}
		for j := range acc {
			y[t*C+j] = float32(acc[j])
		}
	}
}

func refExpert(acc []float64, x []float32, ex *Expert, wt float64) {
	I, C := ex.Gate.N, len(x)
	g, u := make([]float32, C), make([]float32, C)
	h := make([]float32, I)
	for r := 0; r < I; r++ {
		ex.Gate.DequantizeRow(r, g)
		ex.Up.DequantizeRow(r, u)
		a, bb := dot64(x, g), dot64(x, u)
		h[r] = float32(a / (1 + math.Exp(-a)) * bb)
	}
	d := make([]float32, I)
	for r := 0; r < C; r++ {
		ex.Down.DequantizeRow(r, d)
		acc[r] += wt * dot64(h, d)
	}
}

func dot64(a, b []float32) float64 {
	var s float64
	for i, x := range a {
		s += float64(x) * float64(b[i])
	}
	return s
}

type instance struct {
	p   *problem
	v   *kernel.Variant
	cfg kernel.Config
}

func (in *instance) Run() {
	if in.v.Reference {
		refForward(in.p.b, in.p.y, in.p.x, in.p.n)
		return
	}
	in.p.b.Forward(in.p.y, in.p.x, in.p.n, BlockOptions{Threads: in.cfg.Threads, ExpertParallel: in.cfg.Params["ep"],
		Classes: []kernel.Class{in.v.Class}, Kernel: in.v.Name})
}

var epParam = kernel.Param{Name: "ep", Doc: "largest token count per expert computed expert-parallel (single-threaded per expert); -1: every expert row-parallel on all threads",
	Values: []int{-1, 1, 2, 4, 8, 16, 32, 64}, Default: DefaultExpertParallel}

func init() {
	all := []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4}
	kernel.RegisterOp(&kernel.Op{Name: OpBlock, Doc: "MoE block: router, top-k experts (SwiGLU), shared expert",
		ShapeKeys: blockKeys, DTypes: all, NewProblem: newProblem, Cost: cost})
	// one variant per gemm variant of the fused gate/up (the experts' gemm
	// variant is the block's ISA choice; gemm registers first, moe imports it)
	vs := []kernel.Variant{{Name: "reference", Doc: "float64 experts over dequantized weights", Reference: true, DTypes: all, Class: kernel.ClassF32}}
	for _, g := range kernel.Variants(gemm.OpGateUp) {
		if g.Reference {
			continue
		}
		vs = append(vs, kernel.Variant{Name: g.Name, Doc: "grouped SwiGLU experts on the " + g.Name + " gemm kernels (" + string(g.Class) + ")",
			Priority: g.Priority, DTypes: g.DTypes, Class: g.Class, Requires: g.Requires, Threaded: true, Params: []kernel.Param{epParam}})
	}
	for _, v := range vs {
		v := v
		v.Op = OpBlock
		v.New = func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
			mp, ok := p.(*problem)
			if !ok {
				return nil, fmt.Errorf("%s: problem of type %T", OpBlock, p)
			}
			return &instance{mp, &v, cfg}, nil
		}
		kernel.Register(&v)
	}
}
