package kernel

import (
	"fmt"
	"sync/atomic"

	"github.com/ktune/ktune/internal/cpu"
)

// regGen changes whenever registrations or forced variants change.
var regGen atomic.Uint64

// Dispatcher caches a family's typed default implementation of an op for
// hot paths: Get is two atomic loads until the effective CPU features or
// the registry change, then it re-selects through Default. T is the
// family's kernel function type, stored in Variant.Impl.
type Dispatcher[T any] struct {
	Op    string
	DType DType
	state atomic.Pointer[dispatchState[T]]
}

type dispatchState[T any] struct {
	cpuGen, regGen uint64
	v              *Variant
	fn             T
}

// Get returns the default variant's typed implementation.
func (d *Dispatcher[T]) Get() (T, *Variant) {
	cg, rg := cpu.Generation(), regGen.Load()
	if s := d.state.Load(); s != nil && s.cpuGen == cg && s.regGen == rg {
		return s.fn, s.v
	}
	v := Default(d.Op, d.DType)
	if v == nil {
		panic(fmt.Sprintf("kernel: no variant registered for %s", d.Op))
	}
	fn, ok := v.Impl.(T)
	if !ok {
		panic(fmt.Sprintf("kernel: %s: Impl has type %T, want %T", v.ID(), v.Impl, fn))
	}
	d.state.Store(&dispatchState[T]{cpuGen: cg, regGen: rg, v: v, fn: fn})
	return fn, v
}
