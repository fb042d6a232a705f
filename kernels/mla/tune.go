package mla

import (
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// The family's tuning workloads: the absorbed decode of one sequence over
// each context class, and the causal prefill pass of t tokens on an empty
// cache, f32 (the cache dtypes are the variants' business). Decode is
// checked at verifyDecode, prefill at the timed shape.
func init() { kernel.RegisterWorkloads("mla", workloads) }

func workloads(s arch.Shapes, sc kernel.ShapeClasses, quick bool) []kernel.Workload {
	if s.NumMLALayers == 0 {
		return nil
	}
	var out []kernel.Workload
	for _, c := range sc.Contexts {
		out = append(out, kernel.Workload{Op: OpDecode, DType: kernel.F32, ShapeClass: kernel.ContextClass(c), Label: "mla",
			Shape: kernel.MakeShape(decodeKeys, 1, c, s.MLAHeads, s.KVLoraRank, s.QKRope)})
	}
	for _, t := range sc.Prefill {
		out = append(out, kernel.Workload{Op: OpPrefill, DType: kernel.F32, ShapeClass: kernel.PrefillClass(t), Label: "mla",
			Shape: kernel.MakeShape(prefillKeys, t, 0, s.MLAHeads, s.QKNope, s.QKRope, s.VHead, s.KVLoraRank)})
	}
	return out
}
