// Package norm holds the normalisation kernels of Kimi Linear: RMSNorm (the
// decoder's input, post-attention and final norms, MLA's latent norm).
//
// Op norm.rmsnorm, shape m (rows) × n (width):
//
//	y[r, i] = x[r, i] · (mean_i(x[r, i]²) + eps)^(-1/2) · w[i]
//
// Variants: reference (float64), generic (f32, unrolled), and on amd64 the
// generated avx2 and avx512 row kernels (bulk in asm, tail in Go).
package norm

import (
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/kernel"
)

// OpRMSNorm is the registry name of RMSNorm.
const OpRMSNorm = "norm.rmsnorm"

// rowFn normalises one row: dst[i] = x[i]·scale·w[i], len(dst) = len(w) = len(x).
type rowFn func(dst, x, w []float32, eps float32)

// RMSNorm normalises each row of x (rows of len(w) values) into dst with
// weight w, using the default variant for this CPU (RMSNormWith under no
// rules). dst may alias x.
func RMSNorm(dst, x, w []float32, eps float32) { RMSNormWith(kernel.Rules{}, dst, x, w, eps) }

// RMSNormWith is RMSNorm with the variant the caller's rules choose for
// this shape (its tuning profile's, else the default).
func RMSNormWith(r kernel.Rules, dst, x, w []float32, eps float32) {
	m := 0
	if len(w) > 0 {
		m = len(x) / len(w)
	}
	fn, _ := rmsChoose(r, m, len(w))
	rmsRows(fn, dst, x, w, eps)
}

// rmsChoose is the row kernel RMSNorm runs for m rows of width n.
func rmsChoose(r kernel.Rules, m, n int) (rowFn, *kernel.Variant) {
	c := r.WithClasses().ChooseDims(OpRMSNorm, kernel.F32, rmsKeys, []int{m, n}, 1)
	return c.Variant.Impl.(rowFn), c.Variant
}

func rmsRows(fn rowFn, dst, x, w []float32, eps float32) {
	n := len(w)
	if n == 0 || len(x)%n != 0 || len(dst) != len(x) {
		panic(fmt.Sprintf("norm.RMSNorm: len(x)=%d, len(dst)=%d, len(w)=%d", len(x), len(dst), n))
	}
	for r := 0; r+n <= len(x); r += n {
		fn(dst[r:r+n], x[r:r+n], w, eps)
	}
}

// rmsScale is the normalisation factor of a row from its sum of squares,
// computed in float64 so every variant rounds the same way.
func rmsScale(sumSq float32, n int, eps float32) float32 {
	return float32(1 / math.Sqrt(float64(sumSq)/float64(n)+float64(eps)))
}

// ---- registry -----------------------------------------------------------

var rmsKeys = []string{"m", "n"}

// rmsProblem is x [m×n] and w [n] in, y [m×n] out.
type rmsProblem struct {
	shape kernel.Shape
	m, n  int
	x, w  []float32
	y     []float32
	eps   float32
}

func (p *rmsProblem) Shape() kernel.Shape { return p.shape }
func (p *rmsProblem) DType() kernel.DType { return kernel.F32 }
func (p *rmsProblem) Output() []float32   { return p.y }
func (p *rmsProblem) Reset()              { clear(p.y) }

func newRMSProblem(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
	m, n := s.Get("m"), s.Get("n")
	if m < 1 || n < 1 {
		return nil, fmt.Errorf("%s: shape %s: m and n must be ≥ 1", OpRMSNorm, s)
	}
	if dt != kernel.F32 {
		return nil, fmt.Errorf("%s: dtype %s not served", OpRMSNorm, dt)
	}
	r := newRand(seed)
	p := &rmsProblem{shape: s, m: m, n: n, x: make([]float32, m*n), w: make([]float32, n), y: make([]float32, m*n), eps: 1e-5}
	for i := range p.x {
		// rows of very different magnitudes, as residual streams have
		p.x[i] = float32(r.NormFloat64() * math.Pow(10, float64(i/n%5)-2))
	}
	for i := range p.w {
		p.w[i] = float32(1 + 0.1*r.NormFloat64())
	}
	return p, nil
}

// rowInstance runs a row kernel over a problem.
type rowInstance struct {
	p  *rmsProblem
	fn rowFn
}

func (in rowInstance) Run() { rmsRows(in.fn, in.p.y, in.p.x, in.p.w, in.p.eps) }

// registerRow registers a row-kernel variant of RMSNorm.
func registerRow(v kernel.Variant, fn rowFn) {
	v.Op = OpRMSNorm
	v.DTypes = []kernel.DType{kernel.F32}
	if v.Class == "" {
		v.Class = kernel.ClassF32
	}
	v.Impl = fn
	v.New = func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
		rp, ok := p.(*rmsProblem)
		if !ok {
			return nil, fmt.Errorf("%s: problem of type %T", OpRMSNorm, p)
		}
		return rowInstance{rp, fn}, nil
	}
	kernel.Register(&v)
}

func init() {
	kernel.RegisterOp(&kernel.Op{
		Name:       OpRMSNorm,
		Doc:        "RMSNorm of m rows of width n with a weight vector",
		ShapeKeys:  rmsKeys,
		DTypes:     []kernel.DType{kernel.F32},
		NewProblem: newRMSProblem,
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			m, n := float64(s.Get("m")), float64(s.Get("n"))
			return kernel.Cost{FLOPs: 4 * m * n, Bytes: 4 * (2*m*n + n)}
		},
	})
	registerRow(kernel.Variant{Name: "reference", Doc: "float64 accumulation", Reference: true}, rmsRowRef)
	registerRow(kernel.Variant{Name: "generic", Doc: "pure Go, 4 partial sums", Priority: 10}, rmsRowGeneric)
}
