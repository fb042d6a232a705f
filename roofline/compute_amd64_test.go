//go:build amd64 && gc && !purego

package roofline

// amd64 checks of the compute-ceiling table: which int8 ceilings each
// masked ISA level lists.

import (
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

func int8Kernels() []string {
	var names []string
	for _, k := range ComputeKernels() {
		if k.DType == "int8" {
			names = append(names, k.Name)
		}
	}
	return names
}

// TestInt8Ceilings checks that an AVX2 CPU without VNNI (here: this CPU
// masked down to avx2,fma) has exactly the avx2_int8 ceiling, that it
// stays listed beside the VNNI ones (PeakFLOPs takes the best), and that
// it goes with AVX2.
func TestInt8Ceilings(t *testing.T) {
	if !cpu.Has(cpu.AVX2) {
		t.Skip("no AVX2")
	}
	var k *ComputeKernel
	for _, c := range ComputeKernels() {
		if c.Name == "avx2_int8" {
			k = c
		}
	}
	if k == nil {
		t.Fatalf("avx2_int8 not listed with AVX2: %v", int8Kernels())
	}
	if k.DType != "int8" || k.OpsPerTrip != 12*32*2 || k.Chains != 12 || k.Requires != cpu.NewSet(cpu.AVX2) {
		t.Errorf("avx2_int8: %+v", *k)
	}
	restore := cpu.Only(cpu.NewSet(cpu.AVX2, cpu.FMA))
	if got := int8Kernels(); len(got) != 1 || got[0] != "avx2_int8" {
		t.Errorf("int8 ceilings at avx2,fma: %v, want [avx2_int8]", got)
	}
	restore()
	restore = cpu.Disable(cpu.AVX2)
	for _, n := range int8Kernels() {
		if n == "avx2_int8" {
			t.Errorf("avx2_int8 listed with avx2 masked")
		}
	}
	restore()

	// The best int8 ceiling wins where VNNI is there too.
	c := &Ceilings{Compute: []ComputeCeiling{
		{Name: "avx2_int8", DType: "int8", Threads: 1, GFLOPS: 150},
		{Name: "avx512_vnni_int8", DType: "int8", Threads: 1, GFLOPS: 600},
		{Name: "avx2_fma_f32", DType: "f32", Threads: 1, GFLOPS: 100},
	}}
	if got := c.PeakFLOPs("int8act", 1); got != 600 {
		t.Errorf("PeakFLOPs(int8act) = %g with VNNI, want 600", got)
	}
	c.Compute = append(c.Compute[:1:1], c.Compute[2])
	if got := c.PeakFLOPs("int8act", 2); got != 300 {
		t.Errorf("PeakFLOPs(int8act, 2) = %g without VNNI, want 300", got)
	}
}
