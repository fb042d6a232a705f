package model

import (
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// TestStateCopy checks that a clone of a state, and a state copied over
// one that held another sequence, decode exactly as the original does, for
// every MLA cache format, with a prefix that spans more than one cache
// page.
func TestStateCopy(t *testing.T) {
	c := loadTiny(t)[0]
	n := 300 // more than mla.DefaultPageTokens
	if testing.Short() {
		n = 40
	}
	prompt := make([]int32, n)
	for i := range prompt {
		prompt[i] = int32((i*37 + 11) % c.V)
	}
	for _, cd := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8} {
		t.Run(string(cd), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{CacheDType: cd, Threads: 2})
			st := m.NewState(0)
			if _, err := m.Prefill(st, prompt); err != nil {
				t.Fatal(err)
			}
			clone, err := st.Clone()
			if err != nil {
				t.Fatal(err)
			}
			other := m.NewState(0) // holds another, longer sequence first
			if _, err := m.Prefill(other, append(slices.Clone(prompt), prompt...)); err != nil {
				t.Fatal(err)
			}
			if err := other.CopyFrom(st); err != nil {
				t.Fatal(err)
			}
			if clone.Len() != n || other.Len() != n {
				t.Fatalf("lengths %d, %d; want %d", clone.Len(), other.Len(), n)
			}
			for step, id := range c.gen[0] {
				var out [][]float32 // each alone: one batch shape, so bit-identical logits
				for _, s := range []*State{st, clone, other} {
					lg, err := m.Decode([]*State{s}, []int32{id})
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, lg[0])
				}
				if !slices.Equal(out[0], out[1]) || !slices.Equal(out[0], out[2]) {
					t.Fatalf("step %d: the copies' logits differ from the original's", step)
				}
			}
			if err := m.NewState(5).CopyFrom(st); err == nil {
				t.Error("a copy into a state too short for it was accepted")
			}
			m2 := mustLoad(t, c.f.Dir(), LoadOptions{CacheDType: cd})
			if err := m2.NewState(0).CopyFrom(st); err == nil {
				t.Error("a copy from another model's state was accepted")
			}
		})
	}
}
