package reports

import (
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
)

// TestChoicesTable: one row per (op, dtype, shape, threads), the fastest
// class's entry, the class count, rate units by intensity, no roof
// without ceilings.
func TestChoicesTable(t *testing.T) {
	s := kernel.MakeShape([]string{"m", "n", "k"}, 1, 64, 64)
	mk := func(class kernel.Class, median float64) profile.Entry {
		return profile.Entry{Op: "gemm.gemv", DType: kernel.Q8, Class: class, ShapeClass: "decode-1", Shape: s, Threads: 2,
			Best: profile.Result{Variant: "v" + string(class), Threads: 2, Median: median, FLOPs: 8192, Bytes: 8192}}
	}
	p := &profile.Profile{Entries: []profile.Entry{mk(kernel.ClassF32, 2e-6), mk(kernel.ClassInt8Act, 1e-6)}}
	tab := ChoicesTable(p, nil)
	if len(tab) != 1 || len(tab[0]) != len(ChoicesHeader) {
		t.Fatalf("table %q", tab)
	}
	row := strings.Join(tab[0], " | ")
	for _, want := range []string{"vint8act", "int8act (of 2)", "8.19 GB/s", "| — |"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	// the untuned default: "same" when kept, else what it is (and where)
	e := &p.Entries[1]
	d := e.Best
	e.Default = &d
	if c := DefaultCell(e); c != "same" {
		t.Errorf("default kept: cell %q", c)
	}
	d.Variant, d.Placement, e.Best.Placement = "vdefault", "unpinned", "compact"
	if c := DefaultCell(e); c != "vdefault unpinned" {
		t.Errorf("default beaten: cell %q", c)
	}
}

// TestConfirmSummary counts each kind of confirmed choice once.
func TestConfirmSummary(t *testing.T) {
	p := &profile.Profile{}
	if s := ConfirmSummary(p); s != "" {
		t.Errorf("no confirm records: %q", s)
	}
	add := func(base, chosen string) {
		p.Entries = append(p.Entries, profile.Entry{Confirm: &profile.Confirm{Base: base, Rounds: 3, Chosen: chosen}})
	}
	add(profile.ConfirmDefault, profile.ConfirmDefault)
	add(profile.ConfirmDefault, profile.ConfirmDefault)
	add(profile.ConfirmDefault, profile.ConfirmSearch)
	add(profile.ConfirmSearch, profile.ConfirmFewerThreads)
	add(profile.ConfirmSearch, profile.ConfirmSearch) // the winner stood against a smaller budget's choice
	p.Entries = append(p.Entries, profile.Entry{})
	want := "confirmed in 3 alternating rounds against the default: 1 of 5 challenged choices beat it, 2 kept the default (not faster by the margin), 1 took a smaller thread budget's choice"
	if s := ConfirmSummary(p); s != want {
		t.Errorf("got  %q\nwant %q", s, want)
	}
}
