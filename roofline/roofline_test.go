package roofline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/pool"
)

// synthetic returns ceilings with known figures: f32 100 GFLOP/s per
// thread, int8 400 GOP/s per thread; read L1 200, L2 100, L3 50, DRAM 10
// GB/s per thread (caches 32 KiB, 1 MiB per core, 16 MiB shared).
func synthetic() *Ceilings {
	c := &Ceilings{Schema: Schema, Fingerprint: "test", CPU: "test cpu", Arch: "amd64", ClockGHz: 3,
		Cache: cpu.Cache{L1D: 32 << 10, L2: 1 << 20, L3: 16 << 20}, Threads: []int{1, 2}}
	for _, t := range c.Threads {
		ft := float64(t)
		c.Compute = append(c.Compute,
			ComputeCeiling{Name: "x_fma_f32", DType: "f32", ISA: "x", Threads: t, GFLOPS: 100 * ft},
			ComputeCeiling{Name: "x_narrow_f32", DType: "f32", ISA: "x", Threads: t, GFLOPS: 50 * ft},
			ComputeCeiling{Name: "x_dot_int8", DType: "int8", ISA: "x", Threads: t, GFLOPS: 400 * ft})
		for _, kind := range Kinds {
			s := BandwidthSweep{Kind: kind, Threads: t}
			for _, ws := range WorkingSets(4<<10, 1<<30, true) {
				bw := 10.0
				switch {
				case ws <= 32<<10*int64(t):
					bw = 200
				case ws <= 1<<20*int64(t):
					bw = 100
				case ws <= 16<<20:
					bw = 50
				}
				s.Points = append(s.Points, BWPoint{Bytes: ws, GBs: bw * ft})
			}
			s.Plateaus = Plateaus(s.Points, c.Cache, t)
			c.Sweeps = append(c.Sweeps, s)
		}
	}
	return c
}

func TestPlateausAndHelpers(t *testing.T) {
	c := synthetic()
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
	ps := Plateaus(c.Sweeps[0].Points, cpu.Cache{L1D: -1, L2: -1, L3: -1}, 1)
	if len(ps) != 1 || ps[0].Level != "DRAM" || ps[0].GBs != 10 {
		t.Errorf("unknown caches: %+v", ps)
	}
	// An empty window takes the nearest point and says so.
	ps = Plateaus([]BWPoint{{Bytes: 4 << 10, GBs: 7}}, cpu.Cache{L1D: 32 << 10, L2: 1 << 20, L3: 16 << 20}, 1)
	if ps[len(ps)-1].GBs != 7 || ps[len(ps)-1].Note == "" {
		t.Errorf("empty DRAM window: %+v", ps[len(ps)-1])
	}
}

func TestPointAI(t *testing.T) {
	p := Point{FLOPs: 2e9, Bytes: 5e8, Seconds: 0.5}
	if p.AI() != 4 || p.GFLOPS() != 4 || p.GBs() != 1 {
		t.Errorf("AI %g GFLOP/s %g GB/s %g", p.AI(), p.GFLOPS(), p.GBs())
	}
	if (Point{FLOPs: 1}).AI() != 0 || (Point{FLOPs: 1}).GFLOPS() != 0 {
		t.Error("zero bytes or time must give 0")
	}
}

func TestWorkingSets(t *testing.T) {
	for _, quick := range []bool{true, false} {
		ws := WorkingSets(4<<10, 1<<30, quick)
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
	if q, th := len(WorkingSets(4<<10, 1<<30, true)), len(WorkingSets(4<<10, 1<<30, false)); q < 30 || q > 37 || th <= q+20 || th > 73 {
		t.Errorf("sweep sizes: quick %d, thorough %d", q, th)
	}
	if got := DefaultThreads(6); !reflect.DeepEqual(got, []int{1, 2, 4, 6}) {
		t.Errorf("DefaultThreads(6) = %v", got)
	}
	info := &cpu.Info{Cache: cpu.Cache{L3: 480 << 20}, MemBytes: 24 << 30}
	if got := DefaultMaxWorkingSet(info); got != 1<<30 {
		t.Errorf("max working set with a 480 MiB L3: %d", got)
	}
	info.Cache.L3, info.MemBytes = 1<<30, 4<<30
	if got := DefaultMaxWorkingSet(info); got != 1<<30 {
		t.Errorf("max working set capped by memory: %d", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	c := synthetic()
	c.Measured = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "ceilings.json")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip differs:\n%+v\n%+v", got, c)
	}
	bad := *c
	bad.Schema = 99
	b, _ := bad.JSON()
	if _, err := ParseCeilings(b); err == nil {
		t.Error("wrong schema accepted")
	}
	bad = *c
	bad.Compute = []ComputeCeiling{{Name: "x", Threads: 1, GFLOPS: math.NaN()}}
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

func TestPlots(t *testing.T) {
	c := synthetic()
	pts := []Point{
		{Label: "decode", Variant: "v", Threads: 2, FLOPs: 1e6, Bytes: 1e6, Seconds: 1e-4},
		{Label: "prefill", Variant: "v", Threads: 2, FLOPs: 1e10, Bytes: 1e7, Seconds: 0.1},
	}
	dir := t.TempDir()
	for _, name := range []string{"roofline.png", "roofline.svg", "bandwidth.png", "bandwidth.svg"} {
		path := filepath.Join(dir, name)
		var err error
		if name[0] == 'r' {
			err = PlotRoofline(c, pts, path)
		} else {
			err = PlotBandwidth(c, path)
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v, %d bytes", name, err, st.Size())
		}
	}
	if err := PlotRoofline(c, pts, filepath.Join(dir, "noext")); err == nil {
		t.Error("a path without extension was accepted")
	}
	if err := PlotRoofline(&Ceilings{}, nil, filepath.Join(dir, "x.png")); err == nil {
		t.Error("empty ceilings plotted")
	}
	if os.Getenv("KTUNE_PLOT_DIR") != "" { // to look at them
		PlotRoofline(c, pts, filepath.Join(os.Getenv("KTUNE_PLOT_DIR"), "roofline.png"))
		PlotBandwidth(c, filepath.Join(os.Getenv("KTUNE_PLOT_DIR"), "bandwidth.png"))
	}
}

// TestKernels checks the bandwidth kernels (asm where available, then
// masked down to the generic code) against the Go loops, and the compute
// kernels and clock for running at all.
func TestKernels(t *testing.T) {
	for _, mask := range []cpu.Set{0, cpu.NewSet(cpu.AVX512F), cpu.NewSet(cpu.AVX512F, cpu.AVX2)} {
		restore := cpu.Disable(mask.Features()...)
		n := 3 * StreamAlign / 4 // floats
		a, b, c := make([]float32, n+1), make([]float32, n+1), make([]float32, n+1)
		for i := range b {
			b[i], c[i], a[i] = float32(i), float32(2*i+1), -7
		}
		Triad(a[:n], b[:n], c[:n], 0.5)
		for i := 0; i < n; i++ {
			if want := b[i] + 0.5*c[i]; a[i] != want {
				t.Fatalf("mask %v: triad a[%d] = %g, want %g", mask, i, a[i], want)
			}
		}
		if a[n] != -7 {
			t.Errorf("mask %v: triad wrote past the end", mask)
		}
		src, dst := make([]byte, 2*StreamAlign), make([]byte, 2*StreamAlign+8)
		for i := range src {
			src[i] = byte(i * 13)
		}
		Copy(dst[:len(src)], src)
		for i := range src {
			if dst[i] != src[i] {
				t.Fatalf("mask %v: copy byte %d", mask, i)
			}
		}
		Write(dst[:len(src)], 0x0102030405060708)
		for i := 0; i < len(src); i++ {
			if dst[i] != byte(8-i%8) {
				t.Fatalf("mask %v: write byte %d = %d", mask, i, dst[i])
			}
		}
		if dst[len(src)] != 0 {
			t.Errorf("mask %v: write past the end", mask)
		}
		restore()
	}
	ks := ComputeKernels()
	if len(ks) == 0 || ks[0].Name != "go_f64" {
		t.Fatalf("compute kernels: %v", ks)
	}
	for _, k := range ks {
		k.Fn(3)
		if k.OpsPerTrip <= 0 || k.Chains < 1 {
			t.Errorf("%s: %g ops per trip, %d chains", k.Name, k.OpsPerTrip, k.Chains)
		}
	}
	if clockFn != nil {
		if got := clockFn(5); got != int64(5*clockTrip) {
			t.Errorf("clock chain returned %d, want %d", got, int64(5*clockTrip))
		}
	}
	restore := cpu.Disable(cpu.AVX512F)
	for _, k := range ComputeKernels() {
		if k.Requires.Has(cpu.AVX512F) {
			t.Errorf("%s listed with avx512f masked", k.Name)
		}
	}
	restore()
}

// TestMeasureSmall runs Measure on tiny sizes and times: the plumbing, not
// the figures.
func TestMeasureSmall(t *testing.T) {
	var calls, last int
	ts := DefaultThreads(min(2, pool.Default().Size()))
	c, err := Measure(context.Background(), Options{Threads: ts, MinWorkingSet: 4 << 10, MaxWorkingSet: 64 << 10,
		MinTime: time.Millisecond, Reps: 1, Progress: func(done, total int, what string) { calls++; last = total }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if calls != last || calls == 0 {
		t.Errorf("progress: %d calls, total %d", calls, last)
	}
	if len(c.Compute) != len(ts)*len(ComputeKernels()) || len(c.Sweeps) != len(ts)*len(Kinds) {
		t.Errorf("%d compute ceilings, %d sweeps", len(c.Compute), len(c.Sweeps))
	}
	if clockFn != nil && !(c.ClockGHz > 0.1 && c.ClockGHz < 10) {
		t.Errorf("clock %g GHz", c.ClockGHz)
	}
	if c.Fingerprint != cpu.Fingerprint() {
		t.Errorf("fingerprint %q", c.Fingerprint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, Options{Threads: []int{1}, MaxWorkingSet: 64 << 10, MinTime: time.Millisecond, Reps: 1}); err == nil {
		t.Error("cancelled context ignored")
	}
	if _, err := Measure(context.Background(), Options{Threads: []int{1 << 20}}); err == nil {
		t.Error("more threads than the pool accepted")
	}
}

// TestMeasureL3 finds the shared cache in synthetic sweeps: a 16 MiB L3
// between a 1 MiB L2 and DRAM, none where the curve drops straight from L2
// to DRAM, and a noisy curve.
func TestMeasureL3(t *testing.T) {
	sweep := func(rate func(b int64) float64) []BWPoint {
		var pts []BWPoint
		for _, b := range WorkingSets(4<<10, 1<<30, true) {
			pts = append(pts, BWPoint{Bytes: b, GBs: rate(b)})
		}
		return pts
	}
	withL3 := func(b int64) float64 {
		switch {
		case b <= 512<<10:
			return 150
		case b <= 16<<20:
			return 90
		}
		return 25
	}
	if got := MeasureL3(sweep(withL3), 1<<20, 1); got < 8<<20 || got > 16<<20 {
		t.Errorf("L3 of 16 MiB measured as %d", got)
	}
	noL3 := func(b int64) float64 {
		if b <= 512<<10 {
			return 150
		}
		return 25
	}
	if got := MeasureL3(sweep(noL3), 1<<20, 1); got != 0 {
		t.Errorf("no L3, measured %d", got)
	}
	noisy := func(b int64) float64 { return withL3(b) * (1 + 0.1*math.Sin(float64(b))) }
	if got := MeasureL3(sweep(noisy), 1<<20, 1); got < 8<<20 || got > 16<<20 {
		t.Errorf("noisy L3 of 16 MiB measured as %d", got)
	}
	// the level a warm kernel runs from follows the measured size
	c := &Ceilings{Threads: []int{1}, Cache: cpu.Cache{L1D: 32 << 10, L2: 1 << 20, L3: MeasureL3(sweep(withL3), 1<<20, 1)}}
	s := BandwidthSweep{Kind: KindRead, Threads: 1, Points: sweep(withL3)}
	s.Plateaus = Plateaus(s.Points, c.Cache, 1)
	c.Sweeps = []BandwidthSweep{s}
	for _, tc := range []struct {
		fp   float64
		cold bool
		want string
	}{{8 << 10, false, "L1"}, {300 << 10, false, "L2"}, {4 << 20, false, "L3"}, {64 << 20, false, "DRAM"}, {8 << 10, true, "DRAM"}} {
		if lv, bw := c.LevelFor(tc.fp, 1, tc.cold); lv != tc.want || !(bw > 0) {
			t.Errorf("footprint %g cold %v: %s %g, want %s", tc.fp, tc.cold, lv, bw, tc.want)
		}
	}
}

// TestDRAMSamplerApply: the best reading raises the DRAM plateau, and a
// spread past SpreadLimit (with the start's ceiling) is reported.
func TestDRAMSamplerApply(t *testing.T) {
	mk := func() *Ceilings {
		return &Ceilings{Threads: []int{2}, Sweeps: []BandwidthSweep{{Kind: KindRead, Threads: 2,
			Plateaus: []Plateau{{Level: "L2", GBs: 200, Points: 3}, {Level: "DRAM", GBs: 30, Points: 3}}}}}
	}
	for _, tc := range []struct {
		samples []float64
		want    float64
		note    bool
	}{
		{[]float64{29, 31}, 31, false},
		{[]float64{28, 45}, 45, true},  // 45/28
		{[]float64{22, 25}, 30, true},  // 30/22: the start counts in the spread
		{[]float64{27, 29}, 30, false}, // never lowered
	} {
		c := mk()
		s := &DRAMSampler{threads: []int{2}, start: map[int]float64{2: 30}, Samples: map[int][]float64{2: tc.samples}}
		notes := s.Apply(c)
		if got := c.Bandwidth("DRAM", 2); got != tc.want {
			t.Errorf("%v: DRAM %g, want %g", tc.samples, got, tc.want)
		}
		if (len(notes) > 0) != tc.note {
			t.Errorf("%v: notes %v, want a note: %v", tc.samples, notes, tc.note)
		}
		if c.Bandwidth("L2", 2) != 200 {
			t.Errorf("%v: L2 changed", tc.samples)
		}
	}
}
