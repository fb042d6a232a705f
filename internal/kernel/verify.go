package kernel

import (
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/pool"
)

// Diff summarises how far an output is from the reference's.
type Diff struct {
	RelRMS float64 `json:"rel_rms"`
	MaxRel float64 `json:"max_rel"`
	MaxAbs float64 `json:"max_abs"`
	At     int     `json:"at"` // index of the largest absolute difference
}

// Compare measures got against want. NaN or Inf in got (where want is
// finite), or a length mismatch, is an error, as is a Diff outside tol.
func Compare(got, want []float32, tol Tolerance) (Diff, error) {
	var d Diff
	if len(got) != len(want) {
		return d, fmt.Errorf("length %d, want %d", len(got), len(want))
	}
	var num, den, wmax float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			if g == w || (math.IsNaN(g) && math.IsNaN(w)) {
				continue
			}
			return d, fmt.Errorf("non-finite output %v at %d (want %v)", g, i, w)
		}
		e := math.Abs(g - w)
		num += e * e
		den += w * w
		if e > d.MaxAbs {
			d.MaxAbs, d.At = e, i
		}
		wmax = math.Max(wmax, math.Abs(w))
	}
	switch {
	case den > 0:
		d.RelRMS = math.Sqrt(num / den)
	case num > 0:
		d.RelRMS = math.Inf(1)
	}
	switch {
	case wmax > 0:
		d.MaxRel = d.MaxAbs / wmax
	case d.MaxAbs > 0:
		d.MaxRel = math.Inf(1)
	}
	if d.RelRMS > tol.RelRMS || d.MaxRel > tol.MaxRel {
		return d, fmt.Errorf("rel RMS %.3g (tol %.3g), max rel %.3g (tol %.3g) at %d: got %v want %v",
			d.RelRMS, tol.RelRMS, d.MaxRel, tol.MaxRel, d.At, got[d.At], want[d.At])
	}
	return d, nil
}

// RunOutput prepares v for p with cfg, runs it once from a Reset problem,
// and returns a copy of the output.
func RunOutput(v *Variant, p Problem, cfg Config) ([]float32, error) {
	inst, err := v.Instantiate(p, cfg)
	if err != nil {
		return nil, err
	}
	p.Reset()
	inst.Run()
	return append([]float32(nil), p.Output()...), nil
}

// ReferenceOutput builds the problem for (op, shape, dtype, seed) and runs
// the op's reference on it.
func ReferenceOutput(op *Op, s Shape, dt DType, seed uint64) ([]float32, error) {
	p, err := op.NewProblem(s, dt, seed)
	if err != nil {
		return nil, err
	}
	return ReferenceOn(op, p)
}

// ReferenceOn runs the op's reference on the problem p (reset first).
func ReferenceOn(op *Op, p Problem) ([]float32, error) {
	ref := Reference(op.Name)
	if ref == nil {
		return nil, fmt.Errorf("%s: no reference registered", op.Name)
	}
	// a threaded reference (per-output float64 sums, so the same bits on
	// any thread count) runs on every usable CPU: the tuner checks
	// candidates at the shapes it times
	return RunOutput(ref, p, ref.DefaultConfig(p.Shape(), pool.Default().Size()))
}

// Verify runs v at (shape, dtype, seed, cfg) and compares its output with
// want (the reference's output for the same problem; computed when nil).
func Verify(v *Variant, s Shape, dt DType, seed uint64, cfg Config, want []float32) (Diff, error) {
	op := LookupOp(v.Op)
	if op == nil {
		return Diff{}, fmt.Errorf("%s: op not registered", v.ID())
	}
	if err := op.Check(s); err != nil {
		return Diff{}, err
	}
	var err error
	if want == nil {
		if want, err = ReferenceOutput(op, s, dt, seed); err != nil {
			return Diff{}, err
		}
	}
	p, err := op.NewProblem(s, dt, seed)
	if err != nil {
		return Diff{}, err
	}
	return VerifyOn(v, p, cfg, want)
}

// VerifyOn runs v on the problem p (reset first; p may be shared by
// several checks) and compares its output with want, the reference's
// output for p.
func VerifyOn(v *Variant, p Problem, cfg Config, want []float32) (Diff, error) {
	op := LookupOp(v.Op)
	if op == nil {
		return Diff{}, fmt.Errorf("%s: op not registered", v.ID())
	}
	s := p.Shape()
	got, err := RunOutput(v, p, cfg)
	if err != nil {
		return Diff{}, err
	}
	d, err := Compare(got, want, op.Tol(v.Class, s))
	if err != nil {
		return d, fmt.Errorf("%s at %s dtype=%s %v: %v", v.ID(), s, p.DType(), cfg.Params, err)
	}
	return d, nil
}

// BenchName is the sub-benchmark path of the project's naming scheme:
// "op=<op>/dtype=<dt>/variant=<v>/<shape>[/<extra>...]/threads=<n>", under
// Benchmark<Family>. extra holds keys such as "mem=dram".
func BenchName(v *Variant, dt DType, s Shape, threads int, extra ...string) string {
	op := LookupOp(v.Op)
	short := v.Op
	if op != nil {
		short = op.Short()
	}
	name := fmt.Sprintf("op=%s/dtype=%s/variant=%s", short, dt, v.Name)
	if len(s) > 0 {
		name += "/" + s.String()
	}
	for _, e := range extra {
		name += "/" + e
	}
	return fmt.Sprintf("%s/threads=%d", name, threads)
}
