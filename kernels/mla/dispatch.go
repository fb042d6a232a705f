package mla

import (
	"math"
	"math/bits"
	"slices"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// Which kernel runs: every rule the MLA layer applies on top of the
// caller's kernel.Rules (its tuning profile and classes) is here. Decode
// asks at the middle of the context's half-octave (ctxBucket), so a
// growing context does not ask anew per token; prefill over a cached
// prefix at least as long as the new tokens runs the absorbed form unless
// the profile measured a faster choice there (absorbedAt, the prefill op's
// DefaultAt, which the tuner confirms against); the prefill's classes
// follow the projections' format (prefillClasses).

// prefillClasses are the accuracy classes the prefill may choose from:
// f32 (its attention has f32 variants only, so f32 is always among them),
// and int8act where classes (nil: kernel.DefaultClasses) allow it and the
// layer's projections are int8-quantized formats (dt neither F32 nor
// BF16): a model of exact weights keeps exact attention, one of quantized
// projections decompresses K and V on Q8 too.
func prefillClasses(classes []kernel.Class, dt kernel.DType) []kernel.Class {
	if len(classes) == 0 {
		classes = kernel.DefaultClasses
	}
	out := []kernel.Class{kernel.ClassF32}
	if int8Projections(dt) && slices.Contains(classes, kernel.ClassInt8Act) {
		out = append(out, kernel.ClassInt8Act)
	}
	return out
}

// int8Projections reports whether projections in dt are int8-quantized
// formats (Q8 … Q2, the GGUF block types: no float format).
func int8Projections(dt kernel.DType) bool { return !quant.IsFloat(dt) }

// absorbedAt is the prefill's untuned rule (its Op.DefaultAt): over a
// cached prefix at least as long as the new tokens, the absorbed form
// (decompressing every cached key for a few queries cost 35 GFLOP per MLA
// layer at a 4K context), on its int8act scores (absorbed_int8) where
// int8act is allowed and that variant runs; nil (the default variant)
// otherwise. The tuner times the prefill over a cached prefix too
// (tune.go): a profile's choice there replaces the rule where it measured
// faster than the rule's answer.
func absorbedAt(s kernel.Shape, _ kernel.DType, classes []kernel.Class) *kernel.Variant {
	if s.Get("p") < s.Get("t") {
		return nil
	}
	names := []string{"absorbed"}
	if slices.Contains(classes, kernel.ClassInt8Act) {
		names = []string{"absorbed_int8", "absorbed"} // its scores on Q8 keys where it is registered
	}
	for _, name := range names {
		if v, err := kernel.Lookup(OpPrefill + "/" + name); err == nil && v.Available() && slices.Contains(classes, v.Class) {
			return v
		}
	}
	return nil
}

// ctxBucket stands for the context length n in the decode's kernel
// choice: the middle (in log2) of n's half-octave [2^(j/2), 2^((j+1)/2)),
// j = ⌊2·log2 n⌋, rounded to an integer. A tuning profile picks the entry
// nearest in Σ|log2| over the shape, so its choice changes only at
// midpoints between tuned contexts, which for contexts tuned at powers of
// two (ktune's: 4096, 32768, 131072) fall on half-octave edges: every n in
// a half-octave gets the choice its middle gets, the exact length's
// (TestCtxBucket), except n exactly on such a midpoint, where the profile
// breaks the tie by speed.
func ctxBucket(n int) int {
	if n < 2 {
		return 1
	}
	k := bits.Len(uint(n)) - 1 // 2^k ≤ n < 2^(k+1)
	j := 2 * k
	if float64(n)*float64(n) >= 2*math.Ldexp(1, 2*k) { // n ≥ 2^(k+½)
		j++
	}
	return int(math.Round(math.Exp2(float64(j)/2 + 0.25)))
}

func pick(p *kernel.Choice, r kernel.Rules, op string, s kernel.Shape, threads int) *kernel.Choice {
	if p != nil {
		return p
	}
	c := r.Choose(op, kernel.F32, s, threads)
	return &c
}
