package gemm

import (
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// The family's tuning workloads: the model's matmuls at the shape classes,
// weights as deployed (Q8, Q4, Q3, Q6, Q5, Q2 and the K formats; --quick Q4 only). Decode is streamed
// cold; prefill runs warm. Checked at the timed shapes (the reference is
// threaded).
func init() { kernel.RegisterWorkloads("gemm", workloads) }

func workloads(s arch.Shapes, sc kernel.ShapeClasses, quick bool) []kernel.Workload {
	dts := []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q4K, kernel.Q3K, kernel.Q5K, kernel.Q6K}
	if quick {
		dts = []kernel.DType{kernel.Q4}
	}
	type lin struct {
		label string
		n, k  int
	}
	// one attention input and one attention output projection, the experts'
	var attn, down []lin
	if s.NumKDALayers > 0 {
		attn = append(attn, lin{"kda.q_proj", s.KDAProj, s.Hidden})
		if !quick {
			attn = append(attn, lin{"kda.o_proj", s.Hidden, s.KDAProj})
		}
	}
	if s.Experts > 0 {
		down = append(down, lin{"moe.expert.down", s.Hidden, s.ExpertInter})
	}
	var out []kernel.Workload
	add := func(op string, dt kernel.DType, class, label string, cold bool, m, n, k int) {
		out = append(out, kernel.Workload{Op: op, DType: dt, Shape: kernel.MakeShape(shapeKeys, m, n, k), ShapeClass: class, Label: label, Cold: cold})
	}
	for _, dt := range dts {
		for _, m := range sc.Decode {
			class := kernel.DecodeClass(m)
			for _, l := range append(append([]lin{}, attn...), down...) {
				add(OpGEMV, dt, class, l.label, true, m, l.n, l.k)
			}
			if s.Experts > 0 {
				add(OpGateUp, dt, class, "moe.expert.gate_up", true, m, s.ExpertInter, s.Hidden)
			}
		}
		for _, t := range sc.Prefill {
			class := kernel.PrefillClass(t)
			for _, l := range attn {
				add(OpGEMM, dt, class, l.label, false, t, l.n, l.k)
			}
			if s.Experts > 0 && s.Experts >= s.TopK {
				// tokens per routed expert with uniform routing
				add(OpGateUp, dt, class, "moe.expert.gate_up", false, max(t*s.TopK/s.Experts, 1), s.ExpertInter, s.Hidden)
			}
		}
	}
	return out
}
