// The prefix cache: snapshots of sequence states keyed by their tokens.

package serve

import (
	"container/list"
	"slices"
	"sync/atomic"

	"github.com/ktune/ktune/model"
)

// prefixCache keeps states at the end of token prefixes, LRU within a
// byte budget. Entries are immutable once in: a sequence starting from
// one gets a copy. Only the scheduler goroutine calls its methods; the
// counters are read by /metrics.
type prefixCache struct {
	budget  int64 // ≤ 0: off
	used    int64
	lru     *list.List // of *cacheEntry, most recently used first
	byHash  map[uint64][]*cacheEntry
	lengths map[int]int // entries by prefix length

	hits, misses, hitTokens, inserts, evictions atomic.Int64
	entries, bytes                              atomic.Int64
}

// cacheEntry is the state after ids (and, when known, the logits there).
type cacheEntry struct {
	ids    []int32
	hash   uint64
	st     *model.State
	logits []float32 // [V] at the last position, or nil
	size   int64
	elem   *list.Element
}

// cacheStats is a snapshot of the counters.
type cacheStats struct {
	Hits, Misses, HitTokens, Inserts, Evictions, Entries, Bytes, Budget int64
}

func newPrefixCache(budget int64) *prefixCache {
	return &prefixCache{budget: budget, lru: list.New(), byHash: map[uint64][]*cacheEntry{}, lengths: map[int]int{}}
}

func (c *prefixCache) stats() cacheStats {
	return cacheStats{c.hits.Load(), c.misses.Load(), c.hitTokens.Load(), c.inserts.Load(), c.evictions.Load(),
		c.entries.Load(), c.bytes.Load(), max(c.budget, 0)}
}

// FNV-1a over the ids' little-endian bytes, extended one id at a time so
// that every prefix's hash comes in one pass.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashNext(h uint64, id int32) uint64 {
	u := uint32(id)
	for range 4 {
		h = (h ^ uint64(u&0xff)) * fnvPrime
		u >>= 8
	}
	return h
}

func hashIDs(ids []int32) uint64 {
	h := uint64(fnvOffset)
	for _, id := range ids {
		h = hashNext(h, id)
	}
	return h
}

// lookup returns the entry of the longest cached prefix of prompt (the
// whole prompt only with its logits), or nil.
func (c *prefixCache) lookup(prompt []int32) *cacheEntry {
	if c.budget <= 0 {
		return nil
	}
	var best *cacheEntry
	h := uint64(fnvOffset)
	for n, id := range prompt {
		h = hashNext(h, id)
		L := n + 1
		if c.lengths[L] == 0 {
			continue
		}
		for _, e := range c.byHash[h] {
			if len(e.ids) == L && slices.Equal(e.ids, prompt[:L]) && (L < len(prompt) || e.logits != nil) {
				best = e
			}
		}
	}
	if best == nil {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	c.hitTokens.Add(int64(len(best.ids)))
	c.lru.MoveToFront(best.elem)
	return best
}

// find returns the entry of exactly ids, or nil.
func (c *prefixCache) find(ids []int32, h uint64) *cacheEntry {
	for _, e := range c.byHash[h] {
		if slices.Equal(e.ids, ids) {
			return e
		}
	}
	return nil
}

// insertCopy caches a copy of st, the state after ids, and of logits (nil:
// none; the caller keeps and may overwrite its slice).
func (c *prefixCache) insertCopy(ids []int32, st *model.State, logits []float32) {
	if c.budget <= 0 {
		return
	}
	h := hashIDs(ids)
	if e := c.find(ids, h); e != nil {
		c.lru.MoveToFront(e.elem)
		if e.logits == nil && logits != nil {
			e.logits = slices.Clone(logits)
			c.resize(e, e.size+4*int64(len(logits)))
		}
		return
	}
	if entrySize(ids, st, logits) > c.budget {
		return
	}
	cp, err := st.Clone()
	if err != nil {
		return
	}
	c.add(ids, h, cp, slices.Clone(logits))
}

// insertOwned caches st itself (the cache takes it: it is closed if not
// kept).
func (c *prefixCache) insertOwned(ids []int32, st *model.State, logits []float32) {
	h := hashIDs(ids)
	if c.budget <= 0 || c.find(ids, h) != nil || entrySize(ids, st, logits) > c.budget {
		st.Free()
		return
	}
	c.add(ids, h, st, logits)
}

func entrySize(ids []int32, st *model.State, logits []float32) int64 {
	return st.Bytes() + 4*int64(len(logits)+len(ids))
}

func (c *prefixCache) add(ids []int32, h uint64, st *model.State, logits []float32) {
	e := &cacheEntry{ids: slices.Clone(ids), hash: h, st: st, logits: logits, size: entrySize(ids, st, logits)}
	e.elem = c.lru.PushFront(e)
	c.byHash[h] = append(c.byHash[h], e)
	c.lengths[len(ids)]++
	c.used += e.size
	c.inserts.Add(1)
	c.evict()
	c.publish()
}

// resize changes an entry's size and evicts to fit.
func (c *prefixCache) resize(e *cacheEntry, size int64) {
	c.used += size - e.size
	e.size = size
	c.evict()
	c.publish()
}

// evict drops least recently used entries until the budget holds.
func (c *prefixCache) evict() {
	for c.used > c.budget && c.lru.Len() > 0 {
		c.remove(c.lru.Back().Value.(*cacheEntry))
		c.evictions.Add(1)
	}
}

func (c *prefixCache) remove(e *cacheEntry) {
	c.lru.Remove(e.elem)
	c.byHash[e.hash] = slices.DeleteFunc(c.byHash[e.hash], func(x *cacheEntry) bool { return x == e })
	if len(c.byHash[e.hash]) == 0 {
		delete(c.byHash, e.hash)
	}
	if c.lengths[len(e.ids)]--; c.lengths[len(e.ids)] == 0 {
		delete(c.lengths, len(e.ids))
	}
	c.used -= e.size
	e.st.Free()
}

// clear drops every entry.
func (c *prefixCache) clear() {
	for c.lru.Len() > 0 {
		c.remove(c.lru.Back().Value.(*cacheEntry))
	}
	c.publish()
}

func (c *prefixCache) publish() {
	c.entries.Store(int64(c.lru.Len()))
	c.bytes.Store(c.used)
}
