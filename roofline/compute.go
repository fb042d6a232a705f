package roofline

// This file holds the compute microkernel table: one entry per ceiling an
// ISA offers. Architecture files (compute_amd64.go; arm64 NEON/SVE later)
// add their entries in init; the pure-Go entry is always there.

import (
	"github.com/ktune/ktune/internal/cpu"
)

// ComputeKernel is one compute-ceiling microbenchmark: Fn(n) runs n loop
// trips of independent accumulator chains, each trip OpsPerTrip
// operations (an FMA counts 2, a VPDPBUSD lane 4 multiplies and 4 adds).
type ComputeKernel struct {
	Name       string  // ceiling name, "<isa>_<op>_<dtype>"
	DType      string  // f32, f64, int8, bf16
	Requires   cpu.Set // features the instruction needs
	Chains     int     // independent accumulators
	OpsPerTrip float64 // FLOPs (or integer OPs) per trip
	Fn         func(n int64)
}

// ISA spells Requires for reports ("go" when nothing is needed).
func (k *ComputeKernel) ISA() string {
	if k.Requires == 0 {
		return "go"
	}
	return k.Requires.String()
}

var computeKernels []*ComputeKernel

func registerCompute(k *ComputeKernel) { computeKernels = append(computeKernels, k) }

// ComputeKernels lists the kernels the effective CPU features allow, in
// registration order (pure Go first, then narrow to wide).
func ComputeKernels() []*ComputeKernel {
	var out []*ComputeKernel
	for _, k := range computeKernels {
		if cpu.HasAll(k.Requires) {
			out = append(out, k)
		}
	}
	return out
}

// clockTrip is the number of dependent one-cycle adds per trip of the
// clock kernel; clockFn is nil where no clock kernel exists.
var (
	clockTrip float64
	clockFn   func(n int64) int64
)

// goChains is the number of independent chains of the pure-Go kernel.
const goChains = 8

// goF64 is the portable floor: 8 independent float64 multiply-add chains
// (the compiler emits a multiply and an add, or an FMA where GOARCH fuses;
// either way 2 FLOPs per element per trip).
func goF64(n int64) {
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	m, c := goMul, goAdd
	for i := int64(0); i < n; i++ {
		a0 = a0*m + c
		a1 = a1*m + c
		a2 = a2*m + c
		a3 = a3*m + c
		a4 = a4*m + c
		a5 = a5*m + c
		a6 = a6*m + c
		a7 = a7*m + c
	}
	goSink = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}

// goMul and goAdd are variables so the compiler cannot fold the chains;
// goSink keeps the result live.
var goMul, goAdd, goSink = 0.5, 1.0, 0.0

func init() {
	registerCompute(&ComputeKernel{Name: "go_f64", DType: "f64", Chains: goChains, OpsPerTrip: 2 * goChains, Fn: goF64})
}
