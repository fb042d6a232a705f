package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

var shapeKeys = []string{"m", "n", "k"}

var weightDTypes = []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4}

// opDTypes are the dtypes the ops serve: weightDTypes, Q3, Q6, Q5, Q2,
// the K formats and the GGUF formats (gemm_gguf.go),
// which only the reference, the generic variants and those that list them
// serve.
var opDTypes = append(panelDTypes[:len(panelDTypes):len(panelDTypes)], kernel.GGUFDTypes...)

// panelDTypes are the panel formats of package quant: opDTypes without the
// GGUF formats (the portable panel variants serve these).
var panelDTypes = append(weightDTypes[:len(weightDTypes):len(weightDTypes)], kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2,
	kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K)

// problem is one Y = X·Wᵀ (or H = silu(X·Wgᵀ)⊙(X·Wuᵀ) for gateup) with
// random inputs: X ~ N(0,1), W ~ N(0, 1/K) quantized to the dtype. Q4
// problems from odd seeds carry a per-group min, from even seeds none.
type problem struct {
	op      string
	shape   kernel.Shape
	dt      kernel.DType
	m, n, k int
	x       []float32
	w, wu   *quant.Matrix
	y       []float32
}

func (p *problem) Shape() kernel.Shape { return p.shape }
func (p *problem) DType() kernel.DType { return p.dt }
func (p *problem) Output() []float32   { return p.y }
func (p *problem) Reset()              { clear(p.y) }

// Copy implements kernel.Copier: the weights copied, the activations
// shared (read only), an output of its own.
func (p *problem) Copy() kernel.Problem {
	c := *p
	c.w, c.wu = p.w.Clone(), p.wu.Clone()
	c.y = make([]float32, len(p.y))
	return &c
}

// Reshape implements kernel.Reshaper: another row count m, the same
// weights (n and k must match).
func (p *problem) Reshape(s kernel.Shape, seed uint64) (kernel.Problem, bool) {
	m, n, k := s.Get("m"), s.Get("n"), s.Get("k")
	if m < 1 || n != p.n || k != p.k {
		return nil, false
	}
	c := &problem{op: p.op, shape: s, dt: p.dt, m: m, n: n, k: k, w: p.w, wu: p.wu}
	c.drawX(rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1)))
	return c, true
}

// drawX draws X ~ N(0,1) and makes the output.
func (p *problem) drawX(r *rand.Rand) {
	p.x, p.y = make([]float32, p.m*p.k), make([]float32, p.m*p.n)
	for i := range p.x {
		p.x[i] = float32(r.NormFloat64())
	}
}

func newProblem(op string) func(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
	return func(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
		m, n, k := s.Get("m"), s.Get("n"), s.Get("k")
		if m < 1 || n < 1 || k < 1 {
			return nil, fmt.Errorf("%s: shape %s: m, n, k must be ≥ 1", op, s)
		}
		r := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1))
		p := &problem{op: op, shape: s, dt: dt, m: m, n: n, k: k}
		p.drawX(r)
		hasMin := dt == kernel.Q4 && seed%2 == 1
		var err error
		if p.w, err = randomMatrix(r, dt, n, k, hasMin); err != nil {
			return nil, err
		}
		if op == OpGateUp {
			if p.wu, err = randomMatrix(r, dt, n, k, hasMin); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
}

// fastQ6 is quant.FastQ6: a variant other than the pure-Go ones serves
// Q6 GEMV in the default classes (on amd64 with AVX2, arm64 with SDOT or
// SVE; not under purego or a mask below those).
func fastQ6() bool { return fastGEMV(kernel.Q6) }

// fastQ5 is quant.FastQ5: as fastQ6 for Q5 (amd64 with AVX2, arm64 with
// SDOT or SVE).
func fastQ5() bool { return fastGEMV(kernel.Q5) }

func fastGEMV(dt kernel.DType) bool {
	for _, v := range kernel.Candidates(OpGEMV, dt, nil) {
		if !strings.HasPrefix(v.Name, "generic") {
			return true
		}
	}
	return false
}

func randomMatrix(r *rand.Rand, dt kernel.DType, n, k int, hasMin bool) (*quant.Matrix, error) {
	if quant.IsGGUF(dt) {
		return quant.RandomGGUF(r, dt, n, k, 1/math.Sqrt(float64(k)))
	}
	return quant.Random(r, dt, n, k, hasMin, 1/math.Sqrt(float64(k)))
}

func cost(op string) func(s kernel.Shape, dt kernel.DType) kernel.Cost {
	return func(s kernel.Shape, dt kernel.DType) kernel.Cost {
		m, n, k := float64(s.Get("m")), s.Get("n"), s.Get("k")
		wbytes := float64(quant.Size(dt, n, k, false))
		c := kernel.Cost{FLOPs: 2 * m * float64(n) * float64(k), Bytes: wbytes + 4*m*float64(k) + 4*m*float64(n)}
		if op == OpGateUp {
			c.FLOPs *= 2
			c.Bytes += wbytes
		}
		return c
	}
}

// instance runs a variant's impl on a problem.
type instance struct {
	p   *problem
	im  *impl
	cfg kernel.Config
}

func (in *instance) Run() {
	a := newArgs(in.im, in.p.y, in.p.x, in.p.w, in.p.m, false)
	a.wu = in.p.wu
	in.im.run(a, in.cfg)
	a.release()
}

// register adds a variant of the three ops sharing one impl: v.Op is
// ignored and each op gets its own copy (gemm.gateup has no grain param
// differences; all take the same Params).
func register(ops []string, v kernel.Variant, im *impl) {
	for _, op := range ops {
		c := v
		c.Op = op
		c.Impl = im
		if c.Class == "" {
			c.Class = kernel.ClassF32
		}
		c.New = func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
			gp, ok := p.(*problem)
			if !ok || gp.op != op {
				return nil, fmt.Errorf("%s: problem of type %T", op, p)
			}
			return &instance{p: gp, im: im, cfg: cfg}, nil
		}
		kernel.Register(&c)
	}
}

// grainParam is the work-item size (panels of 16 rows per chunk handed to
// a thread) shared by the variants.
var grainParam = kernel.Param{Name: "grain", Doc: "panels per work item", Values: []int{1, 2, 4, 8, 16}, Default: 4}

var allOps = []string{OpGEMV, OpGEMM, OpGateUp}

func init() {
	quant.FastQ6 = fastQ6
	quant.FastQ5 = fastQ5
	quant.FastK = fastGEMV
	docs := map[string]string{
		OpGEMV:   "Y = X·Wᵀ for decode (M ≤ crossover)",
		OpGEMM:   "Y = X·Wᵀ for prefill",
		OpGateUp: "H = silu(X·Wgᵀ) ⊙ (X·Wuᵀ)",
	}
	for _, op := range allOps {
		kernel.RegisterOp(&kernel.Op{
			Name: op, Doc: docs[op], ShapeKeys: shapeKeys, DTypes: opDTypes,
			NewProblem: newProblem(op), Cost: cost(op),
		})
	}
	// the reference is threaded (each output is one float64 sum, the same
	// on any thread count) so that tuned candidates are checked at the
	// prefill shapes they are timed at
	register(allOps, kernel.Variant{Name: "reference", Doc: "float64 accumulation over the dequantized weights",
		Reference: true, Threaded: true, DTypes: opDTypes}, &impl{act: actF32, panels: panelsRef})
	register(allOps, kernel.Variant{Name: "generic", Doc: "pure Go, weights widened per group", Priority: 10,
		DTypes: panelDTypes, Threaded: true, Params: []kernel.Param{grainParam}}, &impl{act: actF32, panels: panelsGeneric, grain: 4})
	register(allOps, kernel.Variant{Name: "generic_int8", Doc: "pure Go integer dot products on int8 activations", Priority: 5,
		DTypes: []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K}, Class: kernel.ClassInt8Act, Threaded: true, Params: []kernel.Param{grainParam}},
		&impl{act: actInt8, panels: panelsGenericInt8, grain: 4})
}
