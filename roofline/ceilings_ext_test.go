package roofline_test

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/roofline"
	"github.com/ktune/ktune/roofline/rooflinetest"
)

func TestPlateausAndHelpers(t *testing.T) {
	c := rooflinetest.Ceilings()
	for _, tc := range []struct {
		level   string
		threads int
		want    float64
	}{
		{"L1", 1, 200}, {"l2", 1, 100}, {"L3", 1, 50}, {"DRAM", 1, 10},
		{"DRAM", 2, 20}, {"triad/L2", 2, 200}, {"DRAM", 8, 20}, {"L9", 1, 0},
	} {
		if got := c.Bandwidth(tc.level, tc.threads); got != tc.want {
			t.Errorf("Bandwidth(%s, %d) = %g, want %g", tc.level, tc.threads, got, tc.want)
		}
	}
	for _, tc := range []struct {
		what    string
		threads int
		want    float64
	}{
		{"f32", 1, 100}, {"", 2, 200}, {"x_narrow_f32", 2, 100}, {"int8act", 1, 400}, {"int8", 4, 1600},
		{"bf16", 1, 0}, {"f32", 3, 300},
	} {
		if got := c.PeakFLOPs(tc.what, tc.threads); got != tc.want {
			t.Errorf("PeakFLOPs(%q, %d) = %g, want %g", tc.what, tc.threads, got, tc.want)
		}
	}
	// Roof: the slope below the ridge (100/10 = 10 FLOP/B), the peak above.
	for _, tc := range []struct{ ai, want float64 }{{0.5, 5}, {10, 100}, {1000, 100}} {
		if got := c.Roof(tc.ai, 1, "f32"); got != tc.want {
			t.Errorf("Roof(%g) = %g, want %g", tc.ai, got, tc.want)
		}
	}
	// Each plateau lies in its window and names the capacity.
	for _, s := range c.Sweeps {
		if len(s.Plateaus) != 4 {
			t.Fatalf("%s/%d: %d plateaus", s.Kind, s.Threads, len(s.Plateaus))
		}
		if s.Plateaus[1].CacheBytes != int64(s.Threads)<<20 {
			t.Errorf("L2 capacity at %d threads: %d", s.Threads, s.Plateaus[1].CacheBytes)
		}
		for _, p := range s.Plateaus {
			if p.Points < 1 || p.Note != "" {
				t.Errorf("%s/%d %s: %d points (%s)", s.Kind, s.Threads, p.Level, p.Points, p.Note)
			}
		}
	}
	// Unknown caches: no L1-L3 plateau, DRAM still found from 256 MiB.
	ps := roofline.Plateaus(c.Sweeps[0].Points, cpu.Cache{L1D: -1, L2: -1, L3: -1}, 1)
	if len(ps) != 1 || ps[0].Level != "DRAM" || ps[0].GBs != 10 {
		t.Errorf("unknown caches: %+v", ps)
	}
	// An empty window takes the nearest point and says so.
	ps = roofline.Plateaus([]roofline.BWPoint{{Bytes: 4 << 10, GBs: 7}}, cpu.Cache{L1D: 32 << 10, L2: 1 << 20, L3: 16 << 20}, 1)
	if ps[len(ps)-1].GBs != 7 || ps[len(ps)-1].Note == "" {
		t.Errorf("empty DRAM window: %+v", ps[len(ps)-1])
	}
}

func TestPointAI(t *testing.T) {
	p := roofline.Point{FLOPs: 2e9, Bytes: 5e8, Seconds: 0.5}
	if p.AI() != 4 || p.GFLOPS() != 4 || p.GBs() != 1 {
		t.Errorf("AI %g GFLOP/s %g GB/s %g", p.AI(), p.GFLOPS(), p.GBs())
	}
	if (roofline.Point{FLOPs: 1}).AI() != 0 || (roofline.Point{FLOPs: 1}).GFLOPS() != 0 {
		t.Error("zero bytes or time must give 0")
	}
}

func TestWorkingSets(t *testing.T) {
	for _, quick := range []bool{true, false} {
		ws := roofline.WorkingSets(4<<10, 1<<30, quick)
		if ws[0] != 4<<10 || ws[len(ws)-1] != 1<<30 {
			t.Errorf("quick=%v: range %d..%d", quick, ws[0], ws[len(ws)-1])
		}
		for i := 1; i < len(ws); i++ {
			if ws[i] <= ws[i-1] || ws[i]%4096 != 0 {
				t.Errorf("quick=%v: sizes %d, %d", quick, ws[i-1], ws[i])
			}
		}
	}
	// 18 octaves: quick has 2 per octave (37), thorough up to 4 (73; the
	// smallest steps merge when rounded to 4 KiB).
	if q, th := len(roofline.WorkingSets(4<<10, 1<<30, true)), len(roofline.WorkingSets(4<<10, 1<<30, false)); q < 30 || q > 37 || th <= q+20 || th > 73 {
		t.Errorf("sweep sizes: quick %d, thorough %d", q, th)
	}
	if got := roofline.DefaultThreads(6); !reflect.DeepEqual(got, []int{1, 2, 4, 6}) {
		t.Errorf("DefaultThreads(6) = %v", got)
	}
	info := &cpu.Info{Cache: cpu.Cache{L3: 480 << 20}, MemBytes: 24 << 30}
	if got := roofline.DefaultMaxWorkingSet(info); got != 1<<30 {
		t.Errorf("max working set with a 480 MiB L3: %d", got)
	}
	info.Cache.L3, info.MemBytes = 1<<30, 4<<30
	if got := roofline.DefaultMaxWorkingSet(info); got != 1<<30 {
		t.Errorf("max working set capped by memory: %d", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	c := rooflinetest.Ceilings()
	c.Measured = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "ceilings.json")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := roofline.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip differs:\n%+v\n%+v", got, c)
	}
	bad := *c
	bad.Schema = 99
	b, _ := bad.JSON()
	if _, err := roofline.ParseCeilings(b); err == nil {
		t.Error("wrong schema accepted")
	}
	bad = *c
	bad.Compute = []roofline.ComputeCeiling{{Name: "x", Threads: 1, GFLOPS: math.NaN()}}
	if err := bad.Validate(); err == nil {
		t.Error("NaN ceiling accepted")
	}
	for _, ghz := range []float64{-1, math.NaN(), math.Inf(1), 1e6} {
		bad = *c
		bad.ClockGHz = ghz
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "clock_ghz") {
			t.Errorf("clock_ghz %v: %v, want refused", ghz, err)
		}
	}
	bad = *c
	bad.ClockGHz, bad.NominalGHz = 0, 0 // unknown: allowed
	if err := bad.Validate(); err != nil {
		t.Errorf("clock unknown (0): %v", err)
	}
}
