package roofline

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/pool"
)

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
