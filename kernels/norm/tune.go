package norm

import (
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// The family's tuning workloads: RMSNorm over the hidden width for one
// decode token and the longest prefill pass.
func init() { kernel.RegisterWorkloads("norm", workloads) }

func workloads(s arch.Shapes, sc kernel.ShapeClasses, quick bool) []kernel.Workload {
	var out []kernel.Workload
	add := func(class string, m int) {
		out = append(out, kernel.Workload{Op: OpRMSNorm, DType: kernel.F32, ShapeClass: class, Label: "norm",
			Shape: kernel.MakeShape(rmsKeys, m, s.Hidden)})
	}
	if len(sc.Decode) > 0 {
		add(kernel.DecodeClass(1), 1)
	}
	if len(sc.Prefill) > 0 {
		t := sc.Prefill[len(sc.Prefill)-1]
		add(kernel.PrefillClass(t), t)
	}
	return out
}
