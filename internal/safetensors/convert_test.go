package safetensors

import (
	"math"
	"testing"
)

// f16Ref is an independent float64 evaluation of an IEEE half.
func f16Ref(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	man := float64(h & 0x3ff)
	switch exp {
	case 0x1f:
		if man != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * man * math.Pow(2, -24)
	}
	return sign * (1 + man/1024) * math.Pow(2, float64(exp-15))
}

func TestF16ToF32AllValues(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		got, want := float64(F16ToF32(h)), f16Ref(h)
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("F16ToF32(%#04x) = %v, want NaN", h, got)
			}
			if back := F32ToF16(float32(got)); back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("F16ToF32(%#04x) = %v, want %v", h, got, want)
		}
		if back := F32ToF16(float32(got)); back != h {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

func TestF16Rounding(t *testing.T) {
	// Between every pair of adjacent finite halves (subnormals included),
	// the midpoint rounds to the even one and anything off the midpoint
	// rounds to the nearer one.
	for h := uint16(0); h < 0x7bff; h++ {
		lo, hi := F16ToF32(h), F16ToF32(h+1)
		mid := float32((float64(lo) + float64(hi)) / 2) // exact in float32
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		if got := F32ToF16(mid); got != even {
			t.Fatalf("F32ToF16(%v, between %#04x and %#04x) = %#04x, want %#04x", mid, h, h+1, got, even)
		}
		if got := F32ToF16(-mid); got != even|0x8000 {
			t.Fatalf("F32ToF16(%v) = %#04x, want %#04x", -mid, got, even|0x8000)
		}
		if got := F32ToF16(math.Nextafter32(mid, 0)); got != h {
			t.Fatalf("just below the midpoint %v: got %#04x, want %#04x", mid, got, h)
		}
		if got := F32ToF16(math.Nextafter32(mid, math.MaxFloat32)); got != h+1 {
			t.Fatalf("just above the midpoint %v: got %#04x, want %#04x", mid, got, h+1)
		}
	}
	special := []struct {
		in   float32
		want uint16
	}{
		{65504, 0x7bff},
		{65519.99, 0x7bff},
		{65520, 0x7c00}, // the midpoint to the next (infinite) step rounds to even: infinity
		{1e10, 0x7c00},
		{-1e10, 0xfc00},
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-24, 0x0001},   // smallest subnormal
		{0x1p-25, 0x0000},   // half of it: tie to even (zero)
		{0x1.8p-25, 0x0001}, // above the tie
		{0x1p-26, 0x0000},
		{0x1p-14, 0x0400}, // smallest normal
		{math.SmallestNonzeroFloat32, 0},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
	}
	for _, s := range special {
		if got := F32ToF16(s.in); got != s.want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", s.in, got, s.want)
		}
	}
	if nan := F32ToF16(float32(math.NaN())); nan&0x7c00 != 0x7c00 || nan&0x3ff == 0 {
		t.Errorf("F32ToF16(NaN) = %#04x, not a NaN", nan)
	}
}

func TestBF16(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) = %v", h, f)
		}
		if f != f { // NaN stays NaN
			if back := F32ToBF16(f); back&0x7f80 != 0x7f80 || back&0x7f == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back := F32ToBF16(f); back != h {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, back)
		}
	}
	for h := uint16(0); h < 0x7f7f; h += 7 {
		lo, hi := BF16ToF32(h), BF16ToF32(h+1)
		mid := float32((float64(lo) + float64(hi)) / 2)
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		if got := F32ToBF16(mid); got != even {
			t.Fatalf("F32ToBF16(%v) = %#04x, want %#04x", mid, got, even)
		}
		if got := F32ToBF16(math.Nextafter32(mid, 0)); got != h {
			t.Fatalf("below the midpoint: %#04x, want %#04x", got, h)
		}
		if got := F32ToBF16(math.Nextafter32(mid, math.MaxFloat32)); got != h+1 {
			t.Fatalf("above the midpoint: %#04x, want %#04x", got, h+1)
		}
	}
	if got := F32ToBF16(math.MaxFloat32); got != 0x7f80 {
		t.Errorf("F32ToBF16(MaxFloat32) = %#04x, want +Inf", got)
	}
	if got := F32ToBF16(1.00390625); got != 0x3f80 { // 1 + 2^-8: tie, rounds to even (1)
		t.Errorf("F32ToBF16(1+2^-8) = %#04x, want 0x3f80", got)
	}
	// A NaN whose payload sits only in the low bits must not become infinity.
	if got := F32ToBF16(math.Float32frombits(0x7f800001)); got&0x7f == 0 {
		t.Errorf("F32ToBF16(signalling NaN) = %#04x, not a NaN", got)
	}

	// Relative error of BF16 rounding is at most 2^-9.
	for _, v := range []float32{0.1, 3.14159, -2.71828, 1e-20, 123456.7} {
		got := BF16ToF32(F32ToBF16(v))
		if rel := math.Abs(float64(got-v) / float64(v)); rel > 1.0/512 {
			t.Errorf("BF16 round trip of %v = %v (relative error %g)", v, got, rel)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	if err := DecodeFloat32(make([]float32, 2), F32, make([]byte, 7)); err == nil {
		t.Error("DecodeFloat32 accepted a short buffer")
	}
	if err := DecodeFloat32(make([]float32, 1), I32, make([]byte, 4)); err == nil {
		t.Error("DecodeFloat32 accepted I32")
	}
	if err := DecodeInt64(make([]int64, 1), F32, make([]byte, 4)); err == nil {
		t.Error("DecodeInt64 accepted F32")
	}
	if err := DecodeInt64(make([]int64, 1), I64, make([]byte, 4)); err == nil {
		t.Error("DecodeInt64 accepted a short buffer")
	}
}
