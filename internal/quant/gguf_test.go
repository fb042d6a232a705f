package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
)

// TestGGUFMatrix: every GGUF format round-trips its type, sizes its rows as
// the file does, dequantizes each row as DequantizeGGML does, and refuses
// a row length that is not whole blocks.
func TestGGUFMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range kernel.GGUFDTypes {
		ty, ok := GGUFType(dt)
		if back, ok2 := GGUFDType(ty); !ok || !ok2 || back != dt || !IsGGUF(dt) {
			t.Fatalf("%s: type %s, back %s", dt, ty, back)
		}
		k := 2 * max(ty.BlockSize(), 32)
		n := 19
		m, err := RandomGGUF(r, dt, n, k, 0.02)
		if err != nil {
			t.Fatal(err)
		}
		if want := n * k / ty.BlockSize() * ty.BlockBytes(); len(m.Data) != want || Size(dt, n, k, false) != int64(want) || m.RowBytes()*n != want {
			t.Fatalf("%s: %d bytes, Size %d, RowBytes %d; want %d", dt, len(m.Data), Size(dt, n, k, false), m.RowBytes(), want)
		}
		if m.Panels() != 2 || len(m.Panel(1)) != 3*m.RowBytes() {
			t.Fatalf("%s: %d panels, the last %d bytes", dt, m.Panels(), len(m.Panel(1)))
		}
		want := make([]float32, n*k)
		if err := DequantizeGGML(ty, m.Data, want); err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		got := m.Dequantize()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: element %d: DequantizeRow %v, DequantizeGGML %v", dt, i, got[i], want[i])
			}
		}
		if v, err := GGUFView(ty, n, k, m.Data); err != nil || v.DType != dt || &v.Data[0] != &m.Data[0] {
			t.Fatalf("%s: GGUFView: %v", dt, err)
		}
		if ty.BlockSize() > 1 {
			if _, err := New(dt, n, k+ty.BlockSize()/2, false); err == nil {
				t.Errorf("%s: a row of a partial block accepted", dt)
			}
		}
		if _, err := View(dt, n, k, false, m.Data[1:]); err == nil {
			t.Errorf("%s: a short view accepted", dt)
		}
	}
	if _, err := GGUFView(gguf.TypeIQ2_XS, 1, 256, make([]byte, 74)); err == nil {
		t.Error("iq2_xs viewed in place")
	}
}

// TestRandomGGUF: FillRandomGGUF's weights are zero-mean with about the
// standard deviation asked, for every type (what keeps a synthetic
// 27-layer model's activations of order 1), and all finite. A draw whose
// mean is off by a quarter of the deviation fails.
func TestRandomGGUF(t *testing.T) {
	const std = 0.02
	for _, dt := range kernel.GGUFDTypes {
		t.Run(string(dt), func(t *testing.T) {
			ty, _ := GGUFType(dt)
			r := rand.New(rand.NewPCG(7, uint64(ty)))
			n, k := 256, 2304
			m, err := RandomGGUF(r, dt, n, k, std)
			if err != nil {
				t.Fatal(err)
			}
			w := make([]float32, n*k)
			if err := DequantizeGGML(ty, m.Data, w); err != nil {
				t.Fatal(err)
			}
			var s, s2 float64
			for _, v := range w {
				s += float64(v)
				s2 += float64(v) * float64(v)
			}
			mean := s / float64(len(w))
			sd := math.Sqrt(s2/float64(len(w)) - mean*mean)
			if math.Abs(mean) > std/25 || sd < 0.6*std || sd > 1.6*std {
				t.Errorf("mean %.3g, sd %.3g; want 0 and about %g", mean, sd, std)
			}
		})
	}
}

// TestKScalePacking: the scale packers invert ggml's unpacking for every
// code.
func TestKScalePacking(t *testing.T) {
	for base := 0; base < 64; base++ {
		var sc, mn [8]int
		var c3 [16]int
		for j := range sc {
			sc[j], mn[j] = (base+7*j)%64, (base+13*j+5)%64
		}
		for j := range c3 {
			c3[j] = (base + 11*j) % 64
		}
		var b4 [12]byte
		putQ4KScales(b4[:], &sc, &mn)
		for j := range sc {
			if s, m := q4KScaleMin(b4[:], j); s != sc[j] || m != mn[j] {
				t.Fatalf("q4_K sub-block %d: %d/%d, want %d/%d", j, s, m, sc[j], mn[j])
			}
		}
		var b3 [12]byte
		putQ3KScales(b3[:], &c3)
		for j := range c3 {
			if got := q3KScale(b3[:], j) + 32; got != c3[j] {
				t.Fatal(fmt.Sprintf("q3_K sub-block %d: %d, want %d", j, got, c3[j]))
			}
		}
	}
}

// TestGGUFBlockInts: the integer form s·v − mn gives DequantizeGGML's
// values bit for bit, on random blocks and on the known blocks of every
// integer and scale value.
func TestGGUFBlockInts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ty := range ggmlQuantTypes {
		bs := ty.BlockSize()
		raw := randomGGML(r, ty, 4, 2*bs)
		for i := range 16 {
			b, _ := ggmlEncoders[ty](0.01234, 0.00567, i)
			raw = append(raw, b...)
		}
		want := make([]float32, len(raw)/ty.BlockBytes()*bs)
		if err := DequantizeGGML(ty, raw, want); err != nil {
			t.Fatal(err)
		}
		v, s, mn := make([]int8, bs), make([]float32, bs/GGUFSub), make([]float32, bs/GGUFSub)
		for blk := 0; blk < len(want)/bs; blk++ {
			GGUFBlockInts(ty, raw[blk*ty.BlockBytes():(blk+1)*ty.BlockBytes()], v, s, mn)
			for e := range v {
				got := s[e/GGUFSub]*float32(v[e]) - mn[e/GGUFSub]
				if got != want[blk*bs+e] && !(got == 0 && want[blk*bs+e] == 0) {
					t.Fatalf("%s block %d element %d: %v·%d − %v = %v, DequantizeGGML %v", ty, blk, e, s[e/GGUFSub], v[e], mn[e/GGUFSub], got, want[blk*bs+e])
				}
			}
		}
	}
}
