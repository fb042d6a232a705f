package moe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

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
		if quant.IsGGUF(dt) {
			return quant.RandomGGUF(r, dt, n, kk, 1/math.Sqrt(float64(kk)))
		}
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
	p := &problem{shape: s, dt: dt, b: b, n: n}
	p.drawX(r)
	return p, nil
}

// drawX draws the tokens' activations ~ N(0,1) and makes the output.
func (p *problem) drawX(r *rand.Rand) {
	c := p.b.Hidden
	p.x, p.y = make([]float32, p.n*c), make([]float32, p.n*c)
	for j := range p.x {
		p.x[j] = float32(r.NormFloat64())
	}
}

// Reshape implements kernel.Reshaper: another token count n, the same
// block (e, k, c and i must match).
func (p *problem) Reshape(s kernel.Shape, seed uint64) (kernel.Problem, bool) {
	n := s.Get("n")
	for _, key := range []string{"e", "k", "c", "i"} {
		if s.Get(key) != p.shape.Get(key) {
			return nil, false
		}
	}
	if n < 1 {
		return nil, false
	}
	q := &problem{shape: s, dt: p.dt, b: p.b, n: n}
	q.drawX(rand.New(rand.NewPCG(seed, 11)))
	return q, true
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
// Each expert's rows are dequantized once for all the tokens routed to it
// (experts run in parallel); every token's output is then summed in the
// fixed order (its top-k experts in rank order, then the shared expert),
// so the result does not depend on the worker count.
func refForward(b *BlockWeights, y, x []float32, n int) {
	C, E, K := b.Hidden, b.Cfg.Experts, b.Cfg.TopK
	logits := make([]float32, n*E)
	row := make([]float32, C)
	for e := 0; e < E; e++ {
		b.Router.DequantizeRow(e, row)
		for t := 0; t < n; t++ {
			logits[t*E+e] = float32(kernel.Dot64(x[t*C:(t+1)*C], row))
		}
	}
	ids, w := make([]int32, n*K), make([]float32, n*K)
	Route(ids, w, nil, logits, b.Bias, n, &b.Cfg)
	// jobs: each routed expert with its (token, rank) pairs, and the shared
	// expert over every token; out[p] is pair p's down-projection [C]
	type job struct {
		ex     *Expert
		tokens []int
		out    [][]float64
	}
	contrib := make([]float64, n*K*C)
	jobs := make([]job, E)
	for p, id := range ids {
		j := &jobs[id]
		j.ex = &b.Experts[id]
		j.tokens = append(j.tokens, p/K)
		j.out = append(j.out, contrib[p*C:(p+1)*C])
	}
	var shared []float64
	if b.Shared != nil {
		shared = make([]float64, n*C)
		j := job{ex: b.Shared}
		for t := 0; t < n; t++ {
			j.tokens = append(j.tokens, t)
			j.out = append(j.out, shared[t*C:(t+1)*C])
		}
		jobs = append(jobs, j)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				if j := jobs[i]; j.ex != nil {
					refExpert(j.out, x, C, j.ex, j.tokens)
				}
			}
		}()
	}
	wg.Wait()
	acc := make([]float64, C)
	for t := 0; t < n; t++ {
		clear(acc)
		for k := 0; k < K; k++ {
			p, wt := t*K+k, float64(w[t*K+k])
			for j, v := range contrib[p*C : (p+1)*C] {
				acc[j] += wt * v
			}
		}
		if shared != nil {
			for j, v := range shared[t*C : (t+1)*C] {
				acc[j] += v
			}
		}
		for j := range acc {
			y[t*C+j] = float32(acc[j])
		}
	}
}

// refExpert computes out[i] = down·(silu(gate·x_t)⊙(up·x_t)) in float64
// for each token t = tokens[i] (the hidden values rounded to f32), each
// weight row dequantized once.
func refExpert(out [][]float64, x []float32, C int, ex *Expert, tokens []int) {
	I := ex.Gate.N
	g, u := make([]float32, C), make([]float32, C)
	h := make([]float32, len(tokens)*I)
	xt := func(i int) []float32 { return x[tokens[i]*C : (tokens[i]+1)*C] }
	ht := func(i int) []float32 { return h[i*I : (i+1)*I] }
	silu := func(a, b float64) float32 { return float32(a / (1 + math.Exp(-a)) * b) }
	n := len(tokens)
	for r := 0; r < I; r++ {
		ex.Gate.DequantizeRow(r, g)
		ex.Up.DequantizeRow(r, u)
		i := 0
		for ; i+4 <= n; i += 4 { // four tokens per pass over a weight row, each sum in order
			a0, a1, a2, a3 := kernel.Dot64x4(g, xt(i), xt(i+1), xt(i+2), xt(i+3))
			b0, b1, b2, b3 := kernel.Dot64x4(u, xt(i), xt(i+1), xt(i+2), xt(i+3))
			h[i*I+r], h[(i+1)*I+r], h[(i+2)*I+r], h[(i+3)*I+r] = silu(a0, b0), silu(a1, b1), silu(a2, b2), silu(a3, b3)
		}
		for ; i < n; i++ {
			h[i*I+r] = silu(kernel.Dot64(xt(i), g), kernel.Dot64(xt(i), u))
		}
	}
	d := make([]float32, I)
	for r := 0; r < C; r++ {
		ex.Down.DequantizeRow(r, d)
		i := 0
		for ; i+4 <= n; i += 4 {
			out[i][r], out[i+1][r], out[i+2][r], out[i+3][r] = kernel.Dot64x4(d, ht(i), ht(i+1), ht(i+2), ht(i+3))
		}
		for ; i < n; i++ {
			out[i][r] = kernel.Dot64(ht(i), d)
		}
	}
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
		Rules: kernel.Rules{Classes: []kernel.Class{in.v.Class}}, Kernel: in.v.Name})
}

var epParam = kernel.Param{Name: "ep", Doc: "largest token count per expert computed expert-parallel (single-threaded per expert); -1: every expert row-parallel on all threads; 0: half a thread's share of the routed rows, at least 32 (the default without a profile)",
	Values: []int{0, -1, 1, 2, 4, 8, 16, 32, 64}, Default: 0}

// verifyExperts is the most experts a tuned block is checked with: the
// reference runs every routed token through float64 experts, minutes for
// 512 tokens of Kimi's 256.
const verifyExperts = 32

// verifyShape is the shape a candidate tuned at s is checked at: the same
// expert matrices (c, i: every panel of the gate/up and down GEMMs and the
// partial last one) and top-k, at most verifyExperts experts, with the
// tokens scaled to keep the tokens per expert of s (so the same experts
// fall on each side of the expert-parallel threshold ep) — decode steps
// (≤ 8 tokens) keep their tokens.
func verifyShape(s kernel.Shape, _ kernel.DType) kernel.Shape {
	n, e, k := s.Get("n"), s.Get("e"), s.Get("k")
	if e <= verifyExperts || verifyExperts < 2*k {
		return s
	}
	if n > 8 {
		n = max(8, (n*verifyExperts+e-1)/e)
	}
	return s.With("e", verifyExperts).With("n", n)
}

func init() {
	all := append([]kernel.DType{kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K},
		kernel.GGUFDTypes...)
	kernel.RegisterOp(&kernel.Op{Name: OpBlock, Doc: "MoE block: router, top-k experts (SwiGLU), shared expert",
		ShapeKeys: blockKeys, DTypes: all, NewProblem: newProblem, Cost: cost, Verify: verifyShape})
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
