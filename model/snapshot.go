// State copies: snapshots of a sequence's memory for a prefix cache.

package model

import "fmt"

// CopyFrom makes st a copy of src, a state of the same model: the same
// tokens consumed, the same KDA recurrent state and short-conv windows,
// and the same MLA latent cache, copied page by page in its stored format
// (bit for bit, whatever the cache dtype). Decoding from st afterwards
// gives exactly what decoding from src would.
//
// KDA is recurrent, so a prefix of a sequence can be reused only as a copy
// of the whole state at the prefix's end; this is that copy. st keeps its
// own token limit and memory (MLA pages are reused and more allocated as
// needed, from st's spill file when the model has one). On an error st is
// left empty.
func (st *State) CopyFrom(src *State) error {
	if st.model != src.model {
		return fmt.Errorf("model: copy of a state of another model")
	}
	if st.max > 0 && src.n > st.max {
		return fmt.Errorf("model: copy of a state holding %d tokens into one of at most %d", src.n, st.max)
	}
	if st == src {
		return nil
	}
	st.Reset()
	for l, c := range src.kda {
		if c != nil {
			d := st.kda[l]
			copy(d.ConvQ, c.ConvQ)
			copy(d.ConvK, c.ConvK)
			copy(d.ConvV, c.ConvV)
			copy(d.State, c.State)
		}
	}
	for l, c := range src.mla {
		if c != nil {
			if err := st.mla[l].CopyFrom(c); err != nil {
				st.Reset()
				return fmt.Errorf("model: MLA cache of layer %d: %w", l, err)
			}
		}
	}
	st.n = src.n
	return nil
}

// Clone returns a new state (with st's token limit) holding a copy of st;
// see CopyFrom.
func (st *State) Clone() (*State, error) {
	c := st.model.NewState(st.max)
	if err := c.CopyFrom(st); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
