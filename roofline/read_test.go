package roofline

import (
	"fmt"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

func TestReadChecksum(t *testing.T) {
	buf := make([]byte, 8*ReadAlign*5)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	for _, s := range ReadStreams {
		want := readGeneric(buf, s)
		for _, mask := range []cpu.Set{0, cpu.NewSet(cpu.AVX512F), cpu.NewSet(cpu.AVX512F, cpu.AVX2)} {
			restore := cpu.Disable(mask.Features()...)
			if got := Read(buf, s); got != want {
				t.Errorf("streams=%d masked %v: checksum %d, want %d", s, mask, got, want)
			}
			if got := ReadParallel(buf, s, 2); got != want {
				t.Errorf("streams=%d masked %v, 2 threads: checksum %d, want %d", s, mask, got, want)
			}
			restore()
		}
	}
}

// BenchmarkRead/streams=<s>/mem=dram/threads=<n>: the read ceiling the
// bandwidth-bound kernels are measured against.
func BenchmarkRead(b *testing.B) {
	const size = 1 << 30
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, s := range ReadStreams {
		for threads := 1; threads <= 2; threads++ {
			b.Run(fmt.Sprintf("streams=%d/mem=dram/threads=%d", s, threads), func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					ReadParallel(buf, s, threads)
				}
				b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}
