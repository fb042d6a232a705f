package quant

import (
	"testing"

	"github.com/ktune/ktune/internal/half"
)

// TestQ2Layout stores every value at every element of a record and reads
// it back, checking the documented bit positions of a few, and the scale
// word's split into scale and offset code.
func TestQ2Layout(t *testing.T) {
	rec := make([]byte, Q2GroupBytes)
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ2(rec, pr, j, (pr*7+j*3)%4)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			if got, want := q2At(rec, pr, j), (pr*7+j*3)%4; got != want {
				t.Fatalf("row %d, k %d: %d, want %d", pr, j, got, want)
			}
		}
	}
	clear(rec)
	setQ2(rec, 5, 13, 2) // k 13: line 0, bits 6–7 of byte 4·5+1
	if rec[21] != 2<<6 {
		t.Errorf("k 13: byte %#x", rec[21])
	}
	setQ2(rec, 0, 22, 3) // k 22: line 1, bits 2–3 of byte 2
	if rec[64+2] != 3<<2 {
		t.Errorf("k 22: byte %#x", rec[64+2])
	}
	// scale word 1.5 (0x3e00) with code 7: t = 1.5, w = 1.5·(u − 1.5)
	rec[128+2*3], rec[128+2*3+1] = 0x07, 0x3e
	setQ2(rec, 3, 0, 0)
	setQ2(rec, 3, 1, 3)
	row := make([]float32, 2)
	dequantizeQ2Row(rec, 3, row)
	if row[0] != -2.25 || row[1] != 2.25 {
		t.Errorf("dequantized %v, want [-2.25 2.25]", row)
	}
	if d, c := Q2Scale(0x3e07); d != 1.5 || c != 7 {
		t.Errorf("Q2Scale(0x3e07) = %v, %d", d, c)
	}
}

// TestQ2Grid: scales round to f16s with four zero low bits, up when asked,
// to Inf past the largest.
func TestQ2Grid(t *testing.T) {
	for _, c := range []struct {
		d    float32
		up   bool
		want uint16
	}{
		{1, false, 0x3c00}, {1, true, 0x3c00}, {1.005, false, 0x3c00}, {1.005, true, 0x3c10}, {1.01, false, 0x3c10},
		{65024, false, 0x7bf0}, {65300, false, 0x7c00}, {65100, true, 0x7c00}, {1e-7, true, 0x0010},
	} {
		if got := q2Grid(c.d, c.up); got != c.want {
			t.Errorf("q2Grid(%v, %v) = %#x (%v), want %#x", c.d, c.up, got, half.F16ToF32(got), c.want)
		}
	}
}
