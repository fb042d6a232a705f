package moe

import (
	"fmt"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
	"github.com/ktune/ktune/kernels/gemm"
)

// Expert is one SwiGLU expert: down·(silu(gate·x) ⊙ (up·x)).
type Expert struct {
	Gate, Up *quant.Matrix // w1, w3: [I, C]
	Down     *quant.Matrix // w2: [C, I]
}

// BlockWeights is one MoE block.
type BlockWeights struct {
	Hidden  int
	Router  *quant.Matrix // gate.weight [E, C]; kept f32 so the logits are f32
	Bias    []float32     // e_score_correction_bias [E]
	Cfg     RouterConfig
	Experts []Expert
	Shared  *Expert // nil without shared experts
	// Prefetch, if set, is called by Forward once per call, right after
	// routing and before any expert runs, with the active experts in
	// ascending order (the order they are started in): a model whose
	// experts are mapped from a file asks the OS to start reading them
	// (madvise WILLNEED), so that the reads of the later experts overlap
	// the first ones' compute, or reads them into memory of its own and
	// points their matrices there (the same bytes: model's expert cache).
	// It must not change what the experts compute nor keep the slice past
	// the call; nil costs nothing.
	Prefetch func(experts []int)
}

// Validate checks the shapes.
func (b *BlockWeights) Validate() error {
	if err := b.Cfg.Validate(); err != nil {
		return err
	}
	C, E := b.Hidden, b.Cfg.Experts
	if b.Router == nil || b.Router.N != E || b.Router.K != C || len(b.Bias) != E || len(b.Experts) != E {
		return fmt.Errorf("moe: router [%d, %d], bias and %d experts expected", E, C, E)
	}
	check := func(name string, x *Expert) error {
		if x.Gate == nil || x.Up == nil || x.Down == nil {
			return fmt.Errorf("moe: %s: missing matrix", name)
		}
		I := x.Gate.N
		if x.Gate.K != C || x.Up.N != I || x.Up.K != C || x.Down.N != C || x.Down.K != I || x.Up.DType != x.Gate.DType {
			return fmt.Errorf("moe: %s: gate/up [I, %d] and down [%d, I] of one format expected", name, C, C)
		}
		return nil
	}
	for e := range b.Experts {
		if err := check(fmt.Sprintf("expert %d", e), &b.Experts[e]); err != nil {
			return err
		}
	}
	if b.Shared != nil {
		return check("shared expert", b.Shared)
	}
	return nil
}

// BlockOptions choose threading and the regime crossover.
type BlockOptions struct {
	Threads int
	// ExpertParallel is the largest token count of an expert computed on
	// one thread alongside other experts (decode regime); experts with more
	// tokens run one after another on all threads (prefill regime). 0 means
	// the default (or a tuning profile's choice); negative runs every expert
	// row-parallel on all threads (best for one token on several threads
	// when the experts do not divide evenly over them).
	ExpertParallel int
	// Rules are the caller's kernel choices: its tuning profile (the
	// moe.block entries: crossover and experts' variant; the experts'
	// matmuls), and the accuracy classes the experts' matmuls may use
	// (none: kernel.DefaultClasses). The router always runs in f32.
	Rules kernel.Rules
	// Kernel names the gemm variant of every expert matmul ("avx512_vnni",
	// "avx2", …); "" lets the gemm dispatch (or a tuning profile's moe.block
	// entry) choose.
	Kernel string
	// Debug receives intermediates: router_logits, y_routed, y_shared.
	Debug func(name string, t []float32)
	// Observe, if set, sees the input x [rows, w.K] of every expert matrix
	// w (gate, up and down of the routed experts, each on the rows of the
	// tokens routed to it, in token order, and of the shared expert) before
	// it runs: activation statistics (model.Calibrate). Routed experts run
	// concurrently, so it may be called from several goroutines at once,
	// but never for one matrix twice at the same time; it must not modify
	// x. The router is not observed. nil costs nothing.
	Observe func(w *quant.Matrix, x []float32, rows int)
	// Routing, if set, receives the routing (its slices reused when large
	// enough) and is what Forward returns: a caller that keeps one across
	// calls allocates nothing per call. nil: a new one.
	Routing *Routing
}

// Forward computes y [N, C] for x [N, C] (y must not overlap x) and
// returns the routing (for load statistics).
func (b *BlockWeights) Forward(y, x []float32, n int, opt BlockOptions) *Routing {
	C, E, K := b.Hidden, b.Cfg.Experts, b.Cfg.TopK
	th := max(opt.Threads, 1)
	cross, kern := opt.ExpertParallel, opt.Kernel
	if cross == 0 || kern == "" {
		ep, k := b.profileChoice(n, th, opt.Rules)
		if cross == 0 {
			cross = ep
		}
		if kern == "" {
			kern = k
		}
	}
	dbg := func(name string, t []float32) {
		if opt.Debug != nil {
			opt.Debug(name, t)
		}
	}
	// ---- router: logits [N, E] in f32, top-k ids and weights [N, K]
	logits := scratch.Get(n * E)
	defer scratch.Put(logits)
	gemm.LinearWith(opt.Rules.WithClasses(f32Class...), logits, x, b.Router, n, false, th)
	dbg("router_logits", logits)
	r := opt.Routing
	if r == nil {
		r = &Routing{}
	}
	ft := forwardTasks.GetOr(newForwardTask)
	defer ft.release()
	ft.b, ft.r, ft.logits, ft.x, ft.y, ft.out, ft.rules, ft.kern, ft.obs = b, r, logits, x, y, nil, opt.Rules, kern, opt.Observe
	ids, w := growSlice(r.IDs, n*K), growSlice(r.W, n*K)
	r.IDs, r.W, r.N, r.K = ids, w, n, K         // Route's output, read by the For below
	pool.Default().For(th, n, 64, ft.routeBody) // each token's routing is its own
	r.permute(ids, w, n, K, E)
	// ---- experts: out [N·K, C] in expert-sorted order (row p: the
	// expert r.IDs[r.Slot[p]] on token r.Token[p]), so that each expert
	// writes its rows in place; pos [N·K] is the row of each slot
	out := scratch.Get(n * K * C)
	defer scratch.Put(out)
	ft.out = out
	r.active = r.appendActive(r.active[:0])
	active := r.active
	if b.Prefetch != nil {
		b.Prefetch(active)
	}
	small, large := ft.small[:0], ft.large[:0]
	for _, e := range active {
		if int(r.Count[e]) <= cross {
			small = append(small, e)
		} else {
			large = append(large, e)
		}
	}
	ft.small, ft.large = small, large
	// decode regime: experts spread over threads, each on one thread
	pool.Default().ForEach(th, len(small), ft.expertBody)
	// prefill regime: one expert at a time on all threads
	for _, e := range large {
		b.runExpert(out, x, r, e, th, opt.Rules, kern, opt.Observe)
	}
	// ---- combine: y_routed[n] = Σ_k w[n,k]·out[pos[n·K+k]], on all threads
	ft.pos = growSlice(ft.pos, n*K)
	for p, s := range r.Slot {
		ft.pos[s] = int32(p)
	}
	pool.Default().For(th, n, 1, ft.combineBody)
	dbg("y_routed", y[:n*C])
	// ---- shared expert on every token, added
	if b.Shared != nil {
		ys := scratch.Get(n * C)
		defer scratch.Put(ys)
		swiglu(ys, x[:n*C], b.Shared, n, th, opt.Rules, kern, opt.Observe)
		dbg("y_shared", ys)
		vmath.Axpy(1, ys, y[:n*C])
	}
	return r
}

// f32Class is the router's accuracy class list (a variable: a literal
// passed on would be allocated per call).
var f32Class = []kernel.Class{kernel.ClassF32}

// forwardTask is what Forward's parallel loops read, pooled with their
// bodies bound once, so that a call allocates nothing for them.
type forwardTask struct {
	b                      *BlockWeights
	r                      *Routing
	logits, x, y, out      []float32
	rules                  kernel.Rules
	kern                   string
	obs                    func(*quant.Matrix, []float32, int)
	small, large           []int
	pos                    []int32
	route                  []routeScratch // per worker
	routeBody, combineBody func(w, lo, hi int)
	expertBody             func(w, i int)
}

var forwardTasks scratch.Keep[*forwardTask]

func newForwardTask() *forwardTask {
	ft := &forwardTask{}
	ft.routeBody, ft.combineBody, ft.expertBody = ft.routeRange, ft.combine, ft.expert
	ft.route = make([]routeScratch, pool.Default().Size())
	return ft
}

// release clears ft's references to the caller's data and returns it to
// the pool.
func (ft *forwardTask) release() {
	*ft = forwardTask{small: ft.small[:0], large: ft.large[:0], pos: ft.pos, route: ft.route,
		routeBody: ft.routeBody, combineBody: ft.combineBody, expertBody: ft.expertBody}
	forwardTasks.Put(ft)
}

// routeRange routes tokens [lo, hi) into ft.r.IDs and W.
func (ft *forwardTask) routeRange(w, lo, hi int) {
	b, r := ft.b, ft.r
	E, K := b.Cfg.Experts, b.Cfg.TopK
	route(r.IDs[lo*K:hi*K], r.W[lo*K:hi*K], nil, ft.logits[lo*E:hi*E], b.Bias, hi-lo, &b.Cfg, &ft.route[w])
}

// expert runs the i-th expert of the decode regime.
func (ft *forwardTask) expert(_, i int) {
	ft.b.runExpert(ft.out, ft.x, ft.r, ft.small[i], 1, ft.rules, ft.kern, ft.obs)
}

// combine sums token rows [lo, hi) of y from the experts' rows.
func (ft *forwardTask) combine(_, lo, hi int) {
	C, K := ft.b.Hidden, ft.r.K
	y, out, pos, w := ft.y, ft.out, ft.pos, ft.r.W
	for t := lo; t < hi; t++ {
		dst := y[t*C : (t+1)*C]
		clear(dst)
		for k := 0; k < K; k++ {
			p := int(pos[t*K+k])
			vmath.Axpy(w[t*K+k], out[p*C:(p+1)*C], dst)
		}
	}
}

// growSlice returns s[:n], or a new slice when s holds fewer than n.
func growSlice[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// runExpert computes expert e on its tokens (its gathered rows of x) into
// its rows of out, the expert-sorted rows [Offset[e], Offset[e+1]).
func (b *BlockWeights) runExpert(out, x []float32, r *Routing, e, threads int, rules kernel.Rules, kern string, obs func(*quant.Matrix, []float32, int)) {
	C := b.Hidden
	lo, hi := int(r.Offset[e]), int(r.Offset[e+1])
	m := hi - lo
	xe := scratch.Get(m * C)
	defer scratch.Put(xe)
	for i := 0; i < m; i++ {
		t := int(r.Token[lo+i])
		copy(xe[i*C:(i+1)*C], x[t*C:(t+1)*C])
	}
	swiglu(out[lo*C:hi*C], xe, &b.Experts[e], m, threads, rules, kern, obs)
}

// swiglu: y [m, C] = down·(silu(gate·x) ⊙ (up·x)) for x [m, C], on the
// gemm variant named kern ("": the gemm dispatch's choice); obs (nil: none)
// sees each matrix's input first (BlockOptions.Observe).
func swiglu(y, x []float32, ex *Expert, m, threads int, rules kernel.Rules, kern string, obs func(*quant.Matrix, []float32, int)) {
	h := scratch.Get(m * ex.Gate.N) // [m, I]
	defer scratch.Put(h)
	if obs != nil {
		obs(ex.Gate, x[:m*ex.Gate.K], m)
		obs(ex.Up, x[:m*ex.Up.K], m)
	}
	if kern == "" {
		gemm.GateUpWith(rules, h, x, ex.Gate, ex.Up, m, threads)
	} else {
		gemm.GateUp(planNamed(gemm.OpGateUp, kern, ex.Gate, m, threads, rules), h, x, ex.Gate, ex.Up, m)
	}
	if obs != nil {
		obs(ex.Down, h[:m*ex.Down.K], m)
	}
	if kern == "" {
		gemm.LinearWith(rules, y, h, ex.Down, m, false, threads)
		return
	}
	gemm.Run(planNamed(gemm.LinearOp(m), kern, ex.Down, m, threads, rules), y, h, ex.Down, m, false)
}
