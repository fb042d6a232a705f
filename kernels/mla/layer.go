package mla

import (
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
	"github.com/ktune/ktune/kernels/gemm"
	"github.com/ktune/ktune/kernels/norm"
)

// LayerWeights is one MLA attention layer (golden README §3.4).
type LayerWeights struct {
	Hidden, Heads, DN, DR, DV, R int
	KVEps                        float32 // kv_a_layernorm epsilon (1e-6, as HF)

	Q       *quant.Matrix // [NH·(DN+DR), C]
	KVA     *quant.Matrix // [R+DR, C] (kv_a_proj_with_mqa)
	KVANorm []float32     // [R]
	WUK     []float32     // [NH][DN][R]: the k_nope rows of kv_b_proj
	WUV     []float32     // [NH][DV][R]: the v rows of kv_b_proj
	O       *quant.Matrix // [C, NH·DV]
	// WUKp and WUVp are W_UK and W_UV packed as F32 GEMM weights
	// [NH·DN, R] and [NH·DV, R] for the decompressing prefill (set by
	// SplitKVB; nil: packed per call).
	WUKp, WUVp *quant.Matrix
	// WUKq and WUVq are W_UK and W_UV quantized to Q8 for the prefill's
	// decompression in class int8act, used where the layer's projections
	// are int8-quantized formats themselves (prefillClasses): set by
	// SplitKVB when Q is one (Q set first), else nil (a forced int8act
	// prefill quantizes them per call).
	WUKq, WUVq *quant.Matrix
}

// SplitKVB cuts kv_b_proj [NH·(DN+DV), R] (f32, row-major) into W_UK and
// W_UV, and packs them (WUKp, WUVp; WUKq, WUVq when Q is int8-quantized).
func (w *LayerWeights) SplitKVB(kvb []float32) error {
	NH, DN, DV, R := w.Heads, w.DN, w.DV, w.R
	if len(kvb) != NH*(DN+DV)*R {
		return fmt.Errorf("mla layer: kv_b_proj has %d values, want %d×%d", len(kvb), NH*(DN+DV), R)
	}
	w.WUK, w.WUV = make([]float32, NH*DN*R), make([]float32, NH*DV*R)
	for h := 0; h < NH; h++ {
		base := h * (DN + DV) * R
		copy(w.WUK[h*DN*R:(h+1)*DN*R], kvb[base:base+DN*R])
		copy(w.WUV[h*DV*R:(h+1)*DV*R], kvb[base+DN*R:base+(DN+DV)*R])
	}
	var err error
	if w.WUKp, err = quant.Quantize(kernel.F32, w.WUK, NH*DN, R, false); err != nil {
		return fmt.Errorf("mla layer: kv_b_proj: %v", err)
	}
	if w.WUVp, err = quant.Quantize(kernel.F32, w.WUV, NH*DV, R, false); err != nil {
		return fmt.Errorf("mla layer: kv_b_proj: %v", err)
	}
	if w.Q == nil || !int8Projections(w.Q.DType) {
		w.WUKq, w.WUVq = nil, nil
		return nil
	}
	if w.WUKq, err = quant.Quantize(kernel.Q8, w.WUK, NH*DN, R, false); err != nil {
		return fmt.Errorf("mla layer: kv_b_proj: %v", err)
	}
	if w.WUVq, err = quant.Quantize(kernel.Q8, w.WUV, NH*DV, R, false); err != nil {
		return fmt.Errorf("mla layer: kv_b_proj: %v", err)
	}
	return nil
}

// Validate checks the shapes.
func (w *LayerWeights) Validate() error {
	NH, C := w.Heads, w.Hidden
	for _, m := range []struct {
		name string
		m    *quant.Matrix
		n, k int
	}{{"q_proj", w.Q, NH * (w.DN + w.DR), C}, {"kv_a_proj_with_mqa", w.KVA, w.R + w.DR, C}, {"o_proj", w.O, C, NH * w.DV}} {
		if m.m == nil || m.m.N != m.n || m.m.K != m.k {
			return fmt.Errorf("mla layer: %s must be [%d, %d]", m.name, m.n, m.k)
		}
	}
	if len(w.KVANorm) != w.R || len(w.WUK) != NH*w.DN*w.R || len(w.WUV) != NH*w.DV*w.R {
		return fmt.Errorf("mla layer: kv_a_layernorm or kv_b_proj has the wrong size")
	}
	return nil
}

// LayerCache holds the latent caches of a batch of sequences.
type LayerCache struct{ Seqs []*Cache }

// NewLayerCache returns empty caches for b sequences in dtype dt.
func (w *LayerWeights) NewLayerCache(b int, dt kernel.DType) (*LayerCache, error) {
	c := &LayerCache{}
	for i := 0; i < b; i++ {
		s, err := NewCache(w.R, w.DR, dt)
		if err != nil {
			return nil, err
		}
		c.Seqs = append(c.Seqs, s)
	}
	return c, nil
}

// Reserve makes room for t more tokens in every sequence's cache, so that
// a Forward of t tokens cannot fail for want of a page (it would panic):
// needed when the pages come from a fallible allocator (a FileAllocator).
func (c *LayerCache) Reserve(t int) error {
	for b, s := range c.Seqs {
		if err := s.Reserve(s.Len() + t); err != nil {
			return fmt.Errorf("sequence %d: %w", b, err)
		}
	}
	return nil
}

// LayerOptions choose threads and kernels; Debug receives intermediates.
type LayerOptions struct {
	Threads         int
	Decode, Prefill *kernel.Choice
	// Rules are the caller's kernel choices: its tuning profile, and the
	// accuracy classes the projections' matmuls may use (none:
	// kernel.DefaultClasses), the prefill's variants too where the
	// projections are int8-quantized formats (Q8 … Q2): there int8act
	// decompresses K and V on a Q8 copy of kv_b_proj (prefillClasses).
	// Attention runs in f32.
	Rules kernel.Rules
	Debug func(name string, t []float32)
	// Observe, if set, sees the input x [rows, w.K] of the projections q,
	// kv_a and o before each runs (activation statistics:
	// model.Calibrate), on the calling goroutine; it must not modify x.
	// nil costs nothing.
	Observe func(w *quant.Matrix, x []float32, rows int)
	// Rows, for T > 1, limits the output to the rows a caller reads: every
	// token's (RowsAll, the default), each sequence's last token's
	// (RowsLast: y [B, C]) or none (RowsNone: y untouched). The caches take
	// every token either way; the queries, the attention and the output
	// projection run for the rows asked for alone, the last query with the
	// prefill variant the whole prompt would have used.
	Rows Rows
}

// Rows says which rows of its output a caller of Forward reads.
type Rows int

const (
	RowsAll  Rows = iota // every token's
	RowsLast             // each sequence's last token's
	RowsNone             // none: only the caches
)

// Forward runs the layer on x [B,T,C] into y [B,T,C] (y [B,C] with
// opt.Rows = RowsLast; nothing with RowsNone), appending the T tokens to
// each sequence's cache. T = 1 uses the absorbed decode over
// the cache; T > 1 the causal prefill. With a fallible page allocator,
// Reserve the T tokens first.
func (w *LayerWeights) Forward(y, x []float32, B, T int, c *LayerCache, opt LayerOptions) {
	NH, DN, DR, DV, R, C := w.Heads, w.DN, w.DR, w.DV, w.R, w.Hidden
	QW, M := DN+DR, B*T
	th := max(opt.Threads, 1)
	dbg := func(name string, t []float32) {
		if opt.Debug != nil {
			opt.Debug(name, t)
		}
	}
	rows := opt.Rows
	if T == 1 {
		rows = RowsAll // one token: its row is the last
	}
	// ---- projections: latent a [M, R+DR]; q [MQ, NH, DN+DR] for the MQ
	// query rows asked for (xq: those rows of x)
	MQ, xq := M, x
	switch rows {
	case RowsLast:
		MQ, xq = B, scratch.Get(B*C)
		defer scratch.Put(xq)
		for b := 0; b < B; b++ {
			copy(xq[b*C:(b+1)*C], x[(b*T+T-1)*C:(b*T+T)*C])
		}
	case RowsNone:
		MQ = 0
	}
	q, a := scratch.Get(MQ*NH*QW), scratch.Get(M*(R+DR))
	kvc, kpe, o := scratch.Get(M*R), scratch.Get(M*DR), scratch.Zeroed(MQ*NH*DV)
	defer scratch.Put(q, a, kvc, kpe, o)
	if opt.Observe != nil {
		opt.Observe(w.Q, xq[:MQ*C], MQ)
		opt.Observe(w.KVA, x[:M*C], M)
	}
	if MQ > 0 {
		gemm.LinearWith(opt.Rules, q, xq, w.Q, MQ, false, th)
	}
	gemm.LinearWith(opt.Rules, a, x, w.KVA, M, false, th)
	// ---- ĉ = RMSNorm(a[:R]), k_pe = a[R:], appended to the caches
	for m := 0; m < M; m++ {
		norm.RMSNormWith(opt.Rules, kvc[m*R:(m+1)*R], a[m*(R+DR):m*(R+DR)+R], w.KVANorm, w.KVEps)
		copy(kpe[m*DR:(m+1)*DR], a[m*(R+DR)+R:(m+1)*(R+DR)])
	}
	dbg("dbg.q", q)
	dbg("dbg.kv_c", kvc)
	dbg("dbg.k_pe", kpe)
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			m := b*T + t
			c.Seqs[b].Append(kvc[m*R:(m+1)*R], kpe[m*DR:(m+1)*DR])
		}
	}
	// ---- attention: o [M, NH·DV]
	scale := float32(1 / math.Sqrt(float64(DN+DR)))
	if T == 1 {
		// absorbed: q̃_h = W_UKᵀ q_nope_h, then z_h over the cache, o_h = W_UV z_h
		// (heads spread over the threads: W_UK and W_UV are read once per
		// token, 2·NH·128·512 floats, as much as the cache at 4K context)
		qa, z := scratch.Zeroed(B*NH*(R+DR)), scratch.Zeroed(B*NH*R)
		defer scratch.Put(qa, z)
		t := decodeTasks.GetOr(newDecodeTask)
		defer t.release()
		t.w, t.q, t.o = w, q, o
		t.d = Decode{NH: NH, R: R, DR: DR, Scale: scale, Q: qa, Caches: c.Seqs, Z: z}
		forRanges(th, B*NH, t.absorbBody)
		plan := opt.Decode
		if plan == nil {
			// the choice at the middle of the context length's
			// half-octave (ctxBucket), cached per bucket by
			// kernel.ChooseDims instead of a fresh choice (and a profile
			// cache entry) per token
			t.dims = [5]int{B, ctxBucket(c.Seqs[0].Len()), NH, R, DR}
			t.plan = opt.Rules.WithClasses().ChooseDims(OpDecode, kernel.F32, decodeKeys, t.dims[:], th)
			plan = &t.plan
		}
		plan.Variant.Impl.(decodeFn)(&t.d, plan.Config.Threads, plan.Config.Params)
		forRanges(th, B*NH, t.expandBody)
	} else if rows != RowsNone {
		TQ := MQ / B // queries per sequence: T, or 1 (its last token)
		for b := 0; b < B; b++ {
			// the variant the whole prompt would run; with one query, the
			// query at the last position (P = the cache's length − 1)
			P := c.Seqs[b].Len() - T
			plan := pick(opt.Prefill, opt.Rules.WithClasses(prefillClasses(opt.Rules.Classes, w.Q.DType)...), OpPrefill, kernel.MakeShape(prefillKeys, T, P, NH, DN, DR, DV, R), th)
			p := &Prefill{NH: NH, DN: DN, DR: DR, DV: DV, R: R, Scale: scale,
				Q: q[b*TQ*NH*QW : (b+1)*TQ*NH*QW], Cache: c.Seqs[b], P: c.Seqs[b].Len() - TQ,
				WUK: w.WUK, WUV: w.WUV, WUKp: w.WUKp, WUVp: w.WUVp, WUKq: w.WUKq, WUVq: w.WUVq, O: o[b*TQ*NH*DV : (b+1)*TQ*NH*DV],
				Chooser: opt.Rules.Chooser}
			plan.Variant.Impl.(prefillFn)(p, plan.Config.Threads, plan.Config.Params)
		}
	}
	if MQ == 0 {
		return
	}
	dbg("dbg.attn_out", o)
	// ---- output projection: y [MQ, C]
	if opt.Observe != nil {
		opt.Observe(w.O, o[:MQ*w.O.K], MQ)
	}
	gemm.LinearWith(opt.Rules, y[:MQ*C], o, w.O, MQ, false, th)
}

// decodeTask is Forward's decode step, pooled with its loop bodies bound
// once, so that a step allocates nothing.
type decodeTask struct {
	w                      *LayerWeights
	q, o                   []float32
	d                      Decode
	plan                   kernel.Choice
	dims                   [5]int
	absorbBody, expandBody func(w, lo, hi int)
}

var decodeTasks scratch.Keep[*decodeTask]

func newDecodeTask() *decodeTask {
	t := &decodeTask{}
	t.absorbBody, t.expandBody = t.absorb, t.expand
	return t
}

func (t *decodeTask) release() {
	*t = decodeTask{absorbBody: t.absorbBody, expandBody: t.expandBody}
	decodeTasks.Put(t)
}

// absorb forms q̃_h = W_UKᵀ q_nope_h and copies q_pe for (sequence, head)
// items [lo, hi).
func (t *decodeTask) absorb(_, lo, hi int) {
	w, q, qa := t.w, t.q, t.d.Q
	NH, DN, DR, R := w.Heads, w.DN, w.DR, w.R
	QW := DN + DR
	for bh := lo; bh < hi; bh++ {
		h := bh % NH
		src := q[bh*QW : (bh+1)*QW]
		dst := qa[bh*(R+DR) : (bh+1)*(R+DR)]
		wuk := w.WUK[h*DN*R : (h+1)*DN*R]
		for e := 0; e < DN; e++ {
			vmath.Axpy(src[e], wuk[e*R:(e+1)*R], dst[:R])
		}
		copy(dst[R:], src[DN:])
	}
}

// expand forms o_h = W_UV z_h for items [lo, hi).
func (t *decodeTask) expand(_, lo, hi int) {
	w := t.w
	NH, DV, R := w.Heads, w.DV, w.R
	for bh := lo; bh < hi; bh++ {
		h := bh % NH
		z := t.d.Z[bh*R : (bh+1)*R]
		oh := t.o[bh*DV : (bh+1)*DV]
		for e := range oh {
			oh[e] = vmath.Dot(w.WUV[(h*DV+e)*R:(h*DV+e+1)*R], z)
		}
	}
}
