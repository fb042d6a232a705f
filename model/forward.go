package model

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/scratch"
	"github.com/ktune/ktune/internal/vmath"
	"github.com/ktune/ktune/kernels/gemm"
	"github.com/ktune/ktune/kernels/kda"
	"github.com/ktune/ktune/kernels/mla"
	"github.com/ktune/ktune/kernels/moe"
	"github.com/ktune/ktune/kernels/norm"
)

// PrefillOptions refine a prefill.
type PrefillOptions struct {
	// AllLogits returns the logits of every position, [T×V], instead of
	// the last position's [V].
	AllLogits bool
	// Logits, if long enough (V floats, or T×V with AllLogits), receives
	// the logits, and PrefillWith returns it (resliced) instead of a new
	// slice: a caller that prefills again and again (a server, a
	// benchmark) reuses warm memory instead of faulting in fresh pages.
	Logits []float32
	// NoLogits feeds the tokens without computing logits (PrefillWith
	// returns nil): a caller that feeds a prompt in pieces skips the final
	// norm and the LM head, a [vocabulary × hidden] matrix read whole, on
	// all but the last piece, and the last layer's feed-forward and MLA
	// output, which no state reads. It excludes AllLogits.
	NoLogits bool
	// EveryRow runs every token through every layer although only the
	// last position's logits are asked for (by default the last layer's
	// feed-forward, and its MLA queries and output, run on the last token
	// alone: nothing else reads them). The MoE layers' expert counts
	// (ExpertCounts, LockHotExperts) then cover the whole prompt in the
	// last layer too.
	EveryRow bool
	// Hidden, if set, receives the residual stream of each pass: i = 0 the
	// embeddings, i = l+1 the output of decoder layer l (before the final
	// norm); h is [n, C] for the n tokens at positions pos.. (a prompt
	// longer than LoadOptions.PrefillChunk is run in several passes). h is
	// only valid during the call.
	Hidden func(i, pos int, h []float32)
}

// Prefill feeds ids to the sequence st (empty or holding earlier tokens)
// and returns the logits [V] at the last position.
func (m *Model) Prefill(st *State, ids []int32) ([]float32, error) {
	return m.PrefillWith(st, ids, PrefillOptions{})
}

// PrefillWith is Prefill with options.
func (m *Model) PrefillWith(st *State, ids []int32, opt PrefillOptions) (_ []float32, err error) {
	defer m.guard(debug.SetPanicOnFault(true), &err)
	if len(ids) == 0 {
		return nil, errors.New("model: prefill of no tokens")
	}
	if opt.NoLogits && opt.AllLogits {
		return nil, errors.New("model: prefill with both AllLogits and NoLogits")
	}
	if err := m.checkStep([]*State{st}, ids, len(ids)); err != nil {
		return nil, err
	}
	if err := st.reserve(len(ids)); err != nil {
		return nil, err
	}
	V, T := m.Shapes.Vocab, len(ids)
	var out []float32
	if opt.AllLogits {
		out = logitsBuf(opt.Logits, T*V) // logits [T, V]
	}
	for c0 := 0; c0 < T; c0 += m.opt.PrefillChunk {
		c1 := min(c0+m.opt.PrefillChunk, T)
		pos := st.n
		var hook func(int, []float32)
		if opt.Hidden != nil {
			hook = func(i int, h []float32) { opt.Hidden(i, pos, h) }
		}
		keep := keepNone // a piece before the last, or no logits asked for
		switch {
		case hook != nil || opt.AllLogits || opt.EveryRow || m.observe != nil:
			keep = keepAll // (a Calibrate observer's statistics cover every token)
		case c1 == T && !opt.NoLogits:
			keep = keepLast
		}
		h := m.forward([]*State{st}, ids[c0:c1], c1-c0, keep, hook) // h [c1−c0, C], [1, C] or nil
		switch {
		case opt.AllLogits:
			m.logits(out[c0*V:c1*V], h, c1-c0)
		case keep == keepLast:
			out = logitsBuf(opt.Logits, V) // logits [V]
			m.logits(out, h, 1)
		case keep == keepAll && c1 == T && !opt.NoLogits: // (Hidden, EveryRow, Calibrate)
			out = logitsBuf(opt.Logits, V) // logits [V]
			m.logits(out, h[(c1-c0-1)*m.Shapes.Hidden:], 1)
		}
		if h != nil {
			scratch.Put(h)
		}
	}
	return out, nil
}

// logitsBuf is dst[:n] when dst holds n floats, else a new slice.
func logitsBuf(dst []float32, n int) []float32 {
	if len(dst) >= n {
		return dst[:n:n]
	}
	return make([]float32, n)
}

// Decode feeds one token to each of several sequences as one batch and
// returns each sequence's logits [V] (views of one new [B×V] buffer).
func (m *Model) Decode(sts []*State, ids []int32) ([][]float32, error) {
	B, V := len(sts), m.Shapes.Vocab
	flat := make([]float32, B*V) // logits [B, V]
	out := make([][]float32, B)
	for b := range out {
		out[b] = flat[b*V : (b+1)*V : (b+1)*V]
	}
	if err := m.DecodeTo(out, sts, ids); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeTo is Decode writing sequence b's logits into out[b] (at least V
// floats each): a decode loop that reuses its buffers touches no fresh
// memory per step (on the VM the project measures on, the 160 pages of a
// new [V] buffer faulted in at ~13 µs each: ~2 ms of a ~15 ms step).
func (m *Model) DecodeTo(out [][]float32, sts []*State, ids []int32) (err error) {
	defer m.guard(debug.SetPanicOnFault(true), &err)
	if len(sts) == 0 || len(sts) != len(ids) {
		return fmt.Errorf("model: decode of %d states with %d tokens; want one token per state", len(sts), len(ids))
	}
	B, V := len(sts), m.Shapes.Vocab
	if len(out) != B {
		return fmt.Errorf("model: decode of %d states into %d logits buffers", B, len(out))
	}
	for b, o := range out {
		if len(o) < V {
			return fmt.Errorf("model: logits buffer %d holds %d floats; want the vocabulary's %d", b, len(o), V)
		}
	}
	if err := m.checkStep(sts, ids, 1); err != nil {
		return err
	}
	for b, st := range sts {
		if err := st.reserve(1); err != nil {
			return fmt.Errorf("state %d: %w", b, err)
		}
	}
	h := m.forward(sts, ids, 1, keepAll, nil) // h [B, C]
	defer scratch.Put(h)
	if B == 1 {
		m.logits(out[0][:V], h, 1)
		return nil
	}
	flat := scratch.Get(B * V) // logits [B, V]
	defer scratch.Put(flat)
	m.logits(flat, h, B)
	for b, o := range out {
		copy(o[:V], flat[b*V:(b+1)*V])
	}
	return nil
}

// FaultError is a memory fault while the model read its mapped weights:
// the file was cut short, rewritten or could not be read (an I/O error on
// a mapped page) under the running model. The call that met it returns
// it; its states are left part-way (free them), and every later step of
// the model returns it too (Model.Fault): load the model again.
type FaultError struct {
	Path string  // the model file
	Addr uintptr // the faulting address
	Err  error   // the runtime's error
}

func (e *FaultError) Error() string {
	if e.Addr == 0 {
		return fmt.Sprintf("model: %s: %v since the model loaded it (its weights are read from the file as they are now); load it again", e.Path, e.Err)
	}
	return fmt.Sprintf("model: %s: reading its mapped weights failed at %#x: the file was cut short, changed or could not be read while the model ran; load it again (%v)", e.Path, e.Addr, e.Err)
}

func (e *FaultError) Unwrap() error { return e.Err }

// CheckFile compares a mapped model's file with what it was at load: a
// file rewritten in place (same file, another size or modification time)
// is a FaultError from now on, as a fault would be, since the mapping
// reads the new bytes. A file replaced by another (renamed over it) or
// removed leaves the mapped one, still intact, in use. It returns Fault.
func (m *Model) CheckFile() error {
	if m.fault.Load() != nil {
		return m.Fault()
	}
	for _, f := range m.files {
		st, err := os.Stat(f.path)
		if err == nil && os.SameFile(st, f.info) && (st.Size() != f.info.Size() || !st.ModTime().Equal(f.info.ModTime())) {
			m.fault.CompareAndSwap(nil, &FaultError{Path: f.path, Err: fmt.Errorf("changed in place (%d bytes, modified %s; %d at load)",
				st.Size(), st.ModTime().Format(time.RFC3339), f.info.Size())})
			break
		}
	}
	return m.Fault()
}

// fileStamp is a file a mapped model reads as it was at load.
type fileStamp struct {
	path string
	info os.FileInfo
}

// statFiles records the files (a split GGUF's parts) a mapped model reads
// its weights from, for CheckFile.
func (m *Model) statFiles(paths []string) {
	m.files = m.files[:0]
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			m.files = append(m.files, fileStamp{p, st})
		}
	}
}

// Fault is the FaultError the model met, nil if none.
func (m *Model) Fault() error {
	if f := m.fault.Load(); f != nil {
		return f
	}
	return nil
}

// guard is the deferred end of a step: it restores the goroutine's
// panic-on-fault setting (old) and turns a memory fault inside the model's
// file mapping, on this goroutine or a pool worker's (pool.Panic), into a
// FaultError in *err, remembered by the model. Any other panic goes on.
func (m *Model) guard(old bool, err *error) {
	debug.SetPanicOnFault(old)
	v := recover()
	if v == nil {
		return
	}
	if e, ok := v.(error); ok {
		var fa interface{ Addr() uintptr }
		if errors.As(e, &fa) && m.inFile != nil && m.inFile(fa.Addr()) {
			f := &FaultError{Path: m.file, Addr: fa.Addr(), Err: e}
			m.fault.CompareAndSwap(nil, f)
			*err = f
			return
		}
	}
	panic(v)
}

// checkStep rejects bad input before any state changes: foreign, nil or
// repeated states, token ids outside the vocabulary, full states.
func (m *Model) checkStep(sts []*State, ids []int32, T int) error {
	if m.Embed.Data == nil {
		return errors.New("model: the model is closed")
	}
	if f := m.fault.Load(); f != nil {
		return f
	}
	seen := map[*State]bool{}
	for b, st := range sts {
		switch {
		case st == nil:
			return fmt.Errorf("model: state %d is nil", b)
		case st.model != m:
			return fmt.Errorf("model: state %d belongs to another model", b)
		case seen[st]:
			return fmt.Errorf("model: state %d appears twice in one batch", b)
		case st.max > 0 && st.n+T > st.max:
			return fmt.Errorf("model: state %d holds %d of at most %d tokens; %d more do not fit", b, st.n, st.max, T)
		}
		seen[st] = true
	}
	for i, id := range ids {
		if id < 0 || int(id) >= m.Shapes.Vocab {
			return fmt.Errorf("model: token %d is id %d, outside the vocabulary 0..%d", i, id, m.Shapes.Vocab-1)
		}
	}
	return nil
}

// keepRows says which rows of the residual stream forward's caller reads
// after the last layer.
type keepRows int

const (
	keepAll  keepRows = iota // every token's (decode, every position's logits, Hidden)
	keepLast                 // each sequence's last token's (a prompt's logits)
	keepNone                 // none (a prompt piece fed without logits)
)

// forward runs B = len(sts) sequences of T new tokens each (ids [B·T],
// sequence-major) through the decoder, extending the states, and returns
// the residual stream after the last layer (from package scratch: the
// caller Puts it back): as keep says, every row, h [B·T, C]; each
// sequence's last row, h [B, C]; or nil. The rows nobody reads skip the
// last layer's feed-forward (the states take nothing from it): a prompt's
// logits run the last layer's MoE block or MLP on its last token only, as
// llama.cpp does, and where that layer is MLA (Kimi Linear's last layer is)
// its queries, attention and output projection too (mla.RowsLast; its
// cache takes every token). hook, if set, sees h after the embedding
// (i = 0) and after each layer l (i = l+1); it needs keep = keepAll.
func (m *Model) forward(sts []*State, ids []int32, T int, keep keepRows, hook func(i int, h []float32)) []float32 {
	B, C := len(sts), m.Shapes.Hidden
	M := B * T
	eps := float32(m.Cfg.RMSNormEps)
	th := m.opt.Threads
	if hook == nil {
		hook = func(int, []float32) {}
	}
	// ---- embedding: h [M, C], row b·T+t = token t of sequence b
	t0 := m.timing.start()  // op timing for LoadOptions.OpTimer (no-op without one)
	h := scratch.Get(M * C) // every row written below
	m.rows(M, rowTask{op: rowEmbed, dst: h, ids: ids, c: C})
	t0 = m.timing.lap(t0, OpEmbed, -1, M)
	hook(0, h)
	xn := scratch.Get(M * C) // a sublayer's normalised input [M, C]
	y := scratch.Get(M * C)  // a sublayer's output [M, C]
	defer scratch.Put(xn, y)
	for l := range m.Layers {
		ly := &m.Layers[l]
		// ---- mixer: h += KDA or MLA (RMSNorm_in(h)), states extended
		t0 = m.timing.start()
		m.rmsNorm(xn, h, ly.InNorm, eps, M) // xn [M, C]
		t0 = m.timing.lap(t0, OpNorm, l, M)
		// the last layer of a pass whose caller reads the last rows, or
		// none: an MLA mixer runs its queries for those rows alone (the
		// cache takes every token), and so does the feed-forward
		lastRows := l == len(m.Layers)-1 && keep != keepAll && T > 1
		mixRows := M // the rows the mixer writes into y
		switch ly.Kind {
		case arch.KDA:
			m.kdaMixer(l, y, xn, sts, T) // y [M, C]
			t0 = m.timing.lap(t0, OpKDA, l, M)
		case arch.MLA:
			rows := mla.RowsAll
			if lastRows {
				rows, mixRows = mla.RowsLast, B
				if keep == keepNone {
					rows, mixRows = mla.RowsNone, 0
				}
			}
			m.mlaMixer(l, y, xn, sts, T, rows) // y [mixRows, C]
			t0 = m.timing.lap(t0, OpMLA, l, M)
		}
		if l == len(m.Layers)-1 && keep == keepNone {
			scratch.Put(h)
			h = nil
			break
		}
		if lastRows {
			// each sequence's last row, moved to the front: row b from
			// row b·T+T−1 ≥ b, so no row is overwritten before it moves
			for b := 0; b < B; b++ {
				copy(h[b*C:(b+1)*C], h[(b*T+T-1)*C:(b*T+T)*C])
			}
			if mixRows == M { // (a KDA mixer's rows, likewise)
				for b := 0; b < B; b++ {
					copy(y[b*C:(b+1)*C], y[(b*T+T-1)*C:(b*T+T)*C])
				}
			}
			M = B
		}
		m.addRows(h, y, M) // h [M, C]
		t0 = m.timing.lap(t0, OpOther, l, M)
		// ---- feed-forward: h += MoE or dense MLP (RMSNorm_post(h))
		m.rmsNorm(xn, h, ly.PostNorm, eps, M) // xn [M, C]
		t0 = m.timing.lap(t0, OpNorm, l, M)
		if ly.MoE != nil {
			r := ly.MoE.Forward(y, xn, M, moe.BlockOptions{Threads: th, Rules: m.rules(), Observe: m.observe, Routing: &m.routing}) // y [M, C]
			m.countExperts(l, r)
			t0 = m.timing.lap(t0, OpMoE, l, M)
		} else {
			m.mlp(ly.MLP, y, xn, M) // y [M, C]
			t0 = m.timing.lap(t0, OpMLP, l, M)
		}
		m.addRows(h, y, M) // h [M, C]
		m.timing.lap(t0, OpOther, l, M)
		hook(l+1, h)
	}
	for _, st := range sts {
		st.n += T
	}
	return h
}

// rowGrain is the fewest token rows a worker takes in the row-wise steps
// between the layers' matmuls (embedding, norms, residual adds), so that a
// decode step's few rows stay on the calling thread.
const rowGrain = 16

// rowOp is a row-wise step between the layers' matmuls.
type rowOp int

const (
	rowEmbed rowOp = iota // dst row i = the embedding of ids[i]
	rowNorm               // dst = RMSNorm(x)·w
	rowAdd                // dst += x
)

// rowTask is one row-wise step: what rows hands the pool. The Model keeps
// the running one (a Model runs one forward at a time) with its loop body
// bound once, so that a step allocates nothing.
type rowTask struct {
	op        rowOp
	dst, x, w []float32
	ids       []int32
	eps       float32
	c         int
}

// rows runs t over the M token rows on the model's threads. Every row is
// computed the same way whoever computes it.
func (m *Model) rows(M int, t rowTask) {
	if m.rowBody == nil {
		m.rowBody = m.rowRange
	}
	m.row = t
	pool.Default().For(m.opt.Threads, M, rowGrain, m.rowBody)
	m.row = rowTask{}
}

// rowRange is rows' loop body: rows [lo, hi) of m.row.
func (m *Model) rowRange(_, lo, hi int) {
	t := &m.row
	C := t.c
	switch t.op {
	case rowEmbed:
		for i := lo; i < hi; i++ {
			m.Embed.Row(t.dst[i*C:(i+1)*C], int(t.ids[i]))
		}
	case rowNorm:
		norm.RMSNormWith(m.rules(), t.dst[lo*C:hi*C], t.x[lo*C:hi*C], t.w, t.eps)
	case rowAdd:
		// row by row: vmath.Axpy rounds its last len mod 16 elements
		// apart, so a split of the rows must not move them
		for r := lo; r < hi; r++ {
			vmath.Axpy(1, t.x[r*C:(r+1)*C], t.dst[r*C:(r+1)*C])
		}
	}
}

// rmsNorm is norm.RMSNorm over M rows of the hidden width, on the model's
// threads.
func (m *Model) rmsNorm(dst, x, w []float32, eps float32, M int) {
	m.rows(M, rowTask{op: rowNorm, dst: dst, x: x, w: w, eps: eps, c: len(w)})
}

// addRows adds y to h, both [M, C], on the model's threads.
func (m *Model) addRows(h, y []float32, M int) {
	m.rows(M, rowTask{op: rowAdd, dst: h, x: y, c: m.Shapes.Hidden})
}

// logits computes dst [n, V] = RMSNorm_final(h [n, C])·lm_headᵀ.
func (m *Model) logits(dst, h []float32, n int) {
	C := m.Shapes.Hidden
	t0 := m.timing.start()
	xn := scratch.Get(n * C) // [n, C]
	defer scratch.Put(xn)
	norm.RMSNormWith(m.rules(), xn, h[:n*C], m.Norm, float32(m.Cfg.RMSNormEps))
	t0 = m.timing.lap(t0, OpNorm, -1, n)
	if m.observe != nil {
		m.observe(m.LMHead, xn, n)
	}
	gemm.LinearWith(m.rules(), dst, xn, m.LMHead, n, false, m.opt.Threads) // dst [n, V]
	m.timing.lap(t0, OpLMHead, -1, n)
}

// mlp computes y [M, C] = down·(silu(gate·x) ⊙ (up·x)) for x [M, C].
func (m *Model) mlp(f *MLP, y, x []float32, M int) {
	hid := scratch.Get(M * f.Gate.N) // [M, I]
	defer scratch.Put(hid)
	if m.observe != nil {
		m.observe(f.Gate, x[:M*f.Gate.K], M)
		m.observe(f.Up, x[:M*f.Up.K], M)
	}
	gemm.GateUpWith(m.rules(), hid, x, f.Gate, f.Up, M, m.opt.Threads)
	if m.observe != nil {
		m.observe(f.Down, hid, M)
	}
	gemm.LinearWith(m.rules(), y, hid, f.Down, M, false, m.opt.Threads) // y [M, C]
}

// kdaMixer runs KDA layer l on x [B·T, C] into y [B·T, C]. A batch of
// several sequences runs on a scratch cache whose convolution windows
// ([B][H·D][W], small) are gathered and scattered back, and whose states
// are the sequences' own (kda.LayerCache.States: 2 MiB each at Kimi's
// widths, which copying in and out had made 10% of a decode step at 8
// sequences).
func (m *Model) kdaMixer(l int, y, x []float32, sts []*State, T int) {
	w, opt := m.Layers[l].KDA, kda.LayerOptions{Threads: m.opt.Threads, Rules: m.rules(), Observe: m.observe}
	if len(sts) == 1 {
		w.Forward(y, x, 1, T, sts[0].kda[l], opt)
		return
	}
	B := len(sts)
	c := m.kdaScratch(l, B)
	for b, st := range sts {
		gatherKDA(c, b, st.kda[l], false)
		c.States[b] = st.kda[l].State
	}
	w.Forward(y, x, B, T, c, opt)
	for b, st := range sts {
		gatherKDA(c, b, st.kda[l], true)
	}
	clear(c.States) // the scratch keeps no sequence's memory
}

// gatherKDA copies one sequence's convolution windows s into slot b of the
// batch cache c (or back, when back is set).
func gatherKDA(c *kda.LayerCache, b int, s *kda.LayerCache, back bool) {
	for _, p := range [][2][]float32{{c.ConvQ, s.ConvQ}, {c.ConvK, s.ConvK}, {c.ConvV, s.ConvV}} {
		n := len(p[1])
		slot := p[0][b*n : (b+1)*n]
		if back {
			copy(p[1], slot)
		} else {
			copy(slot, p[1])
		}
	}
}

// kdaScratch returns a batch cache of B sequences for layer l, reused
// across decode steps: convolution windows of its own, the states the
// caller's (States, len B).
func (m *Model) kdaScratch(l, B int) *kda.LayerCache {
	if m.kdaTmp == nil {
		m.kdaTmp = map[int][]*kda.LayerCache{}
	}
	cs := m.kdaTmp[B]
	if cs == nil {
		cs = make([]*kda.LayerCache, len(m.Layers))
		m.kdaTmp[B] = cs
	}
	if cs[l] == nil {
		c := m.Layers[l].KDA.NewLayerCache(B)
		c.State, c.States = nil, make([][]float32, B)
		cs[l] = c
	}
	return cs[l]
}

// mlaMixer runs MLA layer l on x [B·T, C] into y [B·T, C] over the
// sequences' latent caches.
func (m *Model) mlaMixer(l int, y, x []float32, sts []*State, T int, rows mla.Rows) {
	c := &m.mlaTmp
	c.Seqs = c.Seqs[:0]
	for _, st := range sts {
		c.Seqs = append(c.Seqs, st.mla[l])
	}
	defer clear(c.Seqs)
	m.Layers[l].MLA.Forward(y, x, len(sts), T, c, mla.LayerOptions{Threads: m.opt.Threads, Rules: m.rules(), Observe: m.observe, Rows: rows})
}
