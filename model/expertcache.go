package model

import (
	"cmp"
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"github.com/ktune/ktune/internal/mapfile"
	"github.com/ktune/ktune/internal/quant"
)

// The expert cache. A mapped model larger than the memory it may use runs
// its routed experts from the page cache: a missed expert is advised
// (prefetch.go) and faulted in 4 KiB at a time, and the kernel spends as
// much CPU reclaiming and reading ahead as the decode spends computing
// (48–82 s of system time per 100 s run of the 48B Q4_K_M GGUF on 2 vCPUs,
// at 30–35% of the paged bound). So where the experts do not fit, the
// load keeps them in a cache of its own instead: anonymous memory (huge
// pages) cut into slots of one expert each (its gate, up and down
// matrices), as many as the memory allows after the weights every token
// reads (which stay mapped) and the budget of the memory check. The MoE
// block's Prefetch hook, called after routing and before any expert runs,
// looks up each routed expert; a missed one takes the least recently used
// slot and its three matrices are read into it with O_DIRECT reads (past
// the page cache: no reclaim, no faults, the device's full request size),
// all of the layer's missed experts' reads in flight at once; then the
// experts' matrices point into their slots. An evicted expert's matrices
// point back into the mapping. The preload fills the free slots in the
// background (expert 0 of every layer, then expert 1, …). Nothing changes
// a result: a slot holds the file's bytes. The cache runs on Linux (where
// the file system takes O_DIRECT); KTUNE_EXPERT_CACHE=0 turns it off, =1
// turns it on even where the experts fit.

// ExpertCacheEnv is the environment variable of the expert cache: "0" off,
// "1" on even where the model fits in memory, else (unset) on where the
// routed experts do not fit.
const ExpertCacheEnv = "KTUNE_EXPERT_CACHE"

// expertCacheMinSlots is the fewest slots a cache is made with: a layer's
// routed experts (8 of Kimi Linear's 256) must fit several times over, or
// the cache would evict what the same token reads next.
const expertCacheMinSlots = 64

// directAlign is the alignment of direct I/O's offsets, lengths and
// buffer (the logical block size of any device, at most a page): the
// expert cache's and the verification's.
const directAlign = 4096

// blockReader reads whole aligned extents of a model file's parts past
// the page cache (directReader on Linux); tests use buffered reads.
type blockReader interface {
	// ReadAt reads len(dst) bytes of part at off (both directAlign
	// aligned), fewer only at the end of the file.
	ReadAt(part int, dst []byte, off int64) (int, error)
	Close() error
}

// cachedExpert is one routed expert of a mapped model.
type cachedExpert struct {
	mats [3]*quant.Matrix // gate, up, down
	orig [3][]byte        // their views of the mapping
	part [3]int           // the part of the file holding each
	off  [3]int64         // the aligned file offset of each one's read
	skip [3]int           // where the matrix starts in that read
	span [3]int           // the read's aligned length
	slot int32            // its slot, -1: none
}

// slot states
const (
	slotFree uint8 = iota
	slotFilling
	slotReady
)

// expertCache is the cache (Model.cache).
type expertCache struct {
	r         blockReader
	mem       []byte
	release   func([]byte) error
	slotBytes int
	experts   []cachedExpert
	base      []int // per layer: the index in experts of its expert 0 (-1: no MoE)

	mu    sync.Mutex
	cond  sync.Cond
	owner []int32 // per slot: the expert in it, -1: none
	state []uint8
	// the slots in use order: prev/next form a ring through the sentinel
	// len(owner), next of the sentinel the most recently used
	prev, next []int32
	unused     int32 // slots [unused, len) have never been used

	hits, misses, readBytes, readErrs atomic.Int64
}

// ExpertCacheStats is what Model.ExpertCache reports.
type ExpertCacheStats struct {
	Slots     int   // experts the cache holds
	Bytes     int64 // its memory
	Hits      int64 // routed experts found in it
	Misses    int64 // routed experts read into it
	ReadBytes int64 // bytes read from the file (misses and the preload)
	ReadErrs  int64 // reads that failed (the expert ran from the mapping)
}

// ExpertCache reports the expert cache (the zero stats where there is none).
func (m *Model) ExpertCache() ExpertCacheStats {
	c := m.cache
	if c == nil {
		return ExpertCacheStats{}
	}
	return ExpertCacheStats{Slots: len(c.owner), Bytes: int64(len(c.mem)), Hits: c.hits.Load(), Misses: c.misses.Load(),
		ReadBytes: c.readBytes.Load(), ReadErrs: c.readErrs.Load()}
}

// expertCacheMode reads ExpertCacheEnv: -1 off, 1 forced on, 0 auto.
func expertCacheMode() int {
	switch os.Getenv(ExpertCacheEnv) {
	case "0":
		return -1
	case "1":
		return 1
	}
	return 0
}

// hotBytes is the bytes of the mapped matrices that are not routed experts
// (what every token reads: they stay in the page cache).
func (m *Model) hotBytes() int64 {
	experts := map[*byte]bool{}
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			for e := range b.Experts {
				x := &b.Experts[e]
				for _, q := range []*quant.Matrix{x.Gate, x.Up, x.Down} {
					if len(q.Data) > 0 {
						experts[&q.Data[0]] = true
					}
				}
			}
		}
	}
	seen := map[*byte]bool{}
	var n int64
	for _, pq := range m.matrices() {
		if q := *pq; q != nil && len(q.Data) > 0 && !experts[&q.Data[0]] && !seen[&q.Data[0]] {
			seen[&q.Data[0]] = true
			n += int64(len(q.Data))
		}
	}
	return n
}

// startExpertCache makes the expert cache of a mapped model whose routed
// experts do not fit in what the preload may use (preloadBudget) beside
// the hot weights, unless ExpertCacheEnv says otherwise (cacheSlots);
// locate gives a mapped view's part and file offset, open the reader of
// the file's parts. Where anything fails (no O_DIRECT, no memory, too few
// slots) the model runs from the mapping as before.
func (m *Model) startExpertCache(locate func([]byte) (int, int64, bool), open func() (blockReader, error)) {
	mode := expertCacheMode()
	if !m.mapped || m.copied != nil || mode < 0 {
		return
	}
	c := m.newExpertCache(locate)
	if c == nil {
		return
	}
	var total int64
	for g := range c.experts {
		for _, b := range c.experts[g].orig {
			total += int64(len(b))
		}
	}
	slots := cacheSlots(mode, m.preloadBudget()-m.hotBytes(), total, c.slotBytes, len(c.experts))
	if slots > 0 && c.start(slots, open) == nil {
		m.cache = c
	}
}

// cacheSlots is the slots of an expert cache for n experts of total bytes,
// slotBytes a slot, given the memory budget: none where they all fit (the
// page cache holds them) or fewer than expertCacheMinSlots fit; with mode
// 1 (forced) at least expertCacheMinSlots (or n) even where they fit.
func cacheSlots(mode int, budget, total int64, slotBytes, n int) int {
	slots := int(min(int64(n), max(budget, 0)/int64(slotBytes)))
	if mode > 0 {
		return max(slots, min(n, expertCacheMinSlots))
	}
	if budget >= total || slots < expertCacheMinSlots {
		return 0
	}
	return slots
}

// newExpertCache lays out m's routed experts for a cache (no memory yet:
// start); nil if m has none or one is not a view of the mapping.
func (m *Model) newExpertCache(locate func([]byte) (int, int64, bool)) *expertCache {
	c := &expertCache{}
	c.base = make([]int, len(m.Layers))
	for l := range m.Layers {
		c.base[l] = -1
		b := m.Layers[l].MoE
		if b == nil {
			continue
		}
		c.base[l] = len(c.experts)
		for e := range b.Experts {
			x := &b.Experts[e]
			ce := cachedExpert{mats: [3]*quant.Matrix{x.Gate, x.Up, x.Down}, slot: -1}
			need := 0
			for i, q := range ce.mats {
				part, off, ok := locate(q.Data)
				if !ok {
					return nil // not a view of the mapping (converted on load)
				}
				al := off &^ (directAlign - 1)
				ce.orig[i], ce.part[i], ce.off[i], ce.skip[i] = q.Data, part, al, int(off-al)
				ce.span[i] = (ce.skip[i] + len(q.Data) + directAlign - 1) &^ (directAlign - 1)
				need += ce.span[i]
			}
			c.slotBytes = max(c.slotBytes, need)
			c.experts = append(c.experts, ce)
		}
	}
	if len(c.experts) == 0 {
		return nil
	}
	return c
}

// start opens the reader and allocates the cache's slots.
func (c *expertCache) start(slots int, open func() (blockReader, error)) error {
	r, err := open()
	if err != nil {
		return err
	}
	mem, release, err := mapfile.Anon(slots * c.slotBytes)
	if err != nil || mem == nil {
		r.Close()
		return cmp.Or(err, errors.New("expert cache: no memory"))
	}
	c.r, c.mem, c.release = r, mem, release
	c.cond.L = &c.mu
	c.owner, c.state = make([]int32, slots), make([]uint8, slots)
	c.prev, c.next = make([]int32, slots+1), make([]int32, slots+1)
	for i := range c.owner {
		c.owner[i] = -1
	}
	c.prev[slots], c.next[slots] = int32(slots), int32(slots) // an empty ring
	return nil
}

// closeExpertCache points every expert back into the mapping and frees the
// cache (Close, after the preload stopped).
func (m *Model) closeExpertCache() error {
	c := m.cache
	if c == nil {
		return nil
	}
	m.cache = nil
	for g := range c.experts {
		x := &c.experts[g]
		for i, q := range x.mats {
			q.Data = x.orig[i]
		}
	}
	err := c.r.Close()
	if c.release != nil {
		if e := c.release(c.mem); err == nil {
			err = e
		}
	}
	return err
}

// hook is layer l's Prefetch hook.
func (c *expertCache) hook(l int) func([]int) {
	var miss []int
	return func(experts []int) { miss = c.fetch(c.base[l], experts, miss[:0]) }
}

// slotView is the bytes of matrix i of expert g in slot s.
func (c *expertCache) slotView(s int32, g, i int) []byte {
	x := &c.experts[g]
	at := int(s) * c.slotBytes
	for j := 0; j < i; j++ {
		at += x.span[j]
	}
	return c.mem[at+x.skip[i] : at+x.skip[i]+len(x.orig[i]) : at+x.skip[i]+len(x.orig[i])]
}

// unlink takes slot s out of the use ring; use puts it first (most
// recently used).
func (c *expertCache) unlink(s int32) {
	p, n := c.prev[s], c.next[s]
	c.next[p], c.prev[n] = n, p
}

func (c *expertCache) use(s int32) {
	h := int32(len(c.owner))
	n := c.next[h]
	c.prev[s], c.next[s] = h, n
	c.prev[n], c.next[h] = s, s
}

// take returns a slot for expert g (c.mu held), marked filling and most
// recently used: a never used one, else (evict) the least recently used
// one that is not being filled, its expert pointed back into the mapping;
// -1 if there is none.
func (c *expertCache) take(g int, evict bool) int32 {
	s := int32(-1)
	switch {
	case int(c.unused) < len(c.owner):
		s = c.unused
		c.unused++
	case !evict:
		return -1
	default:
		h := int32(len(c.owner))
		for t := c.prev[h]; t != h; t = c.prev[t] {
			if c.state[t] == slotReady {
				s = t
				break
			}
		}
		if s < 0 {
			return -1
		}
		c.unlink(s)
		if o := c.owner[s]; o >= 0 {
			old := &c.experts[o]
			old.slot = -1
			for i, q := range old.mats {
				q.Data = old.orig[i]
			}
		}
	}
	c.owner[s], c.state[s] = int32(g), slotFilling
	c.experts[g].slot = s
	c.use(s)
	return s
}

// read reads expert g's three matrices into slot s, all three at once;
// false if a read failed or came short.
func (c *expertCache) read(g int, s int32) bool {
	x := &c.experts[g]
	at := int(s) * c.slotBytes
	var wg sync.WaitGroup
	var bad atomic.Bool
	for i := range x.mats {
		dst := c.mem[at : at+x.span[i]]
		at += x.span[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, _ := c.r.ReadAt(x.part[i], dst, x.off[i])
			c.readBytes.Add(int64(max(n, 0)))
			if n < x.skip[i]+len(x.orig[i]) { // an error, or the file shorter than its tensors
				bad.Store(true)
			}
		}()
	}
	wg.Wait()
	if bad.Load() {
		c.readErrs.Add(1)
		return false
	}
	return true
}

// done ends the fill of slot s with expert g (c.mu held): ready, or after
// a failed read empty (no owner: the expert runs from the mapping) and
// least recently used, the next one evicted.
func (c *expertCache) done(g int, s int32, ok bool) {
	c.state[s] = slotReady
	if ok {
		return
	}
	c.experts[g].slot, c.owner[s] = -1, -1
	c.unlink(s)
	h := int32(len(c.owner))
	p := c.prev[h]
	c.prev[s], c.next[s] = p, h
	c.next[p], c.prev[h] = s, s
}

// fetch makes the routed experts (the indices, of the layer whose expert 0
// is experts[base]) resident in slots and points their matrices there:
// hits are moved to the front, misses take slots and are read, all at
// once; an expert the preload is filling is waited for. An expert that
// cannot get a slot or whose read fails runs from the mapping. miss is
// scratch, returned.
func (c *expertCache) fetch(base int, experts []int, miss []int) []int {
	c.mu.Lock()
	for _, e := range experts {
		g := base + e
		if s := c.experts[g].slot; s >= 0 {
			c.unlink(s)
			c.use(s)
			c.hits.Add(1)
			continue
		}
		if s := c.take(g, true); s >= 0 {
			miss = append(miss, g)
			c.misses.Add(1)
		}
	}
	c.mu.Unlock()
	ok := make([]bool, len(miss))
	if len(miss) > 0 {
		var wg sync.WaitGroup
		for j, g := range miss {
			wg.Add(1)
			s := c.experts[g].slot
			go func() { defer wg.Done(); ok[j] = c.read(g, s) }()
		}
		wg.Wait()
	}
	c.mu.Lock()
	for j, g := range miss {
		c.done(g, c.experts[g].slot, ok[j])
	}
	c.cond.Broadcast()
	for _, e := range experts {
		x := &c.experts[base+e]
		for x.slot >= 0 && c.state[x.slot] == slotFilling {
			c.cond.Wait()
		}
		for i, q := range x.mats {
			if x.slot >= 0 {
				q.Data = c.slotView(x.slot, base+e, i)
			} else {
				q.Data = x.orig[i]
			}
		}
	}
	c.mu.Unlock()
	return miss
}

// fill reads experts in the given order into the never used slots until
// they run out or stop is set (the preload), fillWorkers experts in flight
// (three reads each); it returns the bytes it read. Matrices are pointed
// into the slots by the next fetch that routes to them, on the model's
// goroutine.
func (c *expertCache) fill(order []int, stop *atomic.Bool) int64 {
	var next, n atomic.Int64
	var wg sync.WaitGroup
	for range fillWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(order) {
					return
				}
				g := order[i]
				c.mu.Lock()
				s := int32(-1)
				if c.experts[g].slot < 0 {
					if s = c.take(g, false); s < 0 {
						c.mu.Unlock()
						return // full
					}
				}
				c.mu.Unlock()
				if s < 0 {
					continue // fetched already
				}
				ok := c.read(g, s)
				c.mu.Lock()
				c.done(g, s, ok)
				c.cond.Broadcast()
				c.mu.Unlock()
				if ok {
					x := &c.experts[g]
					n.Add(int64(len(x.orig[0]) + len(x.orig[1]) + len(x.orig[2])))
				}
			}
		}()
	}
	wg.Wait()
	return n.Load()
}

// fillWorkers is the experts the preload reads at once.
const fillWorkers = 8

// fillOrder is the order the preload fills the cache in: expert 0 of
// every MoE layer, then expert 1, … (an equal share of each layer).
func (c *expertCache) fillOrder(m *Model) []int {
	var out []int
	most := 0
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			most = max(most, len(b.Experts))
		}
	}
	for e := 0; e < most; e++ {
		for l := range m.Layers {
			if b := m.Layers[l].MoE; b != nil && e < len(b.Experts) {
				out = append(out, c.base[l]+e)
			}
		}
	}
	return out
}

// cacheHooks installs (on) or removes the cache's Prefetch hooks; removing
// them points every expert back into the mapping.
func (m *Model) cacheHooks(on bool) {
	c := m.cache
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			b.Prefetch = nil
			if on {
				b.Prefetch = c.hook(l)
			}
		}
	}
	if !on {
		c.mu.Lock()
		for g := range c.experts {
			x := &c.experts[g]
			for i, q := range x.mats {
				q.Data = x.orig[i]
			}
		}
		c.mu.Unlock()
	}
}
