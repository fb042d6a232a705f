package moe

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// TestPrefetchHook: Forward calls BlockWeights.Prefetch once, before any
// expert runs, with exactly the active experts in ascending order, and the
// hook does not change the output (bit for bit).
func TestPrefetchHook(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 4))
	b, err := RandomBlock(r, kernel.Q8, 16, 3, 48, 32)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 7, 65} {
		x := make([]float32, n*48)
		kerneltest.FillNormal(r, x, 0, 1)
		for _, ep := range []int{-1, 1, 64} {
			opt := BlockOptions{Threads: 2, ExpertParallel: ep}
			b.Prefetch = nil
			want := make([]float32, len(x))
			b.Forward(want, x, n, opt)

			var calls [][]int
			b.Prefetch = func(experts []int) { calls = append(calls, slices.Clone(experts)) }
			y := make([]float32, len(x))
			rt := b.Forward(y, x, n, opt)
			b.Prefetch = nil
			if len(calls) != 1 {
				t.Fatalf("n=%d ep=%d: %d Prefetch calls, want 1", n, ep, len(calls))
			}
			if got, act := calls[0], rt.Active(); !slices.Equal(got, act) || !slices.IsSorted(got) {
				t.Errorf("n=%d ep=%d: Prefetch(%v), active experts %v", n, ep, got, act)
			}
			if !slices.Equal(y, want) {
				t.Errorf("n=%d ep=%d: output differs with the hook set", n, ep)
			}
		}
	}
}

// TestPrefetchBeforeExperts: the hook runs before any expert's weights are
// read (an expert whose matrix the hook swaps in is the one computed).
func TestPrefetchBeforeExperts(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5))
	b, err := RandomBlock(r, kernel.F32, 8, 2, 48, 32)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 48)
	kerneltest.FillNormal(r, x, 0, 1)
	want := make([]float32, 48)
	b.Forward(want, x, 1, BlockOptions{Threads: 1})
	// zero every expert's down matrix until the hook restores them: a
	// hook called after any expert ran would leave a zero contribution
	saved := make([][]byte, len(b.Experts))
	for e := range b.Experts {
		d := b.Experts[e].Down
		saved[e] = slices.Clone(d.Data)
		clear(d.Data)
	}
	b.Prefetch = func(experts []int) {
		for e := range b.Experts {
			copy(b.Experts[e].Down.Data, saved[e])
		}
	}
	y := make([]float32, 48)
	b.Forward(y, x, 1, BlockOptions{Threads: 1})
	if !slices.Equal(y, want) {
		t.Errorf("an expert ran before the Prefetch hook")
	}
}
