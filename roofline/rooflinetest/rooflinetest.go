// Package rooflinetest holds the ceilings the roofline and reports tests
// draw and check against: known figures, so a plot or a fraction of a roof
// can be checked by hand.
package rooflinetest

import (
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/roofline"
)

// Ceilings returns ceilings with known figures: f32 100 GFLOP/s per
// thread, int8 400 GOP/s per thread; read L1 200, L2 100, L3 50, DRAM 10
// GB/s per thread (caches 32 KiB, 1 MiB per core, 16 MiB shared).
func Ceilings() *roofline.Ceilings {
	c := &roofline.Ceilings{Schema: roofline.Schema, Fingerprint: "test", CPU: "test cpu", Arch: "amd64", ClockGHz: 3,
		Cache: cpu.Cache{L1D: 32 << 10, L2: 1 << 20, L3: 16 << 20}, Threads: []int{1, 2}}
	for _, t := range c.Threads {
		ft := float64(t)
		c.Compute = append(c.Compute,
			roofline.ComputeCeiling{Name: "x_fma_f32", DType: "f32", ISA: "x", Threads: t, GFLOPS: 100 * ft},
			roofline.ComputeCeiling{Name: "x_narrow_f32", DType: "f32", ISA: "x", Threads: t, GFLOPS: 50 * ft},
			roofline.ComputeCeiling{Name: "x_dot_int8", DType: "int8", ISA: "x", Threads: t, GFLOPS: 400 * ft})
		for _, kind := range roofline.Kinds {
			s := roofline.BandwidthSweep{Kind: kind, Threads: t}
			for _, ws := range roofline.WorkingSets(4<<10, 1<<30, true) {
				bw := 10.0
				switch {
				case ws <= 32<<10*int64(t):
					bw = 200
				case ws <= 1<<20*int64(t):
					bw = 100
				case ws <= 16<<20:
					bw = 50
				}
				s.Points = append(s.Points, roofline.BWPoint{Bytes: ws, GBs: bw * ft})
			}
			s.Plateaus = roofline.Plateaus(s.Points, c.Cache, t)
			c.Sweeps = append(c.Sweeps, s)
		}
	}
	return c
}
