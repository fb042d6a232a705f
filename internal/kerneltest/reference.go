package kerneltest

import (
	"slices"
	"sync"

	"github.com/ktune/ktune/internal/kernel"
)

// refKey names a reference output: the same op, shape, dtype and seed
// build the same problem (NewProblem is deterministic), so they give the
// same output.
type refKey struct {
	op, shape string
	dt        kernel.DType
	seed      uint64
}

var refs struct {
	sync.Mutex
	out map[refKey][]float32
}

// ReferenceOutput is kernel.ReferenceOutput computed once per (op, shape,
// dtype, seed) in a test binary: the tests check every variant, thread
// count and configuration against the same few problems, and the float64
// reference, recomputed for each, was most of their time. The caller gets
// its own copy.
func ReferenceOutput(op *kernel.Op, s kernel.Shape, dt kernel.DType, seed uint64) ([]float32, error) {
	k := refKey{op.Name, s.String(), dt, seed}
	refs.Lock()
	out, ok := refs.out[k]
	refs.Unlock()
	if !ok {
		var err error
		if out, err = kernel.ReferenceOutput(op, s, dt, seed); err != nil {
			return nil, err
		}
		refs.Lock()
		if refs.out == nil {
			refs.out = map[refKey][]float32{}
		}
		refs.out[k] = out
		refs.Unlock()
	}
	return slices.Clone(out), nil
}
