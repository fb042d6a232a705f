// Package gemm holds the projections of Kimi Linear: Y = X·Wᵀ with the
// weight W [N×K] in one of package quant's formats and activations X
// [M×K] in f32, M = 1…8 at decode and up to thousands at prefill.
//
// Formats: the panel formats (16-row panels, package quant): F32, BF16,
// Q8, Q6, Q5, Q4 (with or without a min), Q3, Q2 and the K formats
// Q3K…Q6K (super-blocks of 8 groups with 6-bit scale and min codes); and
// the GGUF formats read in place from a GGUF file, row after row in
// ggml's block layout (gguf-q8_0, q4_0, q4_1, q5_0, q5_1, q2_K…q6_K,
// iq4_nl, iq4_xs, mxfp4, f16, bf16, f32: kernel.GGUFDTypes).
//
// Ops (see the registry, package kernel):
//
//	gemm.gemv    M ≤ Crossover (decode): stream the panels once, all M rows per panel
//	gemm.gemm    larger M (prefill): blocked, packed activations, register tiles
//	gemm.gateup  SwiGLU's input: H = silu(X·Wgᵀ) ⊙ (X·Wuᵀ) from one pass over X
//
// Accuracy classes: f32 variants use f32 activations (quantized weights
// are widened on the fly); int8act variants quantize each activation row
// once to int8 with one scale per group of 32 (vector code) and use
// integer dot products (VNNI, SDOT, AMX); bf16act variants round
// activations to BF16 (AVX512_BF16, arm64 BFDOT).
//
// Work is split across the worker pool by weight panels (16 output rows):
// every thread streams its own contiguous range of the packed weights.
// Which variant runs: dispatch.go.
//
// Files, by what they hold (ISA × format × class):
//
//	gemm.go, dispatch.go, act.go, problem.go    the API, dispatch, activation preparation, the tuner's problems
//	gemm_ref.go, gemm_generic.go                float64 reference; portable Go (every panel format, f32 and int8act)
//	gemm_gguf.go, gemm_gguf_prep.go             the GGUF formats: portable kernels, activation preparation
//	gemm_{f32,avx2,avx512}_amd64.go + gemm_f32_{avx2,avx512}_amd64.s    AVX2/AVX-512 f32 class, panel formats
//	gemm_vnni_amd64.*                           AVX-512 VNNI int8act, panel and K formats
//	gemm_avxvnni_amd64.*                        AVX-VNNI int8act
//	gemm_avx2int8_amd64.*                       AVX2 int8act (vpmaddubsw), panel and K formats
//	gemm_amx_amd64.*                            AMX int8act tiles (M ≥ 16)
//	gemm_bf16_amd64.*                           AVX512_BF16 bf16act
//	gemm_gguf_{amd64,avx2_amd64}.go + gemm_gguf_{avx2,avx512}_amd64.s   AVX2/AVX-512 kernels of the GGUF formats
//	gemm_act_amd64.s, act_amd64.go              vector activation quantizers
//	gemm_arm64.go + gemm_neon_arm64.s           NEON f32 tiles; the arm64 registrations
//	gemm_dotprod_arm64.s                        NEON SDOT int8act, panel and K formats
//	gemm_sve_arm64.s                            SVE f32 and SDOT int8act, panel and K formats
//	gemm_bf16_arm64.go + gemm_bf16{,_sve}_arm64.s   NEON and SVE BFDOT bf16act
//	shadow.go, tune.go                          the shadow check (each call against the pure-Go variant); the tuner's workloads
//
// Every .s file is generated (_asm: avo for amd64, _asm/arm64 for arm64).
//
// Benchmarks: BenchmarkGEMM/op=<op>/dtype=<dt>/variant=<v>/m=/n=/k=/mem=dram|cache/threads=<n>.
package gemm

import (
	"fmt"
	"slices"

	"github.com/ktune/ktune/internal/scratch"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/vmath"
)

// Op names.
const (
	OpGEMV   = "gemm.gemv"
	OpGEMM   = "gemm.gemm"
	OpGateUp = "gemm.gateup"
)

// Linear computes Y [M×N] = X [M×K]·Wᵀ (or Y += when acc) with the
// default variants on threads workers of the default pool (LinearWith
// under no rules).
func Linear(y, x []float32, w *quant.Matrix, m int, acc bool, threads int) {
	LinearWith(kernel.Rules{}, y, x, w, m, acc, threads)
}

// LinearWith is Linear with the variants the caller's rules choose,
// gemv or gemm by M (LinearOp).
func LinearWith(r kernel.Rules, y, x []float32, w *quant.Matrix, m int, acc bool, threads int) {
	Run(Choose(r, LinearOp(m), w.DType, m, w.N, w.K, threads), y, x, w, m, acc)
}

// Run executes a plan on Y (+)= X·Wᵀ.
func Run(p kernel.Choice, y, x []float32, w *quant.Matrix, m int, acc bool) {
	h := shadow.Load()
	var y0 []float32
	if h != nil {
		y0 = slices.Clone(y[:m*w.N])
	}
	im := implOf(p.Variant)
	a := newArgs(im, y, x, w, m, acc)
	im.run(a, p.Config)
	a.release()
	if h != nil {
		shadowRun(h, p, y, y0, x, w, nil, m, acc)
	}
}

// GateUp computes H [M×N] = silu(X·Wgᵀ) ⊙ (X·Wuᵀ) with a plan of op
// gemm.gateup (both weights of one format and shape).
func GateUp(p kernel.Choice, h, x []float32, wg, wu *quant.Matrix, m int) {
	im := implOf(p.Variant)
	a := newArgs(im, h, x, wg, m, false)
	a.wu = wu
	im.run(a, p.Config)
	a.release()
	if s := shadow.Load(); s != nil {
		shadowRun(s, p, h, make([]float32, m*wg.N), x, wg, wu, m, false)
	}
}

// GateUpWith runs GateUp with the plan the caller's rules choose.
func GateUpWith(r kernel.Rules, h, x []float32, wg, wu *quant.Matrix, m int, threads int) {
	GateUp(Choose(r, OpGateUp, wg.DType, m, wg.N, wg.K, threads), h, x, wg, wu, m)
}

// ---- variant machinery ---------------------------------------------------

// actKind is how a variant wants its activations.
type actKind int

const (
	actF32  actKind = iota // f32, rows padded to Kp with zeros
	actInt8                // int8 with one scale per group of 32 (quantizeRow), plus group sums
	actBF16                // BF16 pairs, rows padded to Kp
)

// panelFn computes the output columns of full panels [p0, p1) for all M
// rows: for i < 16,
//
//	y[r·ldy + 16p − ycol + i] (+)= Σ_k x[r,k]·W[16p+i, k]
//
// (the driver redirects a partial last panel to scratch). worker indexes
// per-thread scratch.
type panelFn func(a *args, p0, p1, worker int, prm kernel.Values)

// impl is what a variant registers as its Impl.
type impl struct {
	act    actKind
	panels panelFn
	// grain is the default number of panels per work item.
	grain int
	// prep, if set, prepares variant-specific operands (args.pre) once
	// per call, before the workers start.
	prep func(a *args)
}

func implOf(v *kernel.Variant) *impl {
	im, ok := v.Impl.(*impl)
	if !ok {
		panic(fmt.Sprintf("gemm: %s: Impl is %T", v.ID(), v.Impl))
	}
	return im
}

// args is one call, with its prepared activations.
type args struct {
	m, n, k, kp int
	w, wu       *quant.Matrix // wu: the up matrix of gateup
	y           []float32     // output rows of stride ldy; column c is y[r·ldy + c − ycol]
	ldy, ycol   int
	acc         bool
	x           []float32 // M×Kp, f32 (actF32)
	xq          []int8    // M×Kp (actInt8)
	xs          []float32 // M×groups scales (actInt8)
	xsum        []int32   // M×groups sums of xq (actInt8)
	xb          []uint16  // M×Kp BF16 (actBF16)
	pre         *prepared // impl.prep's operands, or nil
	ws          *workspace
}

// prepared holds what an impl.prep derives from the activations, shared
// read-only by the workers (its layout is the variant's).
type prepared struct {
	xp  []int8
	aux []int32
	xs  []float32
	gg  []byte // the GGUF kernels' activation units (ggufPrep)
	gt  []byte // their tiles of 16 rows (ggufTilePrep)
	// a tail unit's values, scales and sums padded with zeros (ggufPrepUnits)
	pad    []int8
	padS   []float32
	padSum []int32
}

type workspace struct {
	x    []float32
	xq   []int8
	xs   []float32
	xsum []int32
	xb   []uint16
	pre  prepared
	tmp  [][]float32 // per worker scratch (gateup, packing)
	args args        // the call's arguments (newArgs): no allocation per call
	// sub holds three argument copies per worker (the last panel's
	// redirected output, gateup's gate and up halves): a kernel called
	// through a function value gets a pointer to one of these, not to a
	// copy that would escape to the heap on every call.
	sub []args
	// the running call's panel function, its panel count and parameters,
	// and body, the pool's loop body bound to this workspace once (a
	// closure made per call would be an allocation per call).
	a      *args // the running call's arguments (usually &args)
	fn     panelFn
	inner  panelFn // gateup: the panel kernel gateUpPanel wraps
	panels int
	prm    kernel.Values
	body   func(w, lo, hi int)
}

// newWorkspace is wsPool's constructor (run binds body on first use).
func newWorkspace() *workspace { return &workspace{} }

// wsPool keeps the workspaces warm across calls and garbage collections
// (package scratch).
var wsPool scratch.Keep[*workspace]

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func newArgs(im *impl, y, x []float32, w *quant.Matrix, m int, acc bool) *args {
	n, k, kp := w.N, w.K, w.Kp
	if kp < k {
		kp = k
	}
	if m < 1 || len(x) < m*k || len(y) < m*n {
		panic(fmt.Sprintf("gemm: M=%d, len(x)=%d (want %d), len(y)=%d (want %d)", m, len(x), m*k, len(y), m*n))
	}
	ws := wsPool.GetOr(newWorkspace)
	a := &ws.args
	*a = args{m: m, n: n, k: k, kp: kp, w: w, y: y[:m*n], ldy: n, acc: acc, ws: ws}
	switch im.act {
	case actF32:
		if kp == k {
			a.x = x[:m*k]
		} else {
			ws.x = grow(ws.x, m*kp)
			for r := 0; r < m; r++ {
				copy(ws.x[r*kp:], x[r*k:(r+1)*k])
				clear(ws.x[r*kp+k : (r+1)*kp])
			}
			a.x = ws.x
		}
	case actInt8:
		g := kp / quant.GroupK
		ws.xq, ws.xs, ws.xsum = grow(ws.xq, m*kp), grow(ws.xs, m*g), grow(ws.xsum, m*g)
		a.xq, a.xs, a.xsum = ws.xq, ws.xs, ws.xsum
		for r := 0; r < m; r++ {
			quantizeRow(a.xq[r*kp:(r+1)*kp], a.xs[r*g:(r+1)*g], a.xsum[r*g:(r+1)*g], x[r*k:(r+1)*k])
		}
	case actBF16:
		ws.xb = grow(ws.xb, m*kp)
		a.xb = ws.xb
		for r := 0; r < m; r++ {
			toBF16Row(a.xb[r*kp:(r+1)*kp], x[r*k:(r+1)*k])
		}
	}
	return a
}

// release returns the workspace (which holds a) to the pool, a cleared so
// that the pool keeps none of the caller's slices alive.
func (a *args) release() {
	ws := a.ws
	*a = args{}
	wsPool.Put(ws)
}

// Scratch slots: each worker has one of each kind.
const (
	tmpGateUp = iota // gateUpPanel's gate and up outputs
	tmpLast          // lastPanel's redirected output
	tmpKernel        // a panel kernel's own accumulators
	tmpKinds
)

// scratch returns worker w's scratch of the kind, at least n floats. The
// slots exist before the workers start (run sizes the table), so workers
// only touch their own.
func (a *args) scratch(w, kind, n int) []float32 {
	i := w*tmpKinds + kind
	a.ws.tmp[i] = grow(a.ws.tmp[i], n)
	return a.ws.tmp[i]
}

// run splits the panels over the pool.
func (im *impl) run(a *args, cfg kernel.Config) {
	grain := cfg.Params["grain"]
	if grain < 1 {
		grain = max(im.grain, 1)
	}
	ws := a.ws
	if ws.body == nil {
		ws.body = ws.runRange
	}
	ws.a, ws.fn, ws.inner, ws.prm = a, im.panels, nil, cfg.Params
	if a.wu != nil {
		ws.fn, ws.inner = gateUpPanel, im.panels
	}
	if im.prep != nil {
		im.prep(a)
	}
	ws.panels = a.w.Panels()
	// the scratch slots and three argument copies per worker (gateup,
	// last panel), made here, before the workers run, so that they never
	// grow the tables.
	for len(ws.tmp) < tmpKinds*max(cfg.Threads, 1) {
		ws.tmp = append(ws.tmp, nil)
	}
	if len(ws.sub) < 3*max(cfg.Threads, 1) {
		ws.sub = make([]args, 3*max(cfg.Threads, 1))
	}
	pool.Default().ForDynamic(max(cfg.Threads, 1), ws.panels, grain, ws.body)
	ws.a, ws.fn, ws.inner, ws.prm = nil, nil, nil, nil
	clear(ws.sub)
}

// runRange is the pool's loop body for run: panels [lo, hi) of the call
// in ws.a on worker w.
func (ws *workspace) runRange(w, lo, hi int) {
	a := ws.a
	full := hi
	if hi == ws.panels && a.n%quant.PanelRows != 0 {
		full = hi - 1
	}
	if lo < full {
		ws.fn(a, lo, full, w, ws.prm)
	}
	if full < hi {
		lastPanel(a, ws.fn, full, w, ws.prm)
	}
}

// lastPanel computes the partial last panel into scratch and copies the
// N mod 16 real columns out.
func lastPanel(a *args, fn panelFn, p, worker int, prm kernel.Values) {
	const pr = quant.PanelRows
	buf := a.scratch(worker, tmpLast, a.m*pr)
	b := &a.ws.sub[3*worker]
	*b = *a
	b.y, b.ldy, b.ycol, b.acc = buf, pr, p*pr, false
	fn(b, p, p+1, worker, prm)
	cols := a.n - p*pr
	for r := 0; r < a.m; r++ {
		dst := a.y[r*a.ldy+p*pr-a.ycol:][:cols]
		src := buf[r*pr:][:cols]
		if a.acc {
			for i := range dst {
				dst[i] += src[i]
			}
		} else {
			copy(dst, src)
		}
	}
}

// gateUpPanel is the panel function of gemm.gateup: each panel range is
// computed with ws.inner for the gate and the up matrix into scratch, then
// combined as silu(g)·u into the output. The gate and up calls take the
// worker's second and third argument copies in the workspace (lastPanel,
// which may call this, holds the first).
func gateUpPanel(a *args, p0, p1, worker int, prm kernel.Values) {
	const pr = quant.PanelRows
	cols := (p1 - p0) * pr
	tmp := a.scratch(worker, tmpGateUp, 2*a.m*cols)
	g, u := tmp[:a.m*cols], tmp[a.m*cols:]
	fn := a.ws.inner
	ga, ua := &a.ws.sub[3*worker+1], &a.ws.sub[3*worker+2]
	*ga, *ua = *a, *a
	ga.y, ga.ldy, ga.ycol, ga.acc = g, cols, p0*pr, false
	ua.y, ua.ldy, ua.ycol, ua.acc, ua.w = u, cols, p0*pr, false, a.wu
	fn(ga, p0, p1, worker, prm)
	fn(ua, p0, p1, worker, prm)
	for r := 0; r < a.m; r++ {
		dst := a.y[r*a.ldy+p0*pr-a.ycol:][:cols]
		vmath.SiLUMul(dst, g[r*cols:][:cols], u[r*cols:][:cols])
	}
}
