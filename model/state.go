package model

import (
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
}

// NewState returns an empty state for a sequence of at most maxTokens
// tokens (0: no limit but memory). The MLA cache grows by pages as tokens
// arrive; the KDA state is allocated now.
func (m *Model) NewState(maxTokens int) *State {
	st := &State{model: m, max: max(maxTokens, 0),
		kda: make([]*kda.LayerCache, len(m.Layers)), mla: make([]*mla.Cache, len(m.Layers))}
	for l, ly := range m.Layers {
		switch ly.Kind {
		case arch.KDA:
			st.kda[l] = ly.KDA.NewLayerCache(1)
		case arch.MLA:
			// the dtype was checked by LoadOptions.defaults, the widths by validate
			st.mla[l], _ = mla.NewCache(ly.MLA.R, ly.MLA.DR, m.opt.CacheDType)
		}
	}
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

// Bytes is the memory the state holds now (KDA state plus MLA cache pages).
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
