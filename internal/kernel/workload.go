package kernel

import (
	"fmt"
	"sync"

	"github.com/ktune/ktune/internal/arch"
)

// A Workload is one (op, dtype, shape) the tuner measures, with the shape
// class it stands for. Each kernel family declares its own (RegisterWorkloads)
// beside its kernels, from the model's shapes.
type Workload struct {
	Op         string
	DType      DType
	Shape      Shape
	ShapeClass string // "decode-1", "prefill-512", "ctx-32K"
	Label      string // which projection or layer part, e.g. "moe.expert.gate_up"
	// Cold marks bandwidth-bound workloads timed with weights that do not
	// stay in cache (several copies cycled, ≥ ColdBytes in all).
	Cold bool
}

// VerifyShape is the shape a candidate tuned for w is checked at against
// the reference: w.Shape itself, or the smaller shape its family declares
// (Op.Verify) with the same panels, chunks and context splits.
func (w Workload) VerifyShape() Shape {
	if op := LookupOp(w.Op); op != nil {
		return op.VerifyShape(w.Shape, w.DType)
	}
	return w.Shape
}

// Check reports why the tuner could not run w: its op not registered,
// the dtype not served, or the shape refused.
func (w Workload) Check() error {
	op := LookupOp(w.Op)
	switch {
	case op == nil:
		return fmt.Errorf("workload %s %s %s: op not registered", w.Op, w.DType, w.Shape)
	case !op.Serves(w.DType):
		return fmt.Errorf("workload %s %s %s: the op serves no %s", w.Op, w.DType, w.Shape, w.DType)
	}
	if err := op.Check(w.Shape); err != nil {
		return fmt.Errorf("workload %s %s: %v", w.Op, w.DType, err)
	}
	return op.Check(w.VerifyShape())
}

// ShapeClasses are the token counts and contexts tuned.
type ShapeClasses struct {
	Decode   []int // tokens per decode step (batch of sequences)
	Prefill  []int // prompt tokens of one prefill pass
	Contexts []int // MLA cached tokens
}

// WorkloadsFunc lists a family's workloads for the model's shapes at the
// shape classes; quick keeps a representative subset (--quick).
type WorkloadsFunc func(s arch.Shapes, sc ShapeClasses, quick bool) []Workload

var (
	wlMu       sync.Mutex
	wlFamilies []string
	wlFuncs    = map[string]WorkloadsFunc{}
)

// RegisterWorkloads declares a kernel family's tuning workloads (once per
// family, from its init).
func RegisterWorkloads(family string, fn WorkloadsFunc) {
	wlMu.Lock()
	defer wlMu.Unlock()
	if _, dup := wlFuncs[family]; dup {
		panic("kernel: workloads of family " + family + " registered twice")
	}
	wlFamilies = append(wlFamilies, family)
	wlFuncs[family] = fn
}

// Workloads lists every registered family's workloads, families in
// registration order.
func Workloads(s arch.Shapes, sc ShapeClasses, quick bool) []Workload {
	wlMu.Lock()
	fams := append([]string(nil), wlFamilies...)
	wlMu.Unlock()
	var out []Workload
	for _, f := range fams {
		out = append(out, wlFuncs[f](s, sc, quick)...)
	}
	return out
}

// DecodeClass names the class of a decode step of n tokens ("decode-8").
func DecodeClass(n int) string { return fmt.Sprintf("decode-%d", n) }

// PrefillClass names the class of a prefill pass of t tokens ("prefill-512").
func PrefillClass(t int) string { return fmt.Sprintf("prefill-%d", t) }

// ContextClass names the class of an MLA context of c tokens ("ctx-32K").
func ContextClass(c int) string {
	if c%1024 == 0 {
		return fmt.Sprintf("ctx-%dK", c/1024)
	}
	return fmt.Sprintf("ctx-%d", c)
}
