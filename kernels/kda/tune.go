package kda

import (
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// The family's tuning workloads: the recurrence per decode step (one token
// of b sequences) and the prefill pass over t tokens, f32, all heads.
// Checked at the timed shapes: every chunk, the state carried between them.
func init() { kernel.RegisterWorkloads("kda", workloads) }

func workloads(s arch.Shapes, sc kernel.ShapeClasses, quick bool) []kernel.Workload {
	if s.NumKDALayers == 0 {
		return nil
	}
	H, D := s.KDAHeads, s.KDAHeadDim
	var out []kernel.Workload
	for _, b := range sc.Decode {
		out = append(out, kernel.Workload{Op: OpDecode, DType: kernel.F32, ShapeClass: kernel.DecodeClass(b), Label: "kda",
			Shape: kernel.MakeShape(decodeKeys, b, H, D, D)})
	}
	for _, t := range sc.Prefill {
		out = append(out, kernel.Workload{Op: OpPrefill, DType: kernel.F32, ShapeClass: kernel.PrefillClass(t), Label: "kda",
			Shape: kernel.MakeShape(prefillKeys, 1, t, H, D, D)})
	}
	return out
}
