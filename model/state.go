package model

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/kernels/kda"
	"github.com/ktune/ktune/kernels/mla"
)

// State is one sequence's memory of its past tokens: per KDA layer the
// recurrent state and the short-conv windows, per MLA layer the latent
// cache. Prefill and Decode extend it; a State belongs to the Model that
// made it.
type State struct {
	model *Model
	max   int               // token limit, 0: none
	n     int               // tokens consumed
	kda   []*kda.LayerCache // by layer index (nil for MLA layers): B = 1
	mla   []*mla.Cache      // by layer index (nil for KDA layers)
	spill *spillAlloc       // the MLA pages' file (LoadOptions.CacheSpillDir), nil: heap
}

// NewState returns an empty state for a sequence of at most maxTokens
// tokens (0: no limit but memory). The MLA cache grows by pages as tokens
// arrive; the KDA state is allocated now. With LoadOptions.CacheSpillDir
// the pages are file-backed: the state's spill file is made with its
// first page, and Prefill or Decode return the error if it cannot be.
// Close releases a state's memory and file at once; a state dropped
// without Close releases them when it is garbage collected.
func (m *Model) NewState(maxTokens int) *State {
	if st := m.free.take(); st != nil {
		st.max = max(maxTokens, 0)
		return st
	}
	st := &State{model: m, max: max(maxTokens, 0),
		kda: make([]*kda.LayerCache, len(m.Layers)), mla: make([]*mla.Cache, len(m.Layers))}
	var alloc mla.PageAllocator // nil: the heap
	if m.opt.CacheSpillDir != "" {
		st.spill = &spillAlloc{dir: m.opt.CacheSpillDir}
		alloc = st.spill
		runtime.AddCleanup(st, func(a *spillAlloc) { a.Close() }, st.spill)
	}
	for l, ly := range m.Layers {
		switch ly.Kind {
		case arch.KDA:
			st.kda[l] = ly.KDA.NewLayerCache(1)
		case arch.MLA:
			// the dtype was checked by LoadOptions.defaults, the widths by validate
			st.mla[l], _ = mla.NewCacheWith(ly.MLA.R, ly.MLA.DR, m.opt.CacheDType, alloc)
		}
	}
	return st
}

// reserve makes room for T more tokens in every MLA cache, so that the
// forward pass cannot fail for want of a cache page.
func (st *State) reserve(T int) error {
	for l, c := range st.mla {
		if c != nil {
			if err := c.Reserve(st.n + T); err != nil {
				return fmt.Errorf("model: MLA cache of layer %d: %w", l, err)
			}
		}
	}
	return nil
}

// Close releases the state's MLA cache pages (and its spill file, if
// any). The state is empty afterwards and may be used again: new pages
// are allocated as tokens arrive (with a spill file, a new one).
func (st *State) Close() error {
	st.Reset()
	for _, c := range st.mla {
		if c != nil {
			c.Release()
		}
	}
	if st.spill == nil {
		return nil
	}
	return st.spill.Close()
}

// Free closes st and gives its memory to its model for a later NewState:
// the next sequence then writes its KDA state (2 MiB per layer at Kimi
// widths) into memory already mapped, not into fresh pages that fault on
// first touch (on a 2-core VM a 64-token prefill ran 3–10% faster). st
// must not be used afterwards. The model keeps at most maxFreeStates.
func (st *State) Free() error {
	err := st.Close()
	st.model.free.put(st)
	return err
}

// maxFreeStates bounds the states a model keeps for reuse.
const maxFreeStates = 4

// stateList is a model's freed states (State.Free), for NewState.
type stateList struct {
	mu   sync.Mutex
	list []*State
}

func (l *stateList) put(st *State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) < maxFreeStates && !slices.Contains(l.list, st) {
		l.list = append(l.list, st)
	}
}

func (l *stateList) take() *State {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.list)
	if n == 0 {
		return nil
	}
	st := l.list[n-1]
	l.list = l.list[:n-1]
	return st
}

// Len is the number of tokens the state has consumed.
func (st *State) Len() int { return st.n }

// Reset empties the state for a new sequence, keeping its memory.
func (st *State) Reset() {
	st.n = 0
	for _, c := range st.kda {
		if c != nil {
			clear(c.ConvQ)
			clear(c.ConvK)
			clear(c.ConvV)
			clear(c.State)
		}
	}
	for _, c := range st.mla {
		if c != nil {
			c.Reset()
		}
	}
}

// Bytes is the memory the state holds now (KDA state plus MLA cache
// pages), heap and file-backed together (see BytesByTier).
func (st *State) Bytes() int64 {
	var n int64
	for _, c := range st.kda {
		if c != nil {
			n += c.Bytes()
		}
	}
	for _, c := range st.mla {
		if c != nil {
			n += c.Bytes()
		}
	}
	return n
}

// BytesByTier splits Bytes: heap is process memory (the KDA state, and
// the MLA cache pages unless spilled), file is MLA cache pages mapped from
// the spill file (LoadOptions.CacheSpillDir), which the OS can write back
// and evict.
func (st *State) BytesByTier() (heap, file int64) {
	for _, c := range st.kda {
		if c != nil {
			heap += c.Bytes()
		}
	}
	for _, c := range st.mla {
		if c == nil {
			continue
		}
		if c.FileBacked() {
			file += c.Bytes()
		} else {
			heap += c.Bytes()
		}
	}
	return heap, file
}

// spillAlloc is a state's file allocator, made with the first page (so
// that a state which never holds a token makes no file) and again after
// Close.
type spillAlloc struct {
	mu  sync.Mutex
	dir string
	a   *mla.FileAllocator
}

func (s *spillAlloc) Alloc(bytes int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.a == nil {
		a, err := mla.NewFileAllocator(s.dir)
		if err != nil {
			return nil, err
		}
		s.a = a
	}
	return s.a.Alloc(bytes)
}

func (s *spillAlloc) FileBacked() bool { return true }

func (s *spillAlloc) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.a == nil {
		return nil
	}
	err := s.a.Close()
	s.a = nil
	return err
}
