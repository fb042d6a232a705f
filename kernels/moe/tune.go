package moe

import (
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// The family's tuning workloads: the whole block (router, top-k experts,
// shared expert) at Kimi's expert count, per decode step and prefill pass,
// Q8, Q4, Q3, Q6, Q5, Q2 and the K formats (--quick: Q4, the first decode class). Not cycled through
// copies: one block of all the experts is already ≥ 1 GiB at Kimi's shape.
// Checked at verifyShape.
func init() { kernel.RegisterWorkloads("moe", workloads) }

func workloads(s arch.Shapes, sc kernel.ShapeClasses, quick bool) []kernel.Workload {
	if s.Experts == 0 {
		return nil
	}
	dts := []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2, kernel.Q4K, kernel.Q3K, kernel.Q5K, kernel.Q6K}
	if quick {
		dts = []kernel.DType{kernel.Q4}
	}
	var out []kernel.Workload
	add := func(dt kernel.DType, class string, n int) {
		out = append(out, kernel.Workload{Op: OpBlock, DType: dt, ShapeClass: class, Label: "moe",
			Shape: kernel.MakeShape(blockKeys, n, s.Experts, s.TopK, s.Hidden, s.ExpertInter)})
	}
	for _, dt := range dts {
		for i, n := range sc.Decode {
			if quick && i > 0 {
				continue
			}
			add(dt, kernel.DecodeClass(n), n)
		}
		for _, t := range sc.Prefill {
			add(dt, kernel.PrefillClass(t), t)
		}
	}
	return out
}
