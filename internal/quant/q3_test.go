package quant

import "testing"

// TestQ3Layout stores every value at every element of a record and reads
// it back, checking the documented bit positions of a few.
func TestQ3Layout(t *testing.T) {
	rec := make([]byte, Q3GroupBytes)
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ3(rec, pr, j, (pr*7+j*3)%8)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			if got, want := q3At(rec, pr, j), (pr*7+j*3)%8; got != want {
				t.Fatalf("row %d, k %d: %d, want %d", pr, j, got, want)
			}
		}
	}
	clear(rec)
	setQ3(rec, 5, 13, 6) // k 13: line 1, bits 3–5 of byte 4·5+1
	if rec[64+21] != 6<<3 {
		t.Errorf("k 13: byte %#x", rec[64+21])
	}
	setQ3(rec, 5, 26, 7) // k 26: low bits in line 0 bits 6–7, high bit in line 2 bit 6 (byte 4·5+2)
	if rec[22] != 3<<6 || rec[128+22] != 1<<6 {
		t.Errorf("k 26: bytes %#x %#x", rec[22], rec[128+22])
	}
	setQ3(rec, 0, 31, 5) // k 31: low bits in line 1 bits 6–7, high bit in line 2 bit 7 (byte 3)
	if rec[64+3] != 1<<6 || rec[128+3] != 1<<7 {
		t.Errorf("k 31: bytes %#x %#x", rec[64+3], rec[128+3])
	}
}
