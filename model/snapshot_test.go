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
			m := mustLoad(t, c.f.Dir(), LoadOptions{Runtime: Runtime{Threads: 2}, Memory: Memory{CacheDType: cd}})
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
			m2 := mustLoad(t, c.f.Dir(), LoadOptions{Memory: Memory{CacheDType: cd}})
			if err := m2.NewState(0).CopyFrom(st); err == nil {
				t.Error("a copy from another model's state was accepted")
			}
		})
	}
}

// TestStateFree checks that a freed state comes back from NewState empty,
// with its new token limit, and gives the same logits as a fresh state;
// that a state freed twice is kept once; and that the model keeps at most
// maxFreeStates.
func TestStateFree(t *testing.T) {
	c := loadTiny(t)[0]
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32((i*29 + 5) % c.V)
	}
	m := mustLoad(t, c.f.Dir(), LoadOptions{Runtime: Runtime{Threads: 2}})
	want, err := m.Prefill(m.NewState(0), prompt)
	if err != nil {
		t.Fatal(err)
	}
	used := m.NewState(0)
	if _, err := m.Prefill(used, append(slices.Clone(prompt), 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	used.Free()
	used.Free()
	st := m.NewState(len(prompt))
	if st != used {
		t.Fatal("NewState did not reuse the freed state")
	}
	if other := m.NewState(0); other == used {
		t.Fatal("a state freed twice was handed out twice")
	}
	if st.Len() != 0 || st.max != len(prompt) {
		t.Fatalf("reused state: Len %d, max %d; want 0, %d", st.Len(), st.max, len(prompt))
	}
	got, err := m.Prefill(st, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatal("a reused state's logits differ from a fresh state's")
	}
	if _, err := m.Prefill(st, []int32{1}); err == nil {
		t.Error("the reused state accepted a token past its new limit")
	}
	var many []*State
	for range maxFreeStates + 3 {
		many = append(many, m.NewState(0))
	}
	for _, s := range many {
		s.Free()
	}
	if n := len(m.free.list); n != maxFreeStates {
		t.Errorf("the model keeps %d freed states, want %d", n, maxFreeStates)
	}
}
