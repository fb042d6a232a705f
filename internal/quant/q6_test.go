package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/half"
)

// TestQ6Layout stores every value at every element of a record and reads
// it back, checking the documented bit positions of a few.
func TestQ6Layout(t *testing.T) {
	rec := make([]byte, Q6GroupBytes)
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ6(rec, pr, j, (pr*37+j*11)%64)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			if got, want := q6At(rec, pr, j), (pr*37+j*11)%64; got != want {
				t.Fatalf("row %d, k %d: %d, want %d", pr, j, got, want)
			}
		}
	}
	clear(rec)
	setQ6(rec, 5, 13, 45) // k 13: line 3, bits 0–5 of byte 4·5+1
	if rec[3*64+21] != 45 {
		t.Errorf("k 13: byte %#x", rec[3*64+21])
	}
	setQ6(rec, 5, 26, 0b100111) // k 26: bits 0–1 in line 0, 2–3 in line 1, 4–5 in line 2 (bits 6–7 of byte 4·5+2)
	if rec[22] != 3<<6 || rec[64+22] != 1<<6 || rec[128+22] != 2<<6 {
		t.Errorf("k 26: bytes %#x %#x %#x", rec[22], rec[64+22], rec[128+22])
	}
	setQ6(rec, 0, 31, 0b011001) // k 31: lines 3, 4, 5 (byte 3)
	if rec[3*64+3] != 1<<6 || rec[4*64+3] != 2<<6 || rec[5*64+3] != 1<<6 {
		t.Errorf("k 31: bytes %#x %#x %#x", rec[3*64+3], rec[4*64+3], rec[5*64+3])
	}
	if q6At(rec, 5, 13) != 45 || q6At(rec, 5, 26) != 0b100111 || q6At(rec, 0, 31) != 0b011001 {
		t.Error("a value overwrote another")
	}
}

// TestQ6Hint: a group on a ggml Q6_K sub-block grid (w = d·sc·q, q ∈
// [−32, 31], both halves the same scale) whose max-abs scale misses the
// grid is packed exactly with the grid's scale as the hint, and a useless
// hint never makes a group worse than max-abs.
func TestQ6Hint(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		step := float32(0.001 * float64(1+r.IntN(100))) // d·sc, an f16 value
		step = half.F16ToF32(half.F32ToF16(step))
		var x [GroupK]float32
		for j := range x {
			x[j] = step * float32(r.IntN(61)-30) // |q| ≤ 30: max-abs's scale is off the grid
		}
		x[trial%GroupK] = step * 30
		err := func(hint float32) float32 {
			rec := make([]byte, Q6GroupBytes)
			packQ6Hint(rec, 3, &x, &ones, false, hint)
			var e float32
			for j, v := range x {
				d := q6Scale(rec, 3) * float32(q6At(rec, 3, j)-Q6Zero)
				e += (d - v) * (d - v)
			}
			return e
		}
		e0 := err(0)
		if e := err(step); e != 0 || !(e0 > 0) {
			t.Fatalf("trial %d: error %g with the grid's scale, %g by max-abs", trial, e, e0)
		}
		if e := err(step * 0.37); e > e0 {
			t.Fatalf("trial %d: a bad hint raised the error %g → %g", trial, e0, e)
		}
	}
}
