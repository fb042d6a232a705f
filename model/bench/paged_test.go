package bench

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestPagedBound: a row that read from storage gets the paged bound:
// resident bytes at the read ceiling plus the missing ones (read per
// token, at most the weights) at the disk ceiling, times tokens/s.
func TestPagedBound(t *testing.T) {
	o := &runner{o: Options{Path: "m.kt"}, disk: 1e9}
	for _, c := range []struct {
		read, weights int64
		want          float64
	}{
		{read: 100e6, weights: 400e6, want: (300e6/10e9 + 100e6/1e9) * 2}, // 0.03 s + 0.1 s, at 2 tokens/s
		{read: 900e6, weights: 400e6, want: 400e6 / 1e9 * 2},              // more read than the weights: all missing
		{read: 0, weights: 400e6, want: 0},                                // fits: no paged bound
	} {
		r := Row{Mean: 2}
		o.paged(&r, ioDelta{MajFlt: 10, ReadBytes: c.read * 4, Secs: 2, Tokens: 4}, c.weights, 10e9)
		if math.Abs(r.PagedBoundFrac-c.want) > 1e-9 || *r.PageInsTok != 2.5 || *r.DiskBytesTok != float64(c.read) {
			t.Errorf("read %d of %d: %+v, want paged bound %v", c.read, c.weights, r, c.want)
		}
		if got := *r.DiskGBs; math.Abs(got-float64(c.read*4)/2/1e9) > 1e-12 {
			t.Errorf("disk rate %v", got)
		}
	}
	// counters the OS does not give: nil, no bound
	r := Row{Mean: 2}
	o.paged(&r, ioDelta{MajFlt: -1, ReadBytes: -1, Secs: 1, Tokens: 1}, 1, 1)
	if r.PageInsTok != nil || r.DiskGBs != nil || r.PagedBoundFrac != 0 {
		t.Errorf("unknown counters: %+v", r)
	}
}

// TestDiskCeiling: the disk ceiling reads a file (Linux; O_DIRECT, which
// tmpfs refuses).
func TestDiskCeiling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 9<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := diskCeiling(path, 8<<20, 0)
	if runtime.GOOS != "linux" {
		if err == nil {
			t.Error("a disk ceiling outside Linux")
		}
		return
	}
	if err != nil {
		t.Skipf("O_DIRECT here: %v", err)
	}
	if !(v > 0) {
		t.Errorf("disk ceiling %v", v)
	}
	if _, err := diskCeiling(filepath.Join(t.TempDir(), "none"), 1<<20, 0); err == nil {
		t.Error("a missing file measured")
	}
}
