//go:build arm64 && gc && !purego

package roofline

import (
	"testing"
	"time"

	"github.com/ktune/ktune/internal/cpu"
)

func TestPeakFMA(t *testing.T) {
	if got := fmaNEON(1000); got != 1000 {
		t.Errorf("fmaNEON(1000) chain = %v, want 1000", got)
	}
	if cpu.Has(cpu.SVE) {
		if got := fmaSVE(1000); got != 1000 {
			t.Errorf("fmaSVE(1000) chain = %v, want 1000", got)
		}
	}
	if cpu.Has(cpu.BF16) {
		if got := bf16DotNEON(1000); got != 2000 {
			t.Errorf("bf16DotNEON(1000) chain = %v, want 2000", got)
		}
		if got := bf16MMLANEON(1000); got != 4000 {
			t.Errorf("bf16MMLANEON(1000) chain = %v, want 4000", got)
		}
		if cpu.Has(cpu.SVE) {
			if got := bf16DotSVE(1000); got != 2000 {
				t.Errorf("bf16DotSVE(1000) chain = %v, want 2000", got)
			}
		}
	}
	start := time.Now()
	f := PeakFMANEON(1 << 16)
	t.Logf("NEON FMA: %.1f GFLOP/s (meaningless under qemu)", f/time.Since(start).Seconds()/1e9)
	start = time.Now()
	if f, ok := PeakFMASVE(1 << 16); ok {
		t.Logf("SVE FMA: %.1f GFLOP/s at %d bits (meaningless under qemu)", f/time.Since(start).Seconds()/1e9, cpu.Get().SVEBits)
	}
}
