//go:build arm64 && gc && !purego

package mla

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kerneltest"
)

// TestToBF16NEON: BFCVTN under Go's FPCR rounds exactly as
// half.F32ToBF16 (which the BF16 cache uses): ties to even both ways,
// carries into the exponent, overflow to ±Inf, subnormals kept (not
// flushed), NaNs quieted with sign and top payload, zeros signed.
func TestToBF16NEON(t *testing.T) {
	kerneltest.Features(t, cpu.NewSet(cpu.BF16))
	bits := []uint32{0, 0x80000000, 0x3f800000, 0x3f808000, 0x3f818000, 0x3f808001, 0x3f80ffff, 0x3f7fffff,
		0x7f7fffff, 0xff7fffff, 0x7f7f8000, 0x7f7f7fff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa12345,
		0x00000001, 0x00008000, 0x00018000, 0x007fffff, 0x807f8000, 0x00800000, 0x80010000}
	r := rand.New(rand.NewPCG(5, 5))
	for len(bits)%16 != 0 || len(bits) < 256 {
		bits = append(bits, r.Uint32())
	}
	src := make([]float32, len(bits))
	for i, b := range bits {
		src[i] = math.Float32frombits(b)
	}
	dst := make([]uint16, len(src)+1)
	dst[len(src)] = 0xdead
	mlaToBF16NEONBF16(&dst[0], &src[0], len(src))
	for i, b := range bits {
		if want := half.F32ToBF16(src[i]); dst[i] != want {
			t.Errorf("bf16(%#08x) = %#04x, half.F32ToBF16 %#04x", b, dst[i], want)
		}
	}
	if dst[len(src)] != 0xdead {
		t.Error("wrote past n")
	}
}
