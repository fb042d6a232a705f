// Package kernel is the variant registry every kernel family implements.
//
// An op ("family.op", e.g. "gemm.gemv") describes a computation: its shape
// keys, the dtypes it serves, how to build a random problem, and how many
// FLOPs and bytes one run costs. A variant ("gemm.gemv/avx512_vnni") is one
// implementation of an op: the CPU features it needs, its accuracy class, its
// tunable parameters, and a constructor that prepares an Instance (packs
// weights, allocates scratch) for a problem and a configuration. Each op has
// exactly one reference variant (plain Go, float64 accumulation): tests and
// the tuner's correctness gate compare every other variant with it, and it is
// never a tuning candidate.
//
// Families register ops and variants in init functions; variants written in
// assembly register from files built only where they assemble
// (amd64 && gc && !purego, ...), so a variant exists in a binary only where it
// can run, and is available only where the effective CPU features (package
// cpu, after masks) include its requirements.
package kernel

import (
	"fmt"
	"sort"
	"strings"
)

// DType is a weight (or data) type a variant serves.
type DType string

// Data types.
const (
	F32  DType = "f32"
	BF16 DType = "bf16"
	F16  DType = "f16"
	Q8   DType = "q8"
	Q4   DType = "q4"
	Q3   DType = "q3"
	Q6   DType = "q6"
	Q2   DType = "q2"
	Q5   DType = "q5"
	// The K formats (package quant, kquant.go): b-bit weights with 6-bit
	// scale and min codes per group of 32 under an f16 pair per 256.
	Q3K DType = "q3k"
	Q4K DType = "q4k"
	Q5K DType = "q5k"
	Q6K DType = "q6k"

	// The GGUF formats: ggml's block types as a GGUF file stores them,
	// row-major (each row K/blocksize blocks, ggml-common.h's layouts),
	// read in place from the file's mapping (package quant, gguf.go).
	// The names are ggml's own behind a "gguf-" prefix, so that none is
	// mistaken for a panel format above (gguf-q4_K is not q4k).
	GGUFQ8_0   DType = "gguf-q8_0"
	GGUFQ4_0   DType = "gguf-q4_0"
	GGUFQ4_1   DType = "gguf-q4_1"
	GGUFQ5_0   DType = "gguf-q5_0"
	GGUFQ5_1   DType = "gguf-q5_1"
	GGUFQ2_K   DType = "gguf-q2_K"
	GGUFQ3_K   DType = "gguf-q3_K"
	GGUFQ4_K   DType = "gguf-q4_K"
	GGUFQ5_K   DType = "gguf-q5_K"
	GGUFQ6_K   DType = "gguf-q6_K"
	GGUFIQ4_NL DType = "gguf-iq4_nl"
	GGUFIQ4_XS DType = "gguf-iq4_xs"
	GGUFMXFP4  DType = "gguf-mxfp4"
	GGUFF16    DType = "gguf-f16"
	GGUFBF16   DType = "gguf-bf16"
	GGUFF32    DType = "gguf-f32"
)

// GGUFDTypes lists the GGUF formats, the quantized ones first.
var GGUFDTypes = []DType{GGUFQ8_0, GGUFQ4_0, GGUFQ4_1, GGUFQ5_0, GGUFQ5_1, GGUFQ2_K, GGUFQ3_K, GGUFQ4_K, GGUFQ5_K,
	GGUFQ6_K, GGUFIQ4_NL, GGUFIQ4_XS, GGUFMXFP4, GGUFF16, GGUFBF16, GGUFF32}

// Class is an accuracy class: the tuner compares only like with like, and
// the user chooses which classes may run.
type Class string

// Accuracy classes.
const (
	// ClassF32: f32 arithmetic on f32 (or exactly widened) inputs.
	ClassF32 Class = "f32"
	// ClassInt8Act: activations quantized to int8 (integer dot products).
	ClassInt8Act Class = "int8act"
	// ClassBF16Act: activations rounded to BF16 (BF16 dot products). Opt-in.
	ClassBF16Act Class = "bf16act"
)

// DefaultClasses are the classes allowed unless the user says otherwise.
var DefaultClasses = []Class{ClassF32, ClassInt8Act}

// ParseClasses parses a comma-separated class list.
func ParseClasses(list string) ([]Class, error) {
	var cs []Class
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		switch Class(s) {
		case "":
		case ClassF32, ClassInt8Act, ClassBF16Act:
			cs = append(cs, Class(s))
		default:
			return nil, fmt.Errorf("unknown accuracy class %q (known: f32, int8act, bf16act)", s)
		}
	}
	return cs, nil
}

// Tolerance bounds the difference between a variant's output and the
// reference's: RelRMS on sqrt(Σ(got−want)²/Σwant²), MaxRel on
// max|got−want| / max|want|. NaN or Inf never passes.
type Tolerance struct {
	RelRMS float64 `json:"rel_rms"`
	MaxRel float64 `json:"max_rel"`
}

// Named tolerances per accuracy class, against the float64 reference.
var (
	// TolF32: f32 arithmetic, reductions of a few thousand terms.
	TolF32 = Tolerance{RelRMS: 1e-5, MaxRel: 1e-4}
	// TolInt8Act: activations rounded to int8 per row or group (≈0.4% RMS).
	TolInt8Act = Tolerance{RelRMS: 2e-2, MaxRel: 1e-1}
	// TolBF16Act: activations rounded to BF16 (8 mantissa bits).
	TolBF16Act = Tolerance{RelRMS: 1e-2, MaxRel: 5e-2}
)

// ClassTolerance returns the named tolerance of a class.
func ClassTolerance(c Class) Tolerance {
	switch c {
	case ClassInt8Act:
		return TolInt8Act
	case ClassBF16Act:
		return TolBF16Act
	}
	return TolF32
}

// Cost is what one run of an op at a shape computes and moves, for
// roofline points: arithmetic intensity = FLOPs / Bytes.
type Cost struct {
	FLOPs float64 `json:"flops"`
	Bytes float64 `json:"bytes"`
	// Footprint is the distinct bytes a run touches (0: Bytes), which is
	// what must fit a cache level for a warm run to run from it: a state
	// read and written once moves twice its size but occupies it once.
	Footprint float64 `json:"footprint,omitempty"`
}

// WorkingSet is Footprint, or Bytes when the op did not count it apart.
func (c Cost) WorkingSet() float64 {
	if c.Footprint > 0 {
		return c.Footprint
	}
	return c.Bytes
}

// Intensity is FLOPs per byte (0 when no bytes are moved).
func (c Cost) Intensity() float64 {
	if c.Bytes == 0 {
		return 0
	}
	return c.FLOPs / c.Bytes
}

// Problem is one op's inputs and output at a shape, built by Op.NewProblem
// from a seed. Each family defines its concrete problem type; its variants
// type-assert to it in New.
type Problem interface {
	Shape() Shape
	DType() DType
	// Reset restores whatever a run mutates (outputs that accumulate,
	// recurrent state) so that every run starts from the same inputs.
	Reset()
	// Output is what is compared with the reference after a run.
	Output() []float32
}

// A Copier is a Problem that makes another copy of itself in memory of its
// own (the same inputs; an output of its own). The tuner's cold workloads
// cycle through hundreds of MiB of weight copies: copying one is two
// orders of magnitude faster than drawing it again, and a cache misses
// identical bytes at another address as it misses different ones.
type Copier interface {
	Copy() Problem
}

// A Reshaper is a Problem that gives a problem at another shape holding
// the same weights, with activations drawn from seed and an output of its
// own: the tuner moves between an op's token counts (decode 1…8, prefill
// 64, 512) without drawing hundreds of MiB of weights again. ok is false
// where the weights at s would differ (another width, expert count…).
type Reshaper interface {
	Reshape(s Shape, seed uint64) (p Problem, ok bool)
}

// Instance is a variant prepared for one problem and configuration.
type Instance interface {
	// Run computes the op on the problem's inputs into its output.
	Run()
}

// Op describes a computation.
type Op struct {
	Name      string   // "family.op"
	Doc       string   // one line
	ShapeKeys []string // the shape's keys in order, e.g. m, n, k
	DTypes    []DType  // dtypes some variant serves
	// NewProblem builds random inputs of a shape and dtype from a seed.
	NewProblem func(s Shape, dt DType, seed uint64) (Problem, error)
	// Cost counts the FLOPs and bytes of one run (variant-independent).
	Cost func(s Shape, dt DType) Cost
	// Tolerance, if set, overrides the class tolerance for this op.
	Tolerance func(c Class, s Shape) Tolerance
	// Verify, if set, is the shape a candidate tuned at s is checked at
	// against the reference, where the reference at s itself costs too
	// much: it must run every configuration s runs (every panel and the
	// partial last one, every chunk boundary, every context split). Unset:
	// s itself.
	Verify func(s Shape, dt DType) Shape
	// DefaultAt, if set, is the family's untuned rule at a shape: the
	// variant that runs at s without a profile's choice where it is not
	// Default's (nil: Default's). It returns only a variant that is
	// available, serves dt and belongs to one of classes. The engine runs
	// it (Rules.Choose) and the tuner times every candidate against it, so
	// a profile's choice at s replaces the rule only where it measured
	// faster than the rule's answer.
	DefaultAt func(s Shape, dt DType, classes []Class) *Variant
}

// VerifyShape is the shape a candidate tuned at s is checked at (Verify,
// or s itself).
func (o *Op) VerifyShape(s Shape, dt DType) Shape {
	if o.Verify != nil {
		return o.Verify(s, dt)
	}
	return s
}

// Family is the part of the name before the dot ("gemm").
func (o *Op) Family() string { f, _, _ := strings.Cut(o.Name, "."); return f }

// Short is the part after the dot ("gemv").
func (o *Op) Short() string { _, s, _ := strings.Cut(o.Name, "."); return s }

// Tol returns the tolerance for a class at a shape.
func (o *Op) Tol(c Class, s Shape) Tolerance {
	if o.Tolerance != nil {
		return o.Tolerance(c, s)
	}
	return ClassTolerance(c)
}

// Check validates a shape against the op's keys.
func (o *Op) Check(s Shape) error {
	if len(s) != len(o.ShapeKeys) {
		return fmt.Errorf("%s: shape %s: want keys %s", o.Name, s, strings.Join(o.ShapeKeys, ","))
	}
	for i, k := range o.ShapeKeys {
		if s[i].Key != k {
			return fmt.Errorf("%s: shape %s: want keys %s", o.Name, s, strings.Join(o.ShapeKeys, ","))
		}
		if s[i].Value < 0 {
			return fmt.Errorf("%s: shape %s: negative %s", o.Name, s, k)
		}
	}
	return nil
}

// Serves reports whether dt is one of the op's dtypes.
func (o *Op) Serves(dt DType) bool { return hasDType(o.DTypes, dt) }

func hasDType(ds []DType, dt DType) bool {
	for _, d := range ds {
		if d == dt {
			return true
		}
	}
	return false
}

// sortVariants orders by priority (highest first), then name; the
// reference goes last.
func sortVariants(vs []*Variant) {
	sort.SliceStable(vs, func(a, b int) bool {
		va, vb := vs[a], vs[b]
		if va.Reference != vb.Reference {
			return vb.Reference
		}
		if va.Priority != vb.Priority {
			return va.Priority > vb.Priority
		}
		return va.Name < vb.Name
	})
}
