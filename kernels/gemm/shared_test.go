package gemm

import (
	"sync"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// The tests run every variant, thread count and configuration on the same
// few problems. Building a problem (quantizing its random weights), its
// float64 reference and the check's bounds (the weights dequantized, each
// output's scale and floor, the ideal output on rounded activations) were
// 80% of the package's test time when redone for each run; sharedCase and
// boundsOf do each once per (op, shape, dtype, seed) and class.

type caseKey struct {
	op, shape string
	dt        kernel.DType
	seed      uint64
}

// sharedCase is one problem of the memo: base is never run (each run gets
// a Copy: own weights and output, base's activations shared read-only),
// bounds per class.
type sharedCase struct {
	base   *problem
	want   []float32
	bounds map[kernel.Class]*bounds
	model  *errModel // the bounds' class-independent part, once
}

var shared struct {
	sync.Mutex
	byKey map[caseKey]*sharedCase
	byX   map[*float32]*sharedCase // a copy's activations name its case
}

// sharedProblem returns a problem of (op, s, dt, seed) to run once, and
// the op's reference output on it.
func sharedProblem(t testing.TB, op string, s kernel.Shape, dt kernel.DType, seed uint64) (*problem, []float32) {
	t.Helper()
	k := caseKey{op, s.String(), dt, seed}
	shared.Lock()
	c := shared.byKey[k]
	shared.Unlock()
	if c == nil {
		o := kernel.LookupOp(op)
		p, err := o.NewProblem(s, dt, seed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := kerneltest.ReferenceOutput(o, s, dt, seed)
		if err != nil {
			t.Fatal(err)
		}
		c = &sharedCase{base: p.(*problem), want: want, bounds: map[kernel.Class]*bounds{}}
		shared.Lock()
		if shared.byKey == nil {
			shared.byKey, shared.byX = map[caseKey]*sharedCase{}, map[*float32]*sharedCase{}
		}
		if old := shared.byKey[k]; old != nil {
			c = old
		} else {
			shared.byKey[k], shared.byX[&c.base.x[0]] = c, c
		}
		shared.Unlock()
	}
	return c.base.Copy().(*problem), c.want
}

// boundsOf returns dotCheck's bounds on p for class cls:
// kept with p's shared case when p is a copy of one, computed afresh
// otherwise.
func boundsOf(p *problem, cls kernel.Class) *bounds {
	var c *sharedCase
	if len(p.x) > 0 {
		shared.Lock()
		c = shared.byX[&p.x[0]]
		shared.Unlock()
	}
	if c != nil && c.base.op == p.op && len(c.base.x) == len(p.x) {
		shared.Lock()
		b := c.bounds[cls]
		shared.Unlock()
		if b != nil {
			return b
		}
		shared.Lock()
		e := c.model
		shared.Unlock()
		if e == nil {
			e = newErrModel(c.base)
		}
		b = e.bounds(c.base, cls)
		shared.Lock()
		c.bounds[cls], c.model = b, e
		shared.Unlock()
		return b
	}
	return newErrModel(p).bounds(p, cls)
}
