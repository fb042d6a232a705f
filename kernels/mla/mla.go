// Package mla holds the kernels of Kimi Linear's multi-head latent
// attention (spec §5; no RoPE, no q-LoRA): the latent KV cache, decode in
// the absorbed form over the cache, and causal prefill.
//
// Per token the cache holds ĉ (the normalised latent, R = 512 values) and
// k_pe (DR = 64). Decode works in the absorbed form: with q̃_h = W_UKᵀ
// q_nope_h, the scores are (q̃_h·ĉ_j + q_pe_h·k_pe_j)·scale, the latent
// output is z_h = Σ_j p_hj ĉ_j, and o_h = W_UV z_h. All heads share each
// cache row, so the kernel reads the cache once per call, not per head.
//
// Ops:
//
//	mla.decode   one query per sequence over its cache: shape b, c (context), nh, r, dr
//	mla.prefill  T causal queries after P cached tokens: shape t, p, nh, dn, dr, dv, r
package mla

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
)

// Op names.
const (
	OpDecode  = "mla.decode"
	OpPrefill = "mla.prefill"
)

// Decode is one absorbed decode step for B sequences.
type Decode struct {
	NH, R, DR int
	Scale     float32
	Q         []float32 // [B][NH][R+DR]: q̃ then q_pe, per head
	Caches    []*Cache  // one per sequence
	Z         []float32 // [B][NH][R]: latent outputs
}

// Prefill is causal attention of T new tokens of one sequence whose cache
// already holds the P earlier tokens and these T.
type Prefill struct {
	NH, DN, DR, DV, R int
	Scale             float32
	Q                 []float32 // [T][NH][DN+DR]
	Cache             *Cache
	P                 int
	WUK               []float32 // [NH][DN][R]: k_nope rows of kv_b_proj
	WUV               []float32 // [NH][DV][R]: v rows of kv_b_proj
	// WUKp, WUVp: W_UK and W_UV packed as F32 GEMM weights (optional; the
	// decompressing variants pack them per call when nil).
	WUKp, WUVp *quant.Matrix
	// WUKq, WUVq: W_UK and W_UV quantized to Q8 (optional; the int8act
	// decompressing variant quantizes them per call when nil).
	WUKq, WUVq *quant.Matrix
	O          []float32 // [T][NH][DV]
	// Chooser is the caller's tuning profile for the GEMMs the variants
	// run on (nil: the defaults); each variant sets their classes.
	Chooser kernel.Chooser
}

// T is the number of queries.
func (p *Prefill) T() int { return len(p.Q) / (p.NH * (p.DN + p.DR)) }

type (
	decodeFn  func(d *Decode, threads int, prm kernel.Values)
	prefillFn func(p *Prefill, threads int, prm kernel.Values)
)

// ---- registry ----------------------------------------------------------

var (
	decodeKeys  = []string{"b", "c", "nh", "r", "dr"}
	prefillKeys = []string{"t", "p", "nh", "dn", "dr", "dv", "r"}
)

type problem struct {
	shape kernel.Shape
	dec   *Decode
	pre   *Prefill
	out   []float32
}

func (p *problem) Shape() kernel.Shape { return p.shape }
func (p *problem) DType() kernel.DType { return kernel.F32 }
func (p *problem) Reset()              { clear(p.out) }
func (p *problem) Output() []float32   { return p.out }

// randomCache fills a cache with n tokens: ĉ ~ N(0,1) (normalised-latent
// sized), k_pe ~ N(0, 2²).
func randomCache(r *rand.Rand, c *Cache, n int) {
	kvc, kpe := make([]float32, c.R), make([]float32, c.DR)
	for t := 0; t < n; t++ {
		for i := range kvc {
			kvc[i] = float32(r.NormFloat64())
		}
		for i := range kpe {
			kpe[i] = float32(2 * r.NormFloat64())
		}
		c.Append(kvc, kpe)
	}
}

func randn(r *rand.Rand, n int, std float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(std * r.NormFloat64())
	}
	return x
}

func newDecodeProblem(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
	B, C, NH, R, DR := s.Get("b"), s.Get("c"), s.Get("nh"), s.Get("r"), s.Get("dr")
	if B < 1 || C < 1 || NH < 1 || R < 1 || DR < 0 || dt != kernel.F32 {
		return nil, fmt.Errorf("%s: bad shape %s or dtype %s", OpDecode, s, dt)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	d := &Decode{NH: NH, R: R, DR: DR, Scale: float32(1 / math.Sqrt(float64(128+DR))),
		Q: randn(r, B*NH*(R+DR), 0.3), Z: make([]float32, B*NH*R)}
	for b := 0; b < B; b++ {
		c, err := NewCache(R, DR, kernel.F32)
		if err != nil {
			return nil, err
		}
		randomCache(r, c, C)
		d.Caches = append(d.Caches, c)
	}
	return &problem{shape: s, dec: d, out: d.Z}, nil
}

func newPrefillProblem(s kernel.Shape, dt kernel.DType, seed uint64) (kernel.Problem, error) {
	T, P, NH, DN, DR, DV, R := s.Get("t"), s.Get("p"), s.Get("nh"), s.Get("dn"), s.Get("dr"), s.Get("dv"), s.Get("r")
	if T < 1 || P < 0 || NH < 1 || DN < 1 || DR < 0 || DV < 1 || R < 1 || dt != kernel.F32 {
		return nil, fmt.Errorf("%s: bad shape %s or dtype %s", OpPrefill, s, dt)
	}
	r := rand.New(rand.NewPCG(seed, 4))
	c, err := NewCache(R, DR, kernel.F32)
	if err != nil {
		return nil, err
	}
	randomCache(r, c, P+T)
	p := &Prefill{NH: NH, DN: DN, DR: DR, DV: DV, R: R, Scale: float32(1 / math.Sqrt(float64(DN+DR))),
		Q: randn(r, T*NH*(DN+DR), 1), Cache: c, P: P,
		WUK: randn(r, NH*DN*R, 1/math.Sqrt(float64(R))), WUV: randn(r, NH*DV*R, 1/math.Sqrt(float64(R))),
		O: make([]float32, T*NH*DV)}
	// packed once, as LayerWeights.SplitKVB does for a model
	if p.WUKp, err = quant.Quantize(kernel.F32, p.WUK, NH*DN, R, false); err != nil {
		return nil, err
	}
	if p.WUVp, err = quant.Quantize(kernel.F32, p.WUV, NH*DV, R, false); err != nil {
		return nil, err
	}
	if p.WUKq, err = quant.Quantize(kernel.Q8, p.WUK, NH*DN, R, false); err != nil {
		return nil, err
	}
	if p.WUVq, err = quant.Quantize(kernel.Q8, p.WUV, NH*DV, R, false); err != nil {
		return nil, err
	}
	return &problem{shape: s, pre: p, out: p.O}, nil
}

type instance struct {
	p   *problem
	fn  any
	cfg kernel.Config
}

func (in *instance) Run() {
	switch fn := in.fn.(type) {
	case decodeFn:
		fn(in.p.dec, in.cfg.Threads, in.cfg.Params)
	case prefillFn:
		fn(in.p.pre, in.cfg.Threads, in.cfg.Params)
	}
}

func register(op string, v kernel.Variant, fn any) {
	v.Op = op
	v.DTypes = []kernel.DType{kernel.F32}
	if v.Class == "" {
		v.Class = kernel.ClassF32
	}
	v.Impl = fn
	v.New = func(p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
		mp, ok := p.(*problem)
		if !ok || (op == OpDecode) != (mp.dec != nil) {
			return nil, fmt.Errorf("%s: problem of type %T", op, p)
		}
		return &instance{mp, fn, cfg}, nil
	}
	kernel.Register(&v)
}

// tolerance per accuracy class: f32 variants against the float64
// reference; bf16act (BF16 queries and cache rows) at issue 5's bound for a
// BF16 cache against the f32 cache, relative RMS 5e-3; int8act (the
// prefill's decompression on Q8 W_UK, W_UV and int8 latent rows) at the
// class's named bound, kernel.TolInt8Act.
func tolerance(c kernel.Class, s kernel.Shape) kernel.Tolerance {
	switch c {
	case kernel.ClassBF16Act:
		return kernel.Tolerance{RelRMS: 5e-3, MaxRel: 3e-2}
	case kernel.ClassInt8Act:
		return kernel.TolInt8Act
	}
	return kernel.Tolerance{RelRMS: 2e-5, MaxRel: 2e-4}
}

var (
	kbParam    = kernel.Param{Name: "kb", Doc: "keys per block", Values: []int{16, 32, 64, 128}, Default: 64}
	splitParam = kernel.Param{Name: "split", Doc: "context ranges per sequence, merged after", Values: []int{1, 2, 4, 8}, Default: 2}
)

// verifyContext is the longest context a tuned decode is checked at (the
// float64 reference over 128K keys and every head costs ~10 s here).
const verifyContext = 32768

// verifyPrefix is the longest cached prefix a tuned prefill is checked
// over (verifyPrefill).
const verifyPrefix = 512

// verifyDecode is the shape a decode candidate tuned at s is checked at:
// contexts past verifyContext shortened to it plus c mod 1024, which keeps
// every split (≤ 8 ranges) and key block (≤ 128) boundary where it falls in
// s: the same number of ranges, each of whole blocks plus the same partial
// last one, ≥ 4096 keys (32 blocks) per range.
func verifyDecode(s kernel.Shape, _ kernel.DType) kernel.Shape {
	c := s.Get("c")
	if c <= verifyContext {
		return s
	}
	return s.With("c", verifyContext+c%1024)
}

// verifyPrefill is the shape a prefill candidate tuned over a cached
// prefix is checked at: a prefix beyond verifyPrefix is cut to
// verifyPrefix plus its remainder modulo verifyPrefix, which keeps every
// key block edge (kb divides it) and query block of the timed shape (the
// float64 reference costs 2·t·(p+t/2)·nh·(dn+dr+dv): 8 GFLOP at 512
// tokens over 512 cached).
func verifyPrefill(s kernel.Shape, _ kernel.DType) kernel.Shape {
	p := s.Get("p")
	if p <= verifyPrefix {
		return s
	}
	return s.With("p", verifyPrefix+p%verifyPrefix)
}

func init() {
	kernel.RegisterOp(&kernel.Op{Name: OpDecode, Doc: "absorbed MLA decode over the latent cache", ShapeKeys: decodeKeys,
		DTypes: []kernel.DType{kernel.F32}, NewProblem: newDecodeProblem, Tolerance: tolerance, Verify: verifyDecode,
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			b, c, nh, r, dr := float64(s.Get("b")), float64(s.Get("c")), float64(s.Get("nh")), float64(s.Get("r")), float64(s.Get("dr"))
			return kernel.Cost{FLOPs: 2 * b * c * nh * (2*r + dr), Bytes: b * c * 4 * (r + dr)}
		}})
	kernel.RegisterOp(&kernel.Op{Name: OpPrefill, Doc: "causal MLA prefill over the latent cache", ShapeKeys: prefillKeys,
		DTypes: []kernel.DType{kernel.F32}, NewProblem: newPrefillProblem, Tolerance: tolerance, Verify: verifyPrefill, DefaultAt: absorbedAt,
		Cost: func(s kernel.Shape, dt kernel.DType) kernel.Cost {
			t, p, nh := float64(s.Get("t")), float64(s.Get("p")), float64(s.Get("nh"))
			dn, dr, dv, r := float64(s.Get("dn")), float64(s.Get("dr")), float64(s.Get("dv")), float64(s.Get("r"))
			pairs := t*p + t*(t+1)/2
			return kernel.Cost{FLOPs: 2*nh*pairs*(dn+dr+dv) + 2*(p+t)*nh*r*(dn+dv), Bytes: 4 * ((p+t)*(r+dr) + t*nh*(dn+dr+dv) + nh*r*(dn+dv))}
		}})
	register(OpDecode, kernel.Variant{Name: "reference", Doc: "float64 softmax over the whole context", Reference: true}, decodeFn(decodeRef))
	register(OpPrefill, kernel.Variant{Name: "reference", Doc: "float64, decompressed K and V, full softmax", Reference: true}, prefillFn(prefillRef))
	register(OpDecode, kernel.Variant{Name: "generic", Doc: "key blocks with online softmax, context split across threads", Priority: 10,
		Threaded: true, Params: []kernel.Param{kbParam, splitParam}}, decodeFn(decodeGeneric))
	register(OpPrefill, kernel.Variant{Name: "generic", Doc: "key blocks decompressed once, query blocks, online softmax", Priority: 10,
		Threaded: true, Params: []kernel.Param{kbParam}}, prefillFn(prefillGeneric))
	register(OpPrefill, kernel.Variant{Name: "gemm", Doc: "decompressed K/V (all heads in one GEMM), per head and query block GEMM scores, causal softmax, GEMM with V; on the tuned f32 GEMM kernels",
		Priority: 20, Threaded: true, Params: []kernel.Param{{Name: "qb", Doc: "queries per block", Values: []int{16, 32, 64, 128, 256}, Default: 128}}},
		prefillFn(prefillBlocked))
	register(OpPrefill, kernel.Variant{Name: "absorbed", Doc: "absorbed queries against the latent rows (no decompression; the cheaper form over a long cached prefix), GEMM scores and latent sums over all heads of a query block; on the tuned f32 GEMM kernels",
		Priority: 5, Threaded: true, Params: []kernel.Param{{Name: "qb", Doc: "queries per block", Values: []int{4, 8, 16, 32, 64}, Default: 16}}},
		prefillFn(prefillAbsorbed))
}

// gemmInt8 is the gemm prefill with its decompression and scores in class
// int8act (prefillBlockedInt8), registered where it was measured faster
// than gemm: amd64 with AVX-512 VNNI (mla_amd64.go sets Requires; not on
// arm64 nor under purego, where the int8 GEMMs are unmeasured here or
// slower than the f32 ones). Priority above gemm: it is the default
// wherever int8act is allowed (and Forward allows it only over
// int8-quantized projections: prefillClasses).
var gemmInt8 = kernel.Variant{Name: "gemm_int8", Doc: "gemm with the decompression Ĉ·W_UKᵀ, Ĉ·W_UVᵀ (Q8 W_UK, W_UV; latent rows quantized per group of 32) and the scores (keys packed as Q8 per head, queries quantized per group of 32) on the int8act GEMM kernels; softmax and P·V f32",
	Priority: 25, Class: kernel.ClassInt8Act, Threaded: true, Params: []kernel.Param{{Name: "qb", Doc: "queries per block", Values: []int{16, 32, 64, 128, 256}, Default: 128}}}

// absorbedInt8 is the absorbed prefill with its scores in class int8act
// (prefillAbsorbedInt8), registered beside gemmInt8 (mla_amd64.go), where
// the VNNI GEMM serves the Q8 keys. absorbedAt takes it for a long
// cached prefix wherever int8act is allowed.
var absorbedInt8 = kernel.Variant{Name: "absorbed_int8", Doc: "absorbed with the scores (latent rows packed as Q8 keys, absorbed queries quantized per group of 32) on the int8act GEMM kernels; softmax, latent sums and W_UV f32",
	Priority: 5, Class: kernel.ClassInt8Act, Threaded: true, Params: []kernel.Param{{Name: "qb", Doc: "queries per block", Values: []int{4, 8, 16, 32, 64}, Default: 16}}}

// forRanges runs fn over n items on threads workers.
func forRanges(threads, n int, fn func(w, lo, hi int)) { pool.Default().For(threads, n, 1, fn) }
