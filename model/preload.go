package model

import (
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ktune/ktune/internal/cpu"
)

// Preload. A mapped model starts with an empty page cache: its first
// tokens read every expert they route to from disk, one layer's few
// experts at a time, at a fraction of the disk's rate (the 48B Q2_K GGUF
// in 16 GiB read 195 MiB a token over its first 64 tokens, 44 MiB once
// warm, and decoded at a third of its warm speed). So the load of a mapped
// model starts a background reader over the weights every token reads
// (attention, dense and shared feed-forward, lm_head), then over the
// routed experts in rounds (expert 0 of every MoE layer, then expert 1, …:
// an equal share of each layer), until the memory available (cgroup limit
// included, a tenth to spare, less the budget of the memory check) is
// spent. It works in batches of 32 MiB: the next batch's missing pages are
// advised (MADV_WILLNEED) while this one is populated (MADV_POPULATE_READ,
// Linux 5.14: read where missing and mapped into the process, so the first
// tokens take no page fault per 4 KiB of weights the cache already holds;
// elsewhere it waits for the batch's last page instead). With two batches
// in flight the disk streams at its sequential rate and the decode's own
// prefetches queue behind one batch at most. The pages stay evictable:
// what the tokens do not route to leaves the cache as usual. Close stops
// it; KTUNE_PRELOAD=0 turns it off.

// PreloadEnv is the environment variable that turns preloading off ("0").
const PreloadEnv = "KTUNE_PRELOAD"

// preloadBatch is the size of a preload's batches.
const preloadBatch = 32 << 20

// preloader is a running preload (Model.preload).
type preloader struct {
	stop     atomic.Bool
	done     chan struct{}
	planned  int64 // bytes the budget allowed
	walked   int64 // bytes walked (resident already or not), set when done
	duration time.Duration
}

// PreloadStats is what Model.WaitPreload reports.
type PreloadStats struct {
	// Planned is the bytes the budget allowed, Walked the bytes asked for
	// before the reader stopped (Planned unless closed early).
	Planned, Walked int64
	// Duration is how long the reader ran.
	Duration time.Duration
}

// preloadViews returns the byte ranges a preload walks, in its order, at
// most budget bytes of them: every non-expert packed matrix in model order,
// then the routed experts in rounds, expert e's gate, up and down matrices
// of every MoE layer before expert e+1's. A matrix is cut where the budget
// ends; matrices sharing bytes are walked once.
func (m *Model) preloadViews(budget int64) [][]byte {
	var out [][]byte
	seen := map[*byte]bool{}
	add := func(b []byte) bool {
		if len(b) == 0 || seen[unsafe.SliceData(b)] {
			return budget > 0
		}
		seen[unsafe.SliceData(b)] = true
		n := min(int64(len(b)), budget)
		if n <= 0 {
			return false
		}
		out = append(out, b[:n])
		budget -= n
		return budget > 0
	}
	experts := map[*byte]bool{}
	most := 0
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			most = max(most, len(b.Experts))
			for e := range b.Experts {
				x := &b.Experts[e]
				for _, q := range [][]byte{x.Gate.Data, x.Up.Data, x.Down.Data} {
					if len(q) > 0 {
						experts[unsafe.SliceData(q)] = true
					}
				}
			}
		}
	}
	for _, pq := range m.matrices() {
		if q := *pq; q != nil && !experts[unsafe.SliceData(q.Data)] {
			if !add(q.Data) {
				return out
			}
		}
	}
	for e := 0; e < most; e++ {
		for l := range m.Layers {
			if b := m.Layers[l].MoE; b != nil && e < len(b.Experts) {
				x := &b.Experts[e]
				for _, q := range [][]byte{x.Gate.Data, x.Up.Data, x.Down.Data} {
					if !add(q) {
						return out
					}
				}
			}
		}
	}
	return out
}

// preloadBudget is the bytes a preload may bring in: a tenth less than
// the available memory (opt.AvailableMemory, else the OS's), less the
// budget of the memory check; 0 where the available memory is unknown.
func (m *Model) preloadBudget() int64 {
	avail := m.opt.AvailableMemory
	if avail == 0 {
		avail = cpu.AvailableMemory()
	}
	if avail <= 0 {
		return 0
	}
	return max(avail/10*9-m.mem.Budgeted, 0)
}

// startPreload starts the background reader for a mapped model, unless
// KTUNE_PRELOAD=0, the OS cannot prefetch, or nothing is mapped.
//
// With an expert cache (expertcache.go) it walks the hot weights alone,
// then fills the cache's slots by its own reads.
func (m *Model) startPreload() {
	if !m.mapped || m.copied != nil || !prefetchSupported || os.Getenv(PreloadEnv) == "0" {
		return
	}
	budget := m.preloadBudget()
	c := m.cache
	var order []int
	if c != nil {
		budget = min(budget, m.hotBytes())
		order = c.fillOrder(m)
	}
	views := m.preloadViews(budget)
	if len(views) == 0 && len(order) == 0 {
		return
	}
	p := &preloader{done: make(chan struct{})}
	for _, v := range views {
		p.planned += int64(len(v))
	}
	if c != nil {
		p.planned += int64(min(len(order), len(c.owner))) * int64(c.slotBytes)
	}
	m.preload = p
	go func() {
		p.run(views)
		if c != nil {
			start := time.Now().Add(-p.duration)
			p.walked += c.fill(order, &p.stop)
			p.duration = time.Since(start)
		}
		close(p.done)
	}()
}

// run walks views in batches of preloadBatch bytes: it advises the next
// batch (its missing pages) and then populates this one (MADV_POPULATE_READ:
// read where missing and mapped into the process, so the first tokens take
// no fault per page either), two batches in flight. Where populating is not
// supported (before Linux 5.14, macOS) it waits instead until the batch's
// last page is resident.
func (p *preloader) run(views [][]byte) {
	start := time.Now()
	var vec []byte
	var walked int64
	batches := preloadBatches(views, preloadBatch)
	if len(batches) == 0 {
		return
	}
	advise := func(b [][]byte) {
		for _, v := range b {
			willNeed(v, &vec)
		}
	}
	advise(batches[0])
	for i, b := range batches {
		if p.stop.Load() {
			break
		}
		if i+1 < len(batches) {
			advise(batches[i+1])
		}
		for _, v := range b {
			if !populate(v) {
				p.wait(b[len(b)-1])
				break
			}
		}
		for _, v := range b {
			walked += int64(len(v))
		}
	}
	p.walked, p.duration = walked, time.Since(start)
}

// preloadBatches groups views in order into batches of at most size bytes,
// a view longer than size split over several.
func preloadBatches(views [][]byte, size int) [][][]byte {
	var out [][][]byte
	var cur [][]byte
	n := 0
	for _, v := range views {
		for len(v) > 0 {
			k := min(len(v), size-n)
			cur = append(cur, v[:k])
			v, n = v[k:], n+k
			if n == size {
				out, cur, n = append(out, cur), nil, 0
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// wait polls until b's last page is resident, the preload is stopped, or
// 2 s have passed (a hint that was not acted on).
func (p *preloader) wait(b []byte) {
	if len(b) == 0 {
		return
	}
	var v [1]byte
	last := unsafe.Pointer(unsafe.SliceData(b[len(b)-1:]))
	ptr := unsafe.Pointer(uintptr(last) &^ uintptr(pageSize-1))
	for t := time.Now(); time.Since(t) < 2*time.Second && !p.stop.Load(); {
		if !residency(ptr, 1, v[:]) || v[0]&1 != 0 {
			return
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// WaitPreload waits for the model's preload to finish (nothing to wait for
// where none runs: the zero stats) and reports it.
func (m *Model) WaitPreload() PreloadStats {
	p := m.preload
	if p == nil {
		return PreloadStats{}
	}
	<-p.done
	return PreloadStats{Planned: p.planned, Walked: p.walked, Duration: p.duration}
}

// stopPreload stops a running preload and waits for it (Close).
func (m *Model) stopPreload() {
	if p := m.preload; p != nil {
		p.stop.Store(true)
		<-p.done
		m.preload = nil
	}
}
