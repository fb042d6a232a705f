package model

import (
	"testing"
	"unsafe"

	"github.com/ktune/ktune/internal/kernel"
)

// TestPreloadViews: the preload walks every non-expert matrix before any
// expert, then the experts in rounds (expert e of every MoE layer, layers
// ascending, before expert e+1), each distinct matrix once; a budget cuts
// the walk at exactly that many bytes, and none gives nothing.
func TestPreloadViews(t *testing.T) {
	c := loadTiny(t)[0]
	m := mustLoad(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	type where struct{ layer, expert int } // expert -1: not an expert
	owner := map[*byte]where{}
	var total, shared int64
	for _, pq := range m.matrices() {
		if q := *pq; q != nil && len(q.Data) > 0 {
			if _, ok := owner[unsafe.SliceData(q.Data)]; !ok {
				owner[unsafe.SliceData(q.Data)] = where{-1, -1}
				shared += int64(len(q.Data))
			}
		}
	}
	moeLayers := 0
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			moeLayers++
			for e := range b.Experts {
				x := &b.Experts[e]
				for _, q := range [][]byte{x.Gate.Data, x.Up.Data, x.Down.Data} {
					if w, ok := owner[unsafe.SliceData(q)]; ok && w.expert < 0 {
						shared -= int64(len(q))
					}
					owner[unsafe.SliceData(q)] = where{l, e}
				}
			}
		}
	}
	if moeLayers == 0 {
		t.Skip("the tiny model has no MoE layer")
	}
	for _, pq := range m.matrices() {
		if q := *pq; q != nil {
			total += int64(len(q.Data))
		}
	}
	sum := func(v [][]byte) (n int64) {
		for _, b := range v {
			n += int64(len(b))
		}
		return n
	}
	all := m.preloadViews(1 << 62)
	seen := map[*byte]bool{}
	last := where{-1, -1}
	for i, v := range all {
		w, ok := owner[unsafe.SliceData(v)]
		if !ok {
			t.Fatalf("view %d is no matrix's bytes", i)
		}
		if seen[unsafe.SliceData(v)] {
			t.Fatalf("view %d walked twice", i)
		}
		seen[unsafe.SliceData(v)] = true
		switch {
		case w.expert < 0 && last.expert >= 0:
			t.Fatalf("view %d: a non-expert matrix after expert %d of layer %d", i, last.expert, last.layer)
		case w.expert >= 0 && last.expert >= 0 && (w.expert < last.expert || w.expert == last.expert && w.layer < last.layer):
			t.Fatalf("view %d: expert %d of layer %d after expert %d of layer %d: not in rounds", i, w.expert, w.layer, last.expert, last.layer)
		}
		last = w
	}
	if len(seen) != len(owner) {
		t.Errorf("%d of %d matrices walked", len(seen), len(owner))
	}
	if got := sum(all); got > total || got <= 0 {
		t.Errorf("walked %d bytes of %d", got, total)
	}
	if got := m.preloadViews(0); len(got) != 0 {
		t.Errorf("budget 0: %d views", len(got))
	}
	firstExpert := 0
	for firstExpert < len(all) && owner[unsafe.SliceData(all[firstExpert])].expert < 0 {
		firstExpert++
	}
	cut := sum(all[:firstExpert]) + int64(len(all[firstExpert]))/2 + 1 // half of the first expert matrix
	part := m.preloadViews(cut)
	if got := sum(part); got != cut {
		t.Errorf("budget %d: walked %d bytes", cut, got)
	}
	if len(part) != firstExpert+1 || len(part[firstExpert]) >= len(all[firstExpert]) {
		t.Errorf("budget %d: %d views, want the %d non-expert ones and a cut first expert", cut, len(part), firstExpert)
	}
}

// TestPreloadMapped: a mapped model file preloads within the budget the
// available memory leaves (none where it leaves nothing, none with
// KTUNE_PRELOAD=0, none for copied weights), reports it, and Close stops
// a running preload without hanging.
func TestPreloadMapped(t *testing.T) {
	c := loadTiny(t)[0]
	path := convertTiny(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	load := func(opt LoadOptions) *Model {
		t.Helper()
		m, err := LoadFile(path, opt)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := load(LoadOptions{Memory: Memory{AvailableMemory: 1 << 40}, Files: Files{Weights: WeightsMap}})
	p := m.WaitPreload()
	want := int64(0)
	if PrefetchSupported {
		for _, v := range m.preloadViews(m.preloadBudget()) {
			want += int64(len(v))
		}
	}
	if p.Planned != want || p.Walked != p.Planned {
		t.Errorf("preload planned %d walked %d, want %d both", p.Planned, p.Walked, want)
	}
	if PrefetchSupported && want <= 0 {
		t.Errorf("nothing to preload in a mapped model file")
	}
	if budget := m.preloadBudget(); budget != (1<<40)/10*9-m.mem.Budgeted {
		t.Errorf("budget %d, want 9/10 of the available memory less the budgeted %d", budget, m.mem.Budgeted)
	}
	m.Close()

	m = load(LoadOptions{Memory: Memory{AvailableMemory: 1 << 40}, Files: Files{Weights: WeightsMap}})
	m.Close() // stops it, running or not; a second Close finds none
	m.Close()

	tight := load(LoadOptions{Files: Files{Weights: WeightsMap}})
	budgeted := tight.mem.Budgeted
	tight.Close()
	for name, opt := range map[string]LoadOptions{
		"no memory left": {Memory: Memory{AvailableMemory: budgeted * 10 / 9}, Files: Files{Weights: WeightsMap}},
		"copied":         {Memory: Memory{AvailableMemory: 1 << 40}, Files: Files{Weights: WeightsCopy}},
	} {
		m := load(opt)
		if p := m.WaitPreload(); p.Planned != 0 {
			t.Errorf("%s: preloaded %d bytes", name, p.Planned)
		}
		m.Close()
	}
	t.Setenv(PreloadEnv, "0")
	m = load(LoadOptions{Memory: Memory{AvailableMemory: 1 << 40}, Files: Files{Weights: WeightsMap}})
	if p := m.WaitPreload(); p.Planned != 0 {
		t.Errorf("%s=0: preloaded %d bytes", PreloadEnv, p.Planned)
	}
	m.Close()
}

// TestPreloadBatches: views are grouped in order into batches of at most
// the size, a long view split across batches, no byte lost or repeated.
func TestPreloadBatches(t *testing.T) {
	buf := make([]byte, 64)
	views := [][]byte{buf[0:5], buf[5:45], buf[50:53], buf[60:64]}
	got := preloadBatches(views, 16)
	want := [][][]byte{{buf[0:5], buf[5:16]}, {buf[16:32]}, {buf[32:45], buf[50:53]}, {buf[60:64]}}
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("batch %d: %d views, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			g, w := got[i][j], want[i][j]
			if unsafe.SliceData(g) != unsafe.SliceData(w) || len(g) != len(w) {
				t.Errorf("batch %d view %d: %d bytes at offset %d, want %d at %d", i, j, len(g),
					uintptr(unsafe.Pointer(unsafe.SliceData(g)))-uintptr(unsafe.Pointer(&buf[0])), len(w),
					uintptr(unsafe.Pointer(unsafe.SliceData(w)))-uintptr(unsafe.Pointer(&buf[0])))
			}
		}
	}
}
