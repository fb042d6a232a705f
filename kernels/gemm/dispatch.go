package gemm

import "github.com/ktune/ktune/internal/kernel"

// Which kernel runs: a call's op is gemm.gemv up to Crossover rows and
// gemm.gemm above (LinearOp), and the caller's kernel.Rules choose the
// variant and configuration for the op at its M×N×K (Choose); Run then
// runs what was chosen.

// Crossover is the largest M Linear looks up as gemm.gemv (the profile's
// decode entries) rather than gemm.gemm (its prefill entries): the largest
// decode batch the tuner tunes (tuner.FullClasses, checked by its tests),
// which is also where the kernels' own streaming regime ends (gemvMaxM).
// It is not tuned: between 8 and the 64-token prefill class no workload
// compares the two.
const Crossover = 8

// LinearOp is the op a product of m rows runs as: OpGEMV up to Crossover
// rows, OpGEMM above.
func LinearOp(m int) string {
	if m <= Crossover {
		return OpGEMV
	}
	return OpGEMM
}

// Choose is what runs op at M×N×K under the caller's rules: its tuning
// profile's choice among the accuracy classes they allow, else the default
// variant.
func Choose(r kernel.Rules, op string, dt kernel.DType, m, n, k int, threads int) kernel.Choice {
	return r.ChooseDims(op, dt, shapeKeys, []int{m, n, k}, threads)
}
