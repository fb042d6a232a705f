// Package pool is the worker pool every kernel family runs its threads on:
// persistent OS threads, optionally pinned to CPUs, that spin on an atomic
// job sequence for a bounded time and then park.
//
// Waking a parked thread costs tens of microseconds on a VM (more than a
// whole decode GEMV), while a spinning worker picks a job up in well under
// a microsecond; so workers spin between the calls of a forward pass and
// park when the work stops. At most GOMAXPROCS−1 workers ever spin (the
// caller needs a P too), so oversubscription (-race -cpu=4 on 2 cores)
// degrades to parking instead of livelock.
package pool

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ktune/ktune/internal/cpu"
)

// Placement orders the CPUs workers are pinned to (worker w, the caller
// being worker 0, takes the w-th CPU of the order).
type Placement int

const (
	// Unpinned leaves threads to the OS scheduler.
	Unpinned Placement = iota
	// Compact: one thread per physical core first, performance cores
	// first, NUMA nodes filled one after another; SMT siblings only once
	// every core has a thread.
	Compact
	// Spread: as Compact, but cores dealt round-robin over NUMA nodes.
	Spread
	// SMT: a core's SMT siblings next to each other (two threads share a
	// core before the next core is used).
	SMT
	// PCores: performance cores only (hybrid processors), one thread per
	// core first; the calling thread is held to them too.
	PCores
	numPlacements
)

// Initial is the placement a pool starts with, and so the one the engine
// runs without a tuning profile (a profile's placement replaces it).
const Initial = Unpinned

var placementNames = [numPlacements]string{"unpinned", "compact", "spread", "smt", "pcores"}

func (p Placement) String() string {
	if p >= 0 && p < numPlacements {
		return placementNames[p]
	}
	return fmt.Sprintf("placement(%d)", int(p))
}

// ParsePlacement reads a placement name.
func ParsePlacement(s string) (Placement, error) {
	for i, n := range placementNames {
		if n == s {
			return Placement(i), nil
		}
	}
	return 0, fmt.Errorf("unknown placement %q (%s)", s, strings.Join(placementNames[:], ", "))
}

// quotaBound reports whether fewer threads may run than the process has
// CPUs (a cgroup quota or GOMAXPROCS): then workers are not pinned, so
// that the scheduler spreads them over the mask instead of every such
// process (a host's containers) crowding its first CPUs.
func quotaBound(t *cpu.Topology) bool { return t.Usable < len(t.CPUs) }

// AllPlacements lists every placement, Unpinned first.
func AllPlacements() []Placement {
	out := make([]Placement, numPlacements)
	for i := range out {
		out[i] = Placement(i)
	}
	return out
}

// Orders are the CPU orders of each placement on a topology (nil for
// Unpinned).
type Orders [numPlacements][]int

// OrdersFor computes the placements' CPU orders from a topology.
func OrdersFor(t *cpu.Topology) Orders {
	var o Orders
	o[Compact] = t.Order(false, false, -1)
	o[Spread] = t.Order(false, true, -1)
	o[SMT] = t.Order(true, false, -1)
	if t.Hybrid() {
		o[PCores] = t.Order(false, false, t.PerfRank())
	} else {
		o[PCores] = o[Compact]
	}
	return o
}

// Placements lists the placements worth timing at a thread count on a
// topology: Compact always; Spread with several NUMA nodes or L3 domains;
// SMT where a core has siblings; PCores on hybrid processors while the
// performance cores' CPUs hold threads. One thread runs Compact only, and
// so do an OS where workers are not pinned (macOS, Windows for now) and a
// process held below its CPUs by a quota (quotaBound).
func Placements(t *cpu.Topology, nodes int, threads int) []Placement {
	out := []Placement{Compact}
	if threads < 2 || !canPin || quotaBound(t) { // unpinned, every placement is the same
		return out
	}
	if nodes > 1 || t.Domains() > 1 {
		out = append(out, Spread)
	}
	if t.SMT() {
		out = append(out, SMT)
	}
	if pc, _ := t.PerformanceCPUs(); t.Hybrid() && threads <= len(pc) {
		out = append(out, PCores)
	}
	return out
}

// parkCheck is how often a parked worker re-checks for work it was not
// woken for.
const parkCheck = 5 * time.Millisecond

// SpinTime is how long an idle worker spins before parking.
var SpinTime = 200 * time.Microsecond

type worker struct {
	id int
	// want is the sequence number of the job this worker takes part in,
	// fn that job: Run writes fn, then want, then publishes the sequence;
	// the worker reads want, then fn, only for a sequence it saw, and the
	// next Run writes fn only after every participant has returned. No
	// job object is allocated per call.
	want     atomic.Uint64
	fn       func(w int)
	sleeping atomic.Int32 // 1 while parked (or about to park)
	wake     chan struct{}
	timer    *time.Timer
	cpu      int // pinned CPU, -1 none
	pinGen   uint64
	spins    bool // may spin (id ≤ GOMAXPROCS−1 at start)
}

// Pool runs jobs on a fixed set of threads; the caller is worker 0.
type Pool struct {
	size    int
	workers []*worker // workers[0] is unused (the caller)
	seq     atomic.Uint64
	left    atomic.Int64
	mu      sync.Mutex // serialises Run and the loops' state below
	// the state of the running For, ForDynamic or ForEach (under mu), and
	// their bodies, method values made once in New: a loop allocates
	// nothing of its own.
	cur      loopState
	forBody  func(w int)
	dynBody  func(w int)
	eachBody func(w int)
	closed   atomic.Bool
	place    atomic.Int32
	placeGn  atomic.Uint64
	orders   Orders
	pinErr   atomic.Pointer[error]
	panicked atomic.Pointer[Panic] // a worker's panic in the running job, re-raised by the caller
}

// Panic is a panic raised in a pool worker while it ran a job: the caller
// of Run, For, ForDynamic or ForEach re-raises it (after every worker has
// finished the job) as a *Panic holding the worker's value and stack, so
// that one goroutine can recover what any of the job's threads raised. The
// workers turn memory faults into panics (debug.SetPanicOnFault): a fault
// in a mapped file that shrank or could not be read is then a Value with
// an Addr method, not a crash.
type Panic struct {
	Value any
	Stack []byte // the worker's stack when it panicked
}

func (p *Panic) Error() string { return fmt.Sprintf("pool worker: %v\n%s", p.Value, p.Stack) }

// Unwrap is Value where it is an error (a runtime.Error for a fault).
func (p *Panic) Unwrap() error { e, _ := p.Value.(error); return e }

// runRecover runs fn(w) and returns what it panicked with (nil if it
// returned), with the stack of the panic.
func runRecover(fn func(w int), w int) (p *Panic) {
	defer func() {
		if v := recover(); v != nil {
			p = &Panic{Value: v, Stack: debug.Stack()}
		}
	}()
	fn(w)
	return nil
}

// New starts a pool of size threads (the caller counts as one, so size−1
// OS threads are started). size < 1 means the usable CPUs
// (cpu.Info.Usable: the affinity mask ∩ online CPUs, limited by a cgroup
// quota and a user-set GOMAXPROCS).
func New(size int) *Pool {
	info := cpu.Get()
	if size < 1 {
		size = max(info.Usable, 1)
	}
	p := &Pool{size: size}
	p.place.Store(int32(Initial))
	p.forBody, p.dynBody, p.eachBody = p.forRun, p.dynRun, p.eachRun
	if canPin && !quotaBound(&info.Topology) {
		p.orders = OrdersFor(&info.Topology)
	}
	p.workers = make([]*worker, size)
	maxSpin := runtime.GOMAXPROCS(0) - 1
	for i := 1; i < size; i++ {
		w := &worker{id: i, wake: make(chan struct{}, 1), cpu: -1, spins: i <= maxSpin}
		p.workers[i] = w
		ready := make(chan struct{})
		go p.loop(w, ready)
		<-ready
	}
	return p
}

var (
	defOnce sync.Once
	def     *Pool
)

// Default is the process-wide pool, one thread per usable CPU (or the size
// SetDefaultSize gave).
func Default() *Pool {
	defOnce.Do(func() { def = New(0) })
	return def
}

// SetDefaultSize sizes the process-wide pool, n workers instead of one per
// usable CPU; it must come before the first Default. For test binaries
// (kerneltest.Main reads KTUNE_TEST_POOL_SIZE), which split work over more workers than the
// machine has CPUs (the extra workers park rather than spin); programs size
// their own pools.
func SetDefaultSize(n int) {
	made := true
	defOnce.Do(func() { def, made = New(n), false })
	if made && def.Size() != n {
		panic(fmt.Sprintf("pool: SetDefaultSize(%d) after the default pool was made with %d workers", n, def.Size()))
	}
}

// Size is the largest thread count Run accepts.
func (p *Pool) Size() int { return p.size }

// Threads is the thread count a request for n runs on: n clamped to
// [1, Size]. Run and For apply it, so that work split by a caller's count
// is never split over more workers than exist; a caller that sizes
// per-thread state or splits work itself uses it too.
func (p *Pool) Threads(n int) int { return min(max(n, 1), p.size) }

// SetPlacement re-pins the workers (at their next job). PCores also holds
// every other thread of the process (the caller included) to the
// performance cores, and leaving it releases them.
func (p *Pool) SetPlacement(pl Placement) {
	old := Placement(p.place.Swap(int32(pl)))
	if canPin && (pl == PCores) != (old == PCores) {
		var set []int
		if pl == PCores {
			set = p.orders[PCores]
		}
		if err := restrictProcess(set); err != nil {
			p.pinErr.Store(&err)
		}
	}
	p.placeGn.Add(1)
}

// Fits reports whether pl gives threads workers a CPU each (PCores holds
// only as many as the performance cores have; every placement fits where
// the OS cannot pin).
func (p *Pool) Fits(pl Placement, threads int) bool {
	o := p.Order(pl)
	return o == nil || len(o) >= min(threads, p.size)
}

// Order returns the CPUs workers are pinned to under pl (nil: unpinned,
// or an OS without affinity).
func (p *Pool) Order(pl Placement) []int {
	if pl < 0 || pl >= numPlacements {
		return nil
	}
	return p.orders[pl]
}

// Placement returns the current placement.
func (p *Pool) Placement() Placement { return Placement(p.place.Load()) }

// PinError reports the last error from pinning a thread (nil if none;
// pinning is best effort and a no-op where the OS has no affinity call).
func (p *Pool) PinError() error {
	if e := p.pinErr.Load(); e != nil {
		return *e
	}
	return nil
}

// Run calls fn(w) for w = 0..threads−1 concurrently, fn(0) on the calling
// goroutine, and returns when all have returned. threads is clamped to
// [1, Size] (see Threads). Calls are serialised; fn must not call Run on
// the same pool.
func (p *Pool) Run(threads int, fn func(w int)) {
	threads = p.Threads(threads)
	if threads == 1 {
		fn(0)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runLocked(threads, fn)
}

// runLocked is Run for threads ≥ 2, p.mu held.
func (p *Pool) runLocked(threads int, fn func(w int)) {
	if p.closed.Load() {
		panic("pool: Run on a closed pool")
	}
	p.left.Store(int64(threads - 1))
	seq := p.seq.Load() + 1
	for _, w := range p.workers[1:threads] {
		w.fn = fn
		w.want.Store(seq)
	}
	// Swap, not Store: a read-modify-write orders this store before the
	// loads of the workers' sleeping flags below on every host (qemu user
	// mode translates arm64 store-release/load-acquire without the x86
	// store-load fence, which lost wake-ups under emulation).
	p.seq.Swap(seq)
	for _, w := range p.workers[1:threads] {
		if w.sleeping.Load() == 1 && w.sleeping.CompareAndSwap(1, 0) {
			w.wake <- struct{}{}
		}
	}
	// the caller's share: a panic in it waits for the workers to finish
	// (the next job must not start under them), then goes on
	mine := runRecover(fn, 0)
	for spin := 0; p.left.Load() > 0; spin++ {
		if spin > 1000 {
			runtime.Gosched()
		}
	}
	for _, w := range p.workers[1:threads] {
		w.fn = nil // keep nothing of the caller's alive
	}
	theirs := p.panicked.Swap(nil)
	switch {
	case mine != nil:
		panic(mine.Value)
	case theirs != nil:
		panic(theirs)
	}
}

// loopState is what For, ForDynamic and ForEach hand their workers.
type loopState struct {
	fn                func(w, lo, hi int)
	each              func(w, i int)
	n, grain, threads int
	chunks            int64
	next              atomic.Int64
}

// startLoop fills p.cur under p.mu (the caller unlocks after the run).
func (p *Pool) startLoop(fn func(w, lo, hi int), each func(w, i int), n, grain, threads int, chunks int64) {
	p.mu.Lock()
	l := &p.cur
	l.fn, l.each, l.n, l.grain, l.threads, l.chunks = fn, each, n, grain, threads, chunks
	l.next.Store(0)
}

// endLoop clears p.cur (so that it keeps none of the caller's closures
// alive) and unlocks.
func (p *Pool) endLoop() {
	p.cur.fn, p.cur.each = nil, nil
	p.mu.Unlock()
}

func (p *Pool) forRun(w int) {
	l := &p.cur
	chunks, threads := int(l.chunks), l.threads
	lo := chunks * w / threads * l.grain
	hi := min(chunks*(w+1)/threads*l.grain, l.n)
	if lo < hi {
		l.fn(w, lo, hi)
	}
}

func (p *Pool) dynRun(w int) {
	l := &p.cur
	for {
		c := l.next.Load()
		if c >= l.chunks {
			return
		}
		per := max(1, (l.chunks-c)/int64(2*l.threads))
		if l.next.CompareAndSwap(c, c+per) {
			l.fn(w, int(c)*l.grain, min(int(c+per)*l.grain, l.n))
		}
	}
}

func (p *Pool) eachRun(w int) {
	l := &p.cur
	for i := int(l.next.Add(1)) - 1; i < l.n; i = int(l.next.Add(1)) - 1 {
		l.each(w, i)
	}
}

// For splits [0, n) into about threads contiguous ranges of multiples of
// grain (the last may be short) and runs fn(w, lo, hi) on each, w being
// the worker (0 ≤ w < Threads(threads)) for per-thread scratch. The split
// uses the count that runs: threads above Size cover the range on Size
// workers.
func (p *Pool) For(threads, n, grain int, fn func(w, lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	threads = min(p.Threads(threads), chunks)
	if threads <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	p.startLoop(fn, nil, n, grain, threads, int64(chunks))
	defer p.endLoop()
	p.runLocked(threads, p.forBody)
}

// ForDynamic is For with the range cut into pieces (multiples of grain)
// that the workers take in turn, each piece half the remainder's share of
// a thread (guided scheduling: large pieces first, single grains last): a
// worker the OS delays, or wakes late, does less of the range instead of
// holding up the others, and workers that run alike finish within a grain
// of each other. fn's results must not depend on how the range is cut.
func (p *Pool) ForDynamic(threads, n, grain int, fn func(w, lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	chunks := int64((n + grain - 1) / grain)
	threads = min(p.Threads(threads), int(chunks))
	if threads <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	p.startLoop(fn, nil, n, grain, threads, chunks)
	defer p.endLoop()
	p.runLocked(threads, p.dynBody)
}

// ForEach runs fn(w, i) for every i in [0, n), the workers taking one
// item at a time: for few, coarse items (a MoE block's experts), where
// any larger piece can leave a thread idle for the length of a piece.
func (p *Pool) ForEach(threads, n int, fn func(w, i int)) {
	threads = min(p.Threads(threads), n)
	if threads <= 1 {
		for i := 0; i < n; i++ {
			fn(0, i)
		}
		return
	}
	p.startLoop(nil, fn, n, 1, threads, int64(n))
	defer p.endLoop()
	p.runLocked(threads, p.eachBody)
}

// Close stops the workers. The default pool is never closed.
func (p *Pool) Close() {
	if p.closed.Swap(true) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq.Add(1)
	for _, w := range p.workers[1:] {
		if w.sleeping.CompareAndSwap(1, 0) {
			w.wake <- struct{}{}
		}
	}
}

func (p *Pool) loop(w *worker, ready chan struct{}) {
	runtime.LockOSThread()
	debug.SetPanicOnFault(true) // a fault in mapped weights: a panic the caller gets (Panic)
	// read the sequence before New returns: a first Run right after New
	// must find this worker waiting for a later sequence, not miss its job
	last := p.seq.Load()
	close(ready)
	for {
		s := p.waitSeq(w, last)
		last = s
		if p.closed.Load() {
			return
		}
		if g := p.placeGn.Load(); g != w.pinGen {
			w.pinGen = g
			p.pin(w)
		}
		if w.want.Load() == s {
			if pn := runRecover(w.fn, w.id); pn != nil {
				p.panicked.CompareAndSwap(nil, pn)
			}
			p.left.Add(-1)
		}
	}
}

// waitSeq spins (if allowed) then parks until the sequence moves past last.
func (p *Pool) waitSeq(w *worker, last uint64) uint64 {
	if w.spins {
		deadline := time.Now().Add(SpinTime)
		for i := 0; ; i++ {
			if s := p.seq.Load(); s != last {
				return s
			}
			if i&1023 == 1023 && time.Now().After(deadline) {
				break
			}
		}
	}
	for {
		w.sleeping.Swap(1) // a full barrier before the seq load (see Run)
		if s := p.seq.Load(); s != last {
			if !w.sleeping.CompareAndSwap(1, 0) {
				<-w.wake // Run already woke us: consume its token
			}
			return s
		}
		// park; the timeout re-checks seq, so that no lost wake-up can
		// hang a job (a stale token is consumed by the next park)
		if w.timer == nil {
			w.timer = time.NewTimer(parkCheck)
		} else {
			w.timer.Reset(parkCheck)
		}
		select {
		case <-w.wake:
		case <-w.timer.C:
		}
		if s := p.seq.Load(); s != last {
			// if Run cleared the flag first, its token waits in the
			// buffer and the next park consumes it
			w.sleeping.CompareAndSwap(1, 0)
			return s
		}
	}
}

func (p *Pool) pin(w *worker) {
	order := p.Order(p.Placement())
	c := -1
	if len(order) > 0 {
		c = order[w.id%len(order)]
	}
	if err := pinThread(c); err != nil {
		p.pinErr.Store(&err)
	}
	w.cpu = c
}
