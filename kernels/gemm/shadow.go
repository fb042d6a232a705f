package gemm

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// ShadowCall is one call that a shadow check saw: the output of the
// variant that ran, and the output of the pure-Go variant of the same
// accuracy class on the same operands.
type ShadowCall struct {
	Op, Variant string // the op, and the variant that ran
	Portable    string // the pure-Go variant it was compared with
	DType       kernel.DType
	M, N, K     int
	Got, Want   []float32 // the outputs [M×N], valid during the call only; Got is the caller's
}

type shadowHook struct{ f func(*ShadowCall) }

var shadow atomic.Pointer[shadowHook]

// SetShadow makes every Run and GateUp of a variant that is not pure Go
// also run the pure-Go variant of the same accuracy class (generic,
// generic_int8) on the same activations and weights, and pass both
// outputs to f; nil turns it off. It is a test instrument: the engine's
// same-arithmetic check of int8 activations compares call by call, since
// a 1e-7 difference between two whole runs can flip an activation's int8
// rounding and move the logits by far more than the arithmetic differs.
// f may be called from several goroutines at once (the MoE block runs
// experts in parallel). Off, a call pays one atomic load.
func SetShadow(f func(*ShadowCall)) {
	if f == nil {
		shadow.Store(nil)
		return
	}
	shadow.Store(&shadowHook{f})
}

// portableOf is the pure-Go variant of v's op and class serving dt, or
// nil when v is one or none exists.
func portableOf(v *kernel.Variant, dt kernel.DType) *kernel.Variant {
	if v.Reference || strings.HasPrefix(v.Name, "generic") {
		return nil
	}
	for _, c := range kernel.Candidates(v.Op, dt, []kernel.Class{v.Class}) {
		if strings.HasPrefix(c.Name, "generic") {
			return c
		}
	}
	return nil
}

// shadowRun, with a hook set, runs the portable counterpart of p on the
// same operands as the call that wrote y (whose value before the call,
// for acc, is y0) and hands both to the hook. wu is gate/up's up matrix.
func shadowRun(h *shadowHook, p kernel.Choice, y, y0, x []float32, w, wu *quant.Matrix, m int, acc bool) {
	pv := portableOf(p.Variant, w.DType)
	if pv == nil {
		return
	}
	want := slices.Clone(y0)
	q := kernel.Choice{Variant: pv, Config: pv.DefaultConfig(nil, max(p.Config.Threads, 1))}
	im := implOf(pv)
	a := newArgs(im, want, x, w, m, acc)
	a.wu = wu
	im.run(a, q.Config)
	a.release()
	h.f(&ShadowCall{Op: p.Variant.Op, Variant: p.Variant.Name, Portable: pv.Name, DType: w.DType,
		M: m, N: w.N, K: w.K, Got: y[:m*w.N], Want: want[:m*w.N]})
}
