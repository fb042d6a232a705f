package mla

import (
	"slices"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// The family's tuning workloads: the absorbed decode of one sequence over
// each context class, and the causal prefill pass of t tokens on an empty
// cache and (not --quick) over the shortest context class cached, f32 (the
// cache dtypes are the variants' business). Decode is checked at
// verifyDecode, prefill at verifyPrefill.
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
	if quick || len(sc.Contexts) == 0 {
		return out
	}
	// over the shortest context class cached (a chunked prefill's later
	// chunks, a follow-up turn): where absorbedAt's rule applies, so its
	// answer is what every candidate is confirmed against
	p := slices.Min(sc.Contexts)
	for _, t := range sc.Prefill {
		out = append(out, kernel.Workload{Op: OpPrefill, DType: kernel.F32, ShapeClass: kernel.PrefillClass(t), Label: "mla.over-" + kernel.ContextClass(p),
			Shape: kernel.MakeShape(prefillKeys, t, p, s.MLAHeads, s.QKNope, s.QKRope, s.VHead, s.KVLoraRank)})
	}
	return out
}
