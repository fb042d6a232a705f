package model

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/pool"
)

// TestDecodeAllocs: once warm, a decode step into reused logits buffers
// (DecodeTo) allocates nothing — no closures, job objects, routing or
// kernel-choice garbage per step — in every weight format, at 1, 2 and
// more threads than the pool has, for one sequence and a batch of two
// (the first run warms the pools, see below).
// The same count over Decode, which returns fresh logits, must see them:
// the counter is shown to catch an allocation in the loop.
func TestDecodeAllocs(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates on its own")
	}
	c := loadTiny(t)[0]
	for _, f := range threadFormats {
		m := mustLoad(t, c.f.Dir(), f.opt)
		for _, th := range []int{1, 2, pool.Default().Size() + 1} {
			for _, B := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/threads=%d/batch=%d", f.name, th, B), func(t *testing.T) { checkDecodeAllocs(t, m, th, B) })
			}
		}
	}
	// a GGUF file run in place (its own kernels and their prepared
	// activations): one quantized golden file, at its K-quant mix
	_, _, quantized := ggufFiles(t)
	for _, p := range quantized {
		if !strings.Contains(filepath.Base(p), "Q4_K_M") {
			continue
		}
		m := mustLoadGGUF(t, p, LoadOptions{})
		for _, th := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", filepath.Base(p), th), func(t *testing.T) { checkDecodeAllocs(t, m, th, 1) })
		}
	}
}

// checkDecodeAllocs runs decode steps of batch B at th threads on m until
// a run of them allocates nothing (or fails), and checks that the count
// sees the allocations Decode's fresh logits make.
func checkDecodeAllocs(t *testing.T, m *Model, th, B int) {
	const steps = 40
	setThreads(t, m, th, false)
	sts := make([]*State, B)
	out := make([][]float32, B)
	ids := make([]int32, B)
	for b := range sts {
		sts[b] = m.NewState(0)
		out[b] = make([]float32, m.Shapes.Vocab)
	}
	defer func() {
		for _, st := range sts {
			st.Free()
		}
	}()
	run := func(decode func() error) uint64 {
		for b, st := range sts {
			st.Reset()
			if _, err := m.Prefill(st, []int32{1, 2, int32(3 + b)}); err != nil {
				t.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < steps; i++ {
			for b := range ids {
				ids[b] = int32((i*7 + b) % m.Shapes.Vocab)
			}
			if err := decode(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	// warm until a run allocates nothing: the pools' items
	// (gemm workspaces, scratch) grow to the sizes they
	// meet, and which item meets which size depends on the
	// workers' timing; a per-step allocation never settles
	into := func() error { return m.DecodeTo(out, sts, ids) }
	const runs = 12
	var got []uint64
	for len(got) < runs {
		got = append(got, run(into))
		if got[len(got)-1] == 0 && len(got) > 1 {
			break
		}
	}
	if n := got[len(got)-1]; n != 0 {
		t.Errorf("%d runs of %d decode steps allocated %v times; want none once warm", runs, steps, got)
	}
	fresh := func() error { _, err := m.Decode(sts, ids); return err }
	if n := run(fresh); n < steps {
		t.Errorf("%d Decode steps (fresh logits each) counted %d allocations; the count misses them", steps, n)
	}
}
