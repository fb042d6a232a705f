package kda

import (
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
	"github.com/ktune/ktune/kernels/gemm"
)

// LayerWeights is one KDA attention layer (golden README §3.3, spec §3):
// the projections packed in any weight format, the rest in f32.
type LayerWeights struct {
	Hidden, Heads, HeadDim, ConvWidth int
	Eps                               float32 // o_norm epsilon (rms_norm_eps)

	Q, K, V *quant.Matrix // [H·D, C]
	FA, FB  *quant.Matrix // [D, C], [H·D, D]: the decay gate's low-rank pair
	Beta    *quant.Matrix // [H, C] (b_proj)
	GA, GB  *quant.Matrix // [D, C], [H·D, D]: the output gate's low-rank pair
	O       *quant.Matrix // [C, H·D]

	ConvQ, ConvK, ConvV []float32 // [H·D][W] depthwise taps; tap W−1 multiplies the current token
	ALog                []float32 // [H]
	DtBias              []float32 // [H·D]
	ONorm               []float32 // [D], shared by every head
}

// LayerCache is what a batch of B sequences carries from one call to the
// next: the last W pre-conv inputs of q, k, v per channel, oldest first
// (zeros before the first token), and the recurrent state.
type LayerCache struct {
	B                   int
	ConvQ, ConvK, ConvV []float32 // [B][H·D][W]
	State               []float32 // [B][H][D][D]
	// States, if set, are the sequences' states apart ([H][D][D] each,
	// len B), used instead of State (see Tensors.States).
	States [][]float32
}

// NewLayerCache returns the empty cache of a fresh batch.
func (w *LayerWeights) NewLayerCache(b int) *LayerCache {
	hd, wd := w.Heads*w.HeadDim, w.ConvWidth
	return &LayerCache{B: b,
		ConvQ: make([]float32, b*hd*wd), ConvK: make([]float32, b*hd*wd), ConvV: make([]float32, b*hd*wd),
		State: make([]float32, b*w.Heads*w.HeadDim*w.HeadDim)}
}

// Bytes is the cache's size.
func (c *LayerCache) Bytes() int64 {
	return 4 * int64(len(c.ConvQ)+len(c.ConvK)+len(c.ConvV)+len(c.State))
}

// LayerOptions choose threads and, optionally, the kernels; Debug, if set,
// receives each intermediate tensor (names as the golden dbg.* tensors).
type LayerOptions struct {
	Threads int
	// Recurrent and Chunked, if set, replace the defaults for T = 1 and
	// T > 1 (kda.decode and kda.prefill variants with their configs).
	Recurrent, Chunked *kernel.Choice
	// Rules are the caller's kernel choices: its tuning profile, and the
	// accuracy classes the projections' matmuls may use (none:
	// kernel.DefaultClasses). The recurrence runs in f32.
	Rules kernel.Rules
	Debug func(name string, t []float32)
	// Observe, if set, sees the input x [rows, w.K] of every projection
	// w before it runs (activation statistics: model.Calibrate), on the
	// calling goroutine; it must not modify x. nil costs nothing.
	Observe func(w *quant.Matrix, x []float32, rows int)
}

// Validate checks the weights' shapes against each other.
func (w *LayerWeights) Validate() error {
	C, H, D, W := w.Hidden, w.Heads, w.HeadDim, w.ConvWidth
	HD := H * D
	for _, m := range []struct {
		name string
		m    *quant.Matrix
		n, k int
	}{{"q_proj", w.Q, HD, C}, {"k_proj", w.K, HD, C}, {"v_proj", w.V, HD, C}, {"f_a_proj", w.FA, D, C}, {"f_b_proj", w.FB, HD, D},
		{"b_proj", w.Beta, H, C}, {"g_a_proj", w.GA, D, C}, {"g_b_proj", w.GB, HD, D}, {"o_proj", w.O, C, HD}} {
		if m.m == nil || m.m.N != m.n || m.m.K != m.k {
			return fmt.Errorf("kda layer: %s must be [%d, %d]", m.name, m.n, m.k)
		}
	}
	for _, v := range []struct {
		name string
		s    []float32
		n    int
	}{{"q_conv1d", w.ConvQ, HD * W}, {"k_conv1d", w.ConvK, HD * W}, {"v_conv1d", w.ConvV, HD * W}, {"A_log", w.ALog, H}, {"dt_bias", w.DtBias, HD}, {"o_norm", w.ONorm, D}} {
		if len(v.s) != v.n {
			return fmt.Errorf("kda layer: %s has %d values, want %d", v.name, len(v.s), v.n)
		}
	}
	return nil
}

// Forward runs the layer on x [B,T,C] (the input_layernorm output) into
// y [B,T,C], continuing and updating the cache. Feeding a sequence in
// pieces gives the same result as one call on the concatenation.
func (w *LayerWeights) Forward(y, x []float32, B, T int, c *LayerCache, opt LayerOptions) {
	C, H, D := w.Hidden, w.Heads, w.HeadDim
	HD, M := H*D, B*T
	th := max(opt.Threads, 1)
	dbg := func(name string, t []float32) {
		if opt.Debug != nil {
			opt.Debug(name, t)
		}
	}
	// ---- projections: qp, kp, vp [M, H·D]; f, gate [M, H·D]; β [M, H]
	qp, kp, vp := scratch.Get(M*HD), scratch.Get(M*HD), scratch.Get(M*HD)
	low := scratch.Get(M * D) // rank-D bottleneck, reused for both gates
	f, gate, beta, o := scratch.Get(M*HD), scratch.Get(M*HD), scratch.Get(M*H), scratch.Zeroed(M*HD)
	defer scratch.Put(qp, kp, vp, low, f, gate, beta, o)
	obs := func(m *quant.Matrix, in []float32) {
		if opt.Observe != nil {
			opt.Observe(m, in[:M*m.K], M)
		}
	}
	for _, m := range []*quant.Matrix{w.Q, w.K, w.V, w.FA, w.GA, w.Beta} {
		obs(m, x)
	}
	gemm.LinearWith(opt.Rules, qp, x, w.Q, M, false, th)
	gemm.LinearWith(opt.Rules, kp, x, w.K, M, false, th)
	gemm.LinearWith(opt.Rules, vp, x, w.V, M, false, th)
	gemm.LinearWith(opt.Rules, low, x, w.FA, M, false, th)
	obs(w.FB, low)
	gemm.LinearWith(opt.Rules, f, low, w.FB, M, false, th)
	gemm.LinearWith(opt.Rules, low, x, w.GA, M, false, th)
	obs(w.GB, low)
	gemm.LinearWith(opt.Rules, gate, low, w.GB, M, false, th)
	gemm.LinearWith(opt.Rules, beta, x, w.Beta, M, false, th)
	// ---- short convolution + SiLU, continuing the cache: q, k, v [B,T,H·D]
	w.convSiLU(qp, kp, vp, c, B, T, th)
	pl := pool.Default()
	// the per-head L2 norm of q and k (ε inside the root) and the
	// gates g = −exp(A_log[h])·softplus(f + dt_bias), β = σ(b), per token
	lt := layerTasks.GetOr(newLayerTask)
	defer lt.release()
	lt.w, lt.qp, lt.kp, lt.f, lt.gate, lt.beta, lt.o = w, qp, kp, f, gate, beta, o
	lt.l2 = opt.Debug == nil
	negA := grow(&lt.negA, H)
	for h := range negA {
		negA[h] = -float32(math.Exp(float64(w.ALog[h])))
	}
	pl.For(th, M, 1, lt.gatesBody)
	dbg("dbg.q_conv", qp)
	dbg("dbg.k_conv", kp)
	dbg("dbg.v_conv", vp)
	if opt.Debug != nil { // the golden dumps want q, k before their norm
		l2normRows(qp, D, 1e-6)
		l2normRows(kp, D, 1e-6)
	}
	dbg("dbg.q_l2", qp)
	dbg("dbg.k_l2", kp)
	dbg("dbg.g", f)
	dbg("dbg.beta", beta)
	// ---- the recurrence: o [B,T,H,D], the state carried in the cache
	t := &lt.t
	*t = Tensors{B: B, T: T, H: H, K: D, V: D, Q: qp, Kk: kp, G: f, Vv: vp, Beta: beta,
		Scale: float32(1 / math.Sqrt(float64(D))), O: o, State: c.State, States: c.States}
	plan := opt.Chunked
	op := OpPrefill
	if T == 1 {
		plan, op = opt.Recurrent, OpDecode
	}
	if plan == nil {
		if op == OpPrefill {
			lt.plan = opt.Rules.WithClasses().ChooseDims(op, kernel.F32, prefillKeys, lt.dims(B, T, H, D, D), th)
		} else {
			lt.plan = opt.Rules.WithClasses().ChooseDims(op, kernel.F32, decodeKeys, lt.dims(B, H, D, D), th)
		}
		plan = &lt.plan
	}
	run(t, plan.Variant.Impl.(headFn), plan.Config.Threads, plan.Config.Params)
	dbg("dbg.o_core", o)
	dbg("dbg.gate_out", gate)
	// ---- gated RMSNorm per head: o·rsqrt(mean(o²)+ε)·w ⊙ σ(gate)
	pl.For(th, M, 1, lt.outBody)
	dbg("dbg.o_normed", o)
	// ---- output projection: y [B,T,C]
	obs(w.O, o)
	gemm.LinearWith(opt.Rules, y[:M*C], o, w.O, M, false, th)
}

// layerTask is what Forward's row-wise loops read, pooled with their
// bodies bound once, so that a call allocates nothing for them.
type layerTask struct {
	w                              *LayerWeights
	qp, kp, f, gate, beta, o, negA []float32
	l2                             bool // normalise q and k in gates (not when Debug wants them raw)
	t                              Tensors
	plan                           kernel.Choice
	dimBuf                         [5]int
	cv                             [3]struct{ u, cache, taps []float32 }
	B, T, nb                       int
	gatesBody, outBody, convBody   func(w, lo, hi int)
}

var layerTasks scratch.Keep[*layerTask]

func newLayerTask() *layerTask {
	lt := &layerTask{}
	lt.gatesBody, lt.outBody, lt.convBody = lt.gates, lt.outNorm, lt.conv
	return lt
}

// release clears lt's references to the caller's data and returns it to
// the pool.
func (lt *layerTask) release() {
	*lt = layerTask{negA: lt.negA, gatesBody: lt.gatesBody, outBody: lt.outBody, convBody: lt.convBody}
	layerTasks.Put(lt)
}

// dims returns its arguments in lt's buffer (kernel.ChooseDims's dims).
func (lt *layerTask) dims(d ...int) []int { return lt.dimBuf[:copy(lt.dimBuf[:], d)] }

// gates normalises q and k per head (when lt.l2) and forms the decay
// gates and β of token rows [lo, hi).
func (lt *layerTask) gates(_, lo, hi int) {
	w := lt.w
	H, D := w.Heads, w.HeadDim
	HD := H * D
	for m := lo; m < hi; m++ {
		if lt.l2 {
			l2normRows(lt.qp[m*HD:(m+1)*HD], D, 1e-6)
			l2normRows(lt.kp[m*HD:(m+1)*HD], D, 1e-6)
		}
		softplusGate(lt.f[m*HD:(m+1)*HD], w.DtBias, lt.negA, D)
		b := lt.beta[m*H : (m+1)*H]
		vmath.Sigmoid(b, b)
	}
}

// outNorm is the gated RMSNorm per head of token rows [lo, hi) of lt.o.
func (lt *layerTask) outNorm(_, lo, hi int) {
	w := lt.w
	H, D := w.Heads, w.HeadDim
	HD := H * D
	for m := lo; m < hi; m++ {
		gr := lt.gate[m*HD : (m+1)*HD]
		vmath.Sigmoid(gr, gr)
		for h := 0; h < H; h++ {
			i := m*H + h
			row := lt.o[i*D : (i+1)*D]
			inv := float32(1 / math.Sqrt(float64(sumSquares(row))/float64(D)+float64(w.Eps)))
			vmath.ScaleMul(row, inv, w.ONorm, gr[h*D:(h+1)*D]) // row·inv·o_norm·σ(gate)
		}
	}
}

// conv runs blocks [lo, hi) of convSiLU's call (lt.cv).
func (lt *layerTask) conv(_, lo, hi int) {
	w, nb := lt.w, lt.nb
	HD := w.Heads * w.HeadDim
	for i := range lt.cv {
		a, b := max(lo, i*nb), min(hi, (i+1)*nb)
		if a >= b {
			continue
		}
		c0, c1 := (a-i*nb)*convBlock, min((b-i*nb)*convBlock, HD)
		if lt.T < convDirectT && w.ConvWidth <= maxDirectWidth {
			w.convDirect(lt.cv[i].u, lt.cv[i].cache, lt.cv[i].taps, lt.B, lt.T, c0, c1)
		} else {
			w.conv(lt.cv[i].u, lt.cv[i].cache, lt.cv[i].taps, lt.B, lt.T, c0, c1)
		}
	}
}

// convBlock is how many channels the conv's vector calls take at a time:
// fixed blocks of convBlock channels of q, k or v, so that the kernels
// see the same slices (and give the same bits) whatever the thread count.
const convBlock = 512

// convSiLU applies the depthwise causal convolutions and SiLU in place on
// q, k, v [B,T,H·D], continuing and updating the cache's windows. The
// threads split the blocks of the three tensors.
func (w *LayerWeights) convSiLU(qp, kp, vp []float32, c *LayerCache, B, T, threads int) {
	HD := w.Heads * w.HeadDim
	lt := layerTasks.GetOr(newLayerTask)
	defer lt.release()
	lt.w, lt.B, lt.T = w, B, T
	lt.nb = (HD + convBlock - 1) / convBlock // blocks per tensor
	lt.cv[0].u, lt.cv[0].cache, lt.cv[0].taps = qp, c.ConvQ, w.ConvQ
	lt.cv[1].u, lt.cv[1].cache, lt.cv[1].taps = kp, c.ConvK, w.ConvK
	lt.cv[2].u, lt.cv[2].cache, lt.cv[2].taps = vp, c.ConvV, w.ConvV
	pool.Default().For(threads, 3*lt.nb, 1, lt.convBody)
}

// convDirectT is the prompt length from which convSiLU takes conv: below
// it (decode) convDirect's channel-by-channel loop costs less than conv's
// setup.
const convDirectT = 8

// maxDirectWidth is the widest convolution convDirect takes (its window
// lives in a local array).
const maxDirectWidth = 16

// convDirect is conv for short prompts: channel by channel, the window in
// a local array, no transposed copies. It forms the same sums in the same
// order (products rounded, added from tap 0) and applies SiLU on the same
// blocks, so it gives conv's bits.
func (w *LayerWeights) convDirect(u, cache, taps []float32, B, T, lo, hi int) {
	HD, W := w.Heads*w.HeadDim, w.ConvWidth
	var buf [maxDirectWidth]float32
	x := buf[:W] // inputs t−W+1 … t of the channel, oldest first
	for b := 0; b < B; b++ {
		if W == 4 && T == 1 {
			// the decode step at Kimi's width, unrolled: the same
			// operations in the same order as the loop below, without
			// the window's round trip through x (the loop took ~10% of a
			// KDA layer's decode step)
			conv4Step(u[b*HD:][lo:hi], cache[(b*HD+lo)*4:][:(hi-lo)*4], taps[lo*4:][:(hi-lo)*4])
		} else {
			w.convWindows(u, cache, taps, x, b, T, lo, hi)
		}
		for t := 0; t < T; t++ {
			row := u[(b*T+t)*HD:]
			for c0 := lo; c0 < hi; c0 += convBlock {
				r := row[c0:min(c0+convBlock, hi)]
				vmath.SiLU(r, r)
			}
		}
	}
}

// convWindows is convDirect's convolution (before SiLU) of sequence b,
// any width, channel by channel, the window in x.
func (w *LayerWeights) convWindows(u, cache, taps, x []float32, b, T, lo, hi int) {
	HD, W := w.Heads*w.HeadDim, w.ConvWidth
	for c := lo; c < hi; c++ {
		win, tp := cache[(b*HD+c)*W:][:W], taps[c*W:][:W]
		for j, v := range win {
			x[j] = v
		}
		for t := 0; t < T; t++ {
			i := (b*T+t)*HD + c
			var a float32
			for j := range W - 1 { // shift the window as the sum goes
				x[j] = x[j+1]
				a += tp[j] * x[j]
			}
			x[W-1] = u[i]
			u[i] = a + tp[W-1]*x[W-1]
		}
		for j, v := range x {
			win[j] = v
		}
	}
}

// conv4Step is convDirect's loop for width 4 and one token, before SiLU:
// u[c] becomes Σ taps·window of channel c, the window (4 per channel,
// oldest first, as the taps) moves on by u[c].
func conv4Step(u, win, taps []float32) {
	for c := range u {
		w, tp := win[c*4:][:4:4], taps[c*4:][:4:4]
		x0, x1, x2, x3 := w[1], w[2], w[3], u[c]
		var a float32
		a += tp[0] * x0
		a += tp[1] * x1
		a += tp[2] * x2
		u[c] = a + tp[3]*x3
		w[0], w[1], w[2], w[3] = x0, x1, x2, x3
	}
}

// conv applies the depthwise causal convolution and then SiLU in place on
// channels [lo, hi) of u [B,T,H·D] (lo a multiple of convBlock), reading
// and updating their windows (oldest first). It walks the tokens in
// order, reading each token's run of channels contiguously (the prefetcher
// streams it); the last W inputs live in a ring (input t in slot t mod
// W), the taps transposed (tap j of every channel in one run) for
// vmath.MulAdd, which, like SiLU, takes one block of convBlock channels at
// a time.
func (w *LayerWeights) conv(u, cache, taps []float32, B, T, lo, hi int) {
	HD, W := w.Heads*w.HeadDim, w.ConvWidth
	n := hi - lo
	buf := scratch.Get(2*W*n + convBlock)
	defer scratch.Put(buf)
	ring := buf[:W*n]        // ring[s·n+i]: channel lo+i's input in slot s
	tapT := buf[W*n : 2*W*n] // tapT[j·n+i]: channel lo+i's tap j
	acc := buf[2*W*n:][:convBlock]
	// the setup and the window's update run j-outer: contiguous runs in
	// the ring, no division per element (at T = 1 they are the whole cost)
	for j := 0; j < W; j++ {
		tj := tapT[j*n:][:n]
		for i := range tj {
			tj[i] = taps[(lo+i)*W+j]
		}
	}
	for b := 0; b < B; b++ {
		win := cache[(b*HD+lo)*W:][:n*W] // channel lo+i's window at win[i·W:]
		// the window holds inputs −W … −1, oldest first: input −W+j is in
		// slot j
		for j := 0; j < W; j++ {
			r := ring[j*n:][:n]
			for i := range r {
				r[i] = win[i*W+j]
			}
		}
		for t := 0; t < T; t++ {
			row := u[(b*T+t)*HD+lo:][:n]
			copy(ring[(t%W)*n:][:n], row)
			for c0 := 0; c0 < n; c0 += convBlock {
				m := min(convBlock, n-c0)
				a := acc[:m]
				clear(a)
				for j := 0; j < W; j++ { // input t−W+1+j is in slot (t+1+j) mod W
					vmath.MulAdd(a, tapT[j*n+c0:], ring[((t+1+j)%W)*n+c0:])
				}
				vmath.SiLU(row[c0:c0+m], a)
			}
		}
		// keep inputs T−W … T−1, oldest first: input T−W+j is in slot
		// (T+j) mod W
		for j := 0; j < W; j++ {
			r := ring[((T+j)%W)*n:][:n]
			for i, v := range r {
				win[i*W+j] = v
			}
		}
	}
}

// l2normRows scales each row of d values of x to unit L2 norm (ε inside
// the root).
func l2normRows(x []float32, d int, eps float64) {
	for i := 0; i+d <= len(x); i += d {
		row := x[i : i+d]
		vmath.Scale(float32(1/math.Sqrt(float64(sumSquares(row))+eps)), row)
	}
}

// sumSquares is Σ x² with four f32 partial sums.
func sumSquares(x []float32) float32 { return vmath.Dot(x, x) }

// softplusGate turns f + dt_bias into the log-decay gate
// g = −exp(A_log[h])·softplus(f + dt_bias) in place on one token's row
// f [H·D] (negA[h] = −exp(A_log[h])), one head at a time.
func softplusGate(f, bias, negA []float32, D int) {
	vmath.Axpy(1, bias, f)
	for h := range len(f) / D {
		row := f[h*D : (h+1)*D]
		vmath.Softplus(row, row, negA[h])
	}
}
