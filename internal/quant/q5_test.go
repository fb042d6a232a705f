package quant

import "testing"

// TestQ5Layout stores every value at every element of a record and reads
// it back, checking the documented bit positions of a few: the low four
// bits where Q4 keeps its nibble, the fifth at bit k/4 of line 4.
func TestQ5Layout(t *testing.T) {
	rec := make([]byte, Q5GroupBytes)
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ5(rec, pr, j, (pr*37+j*11)%32)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			if got, want := q5At(rec, pr, j), (pr*37+j*11)%32; got != want {
				t.Fatalf("row %d, k %d: %d, want %d", pr, j, got, want)
			}
			if got, want := nibble(rec, pr, j), (pr*37+j*11)%16; got != want {
				t.Fatalf("row %d, k %d: nibble %d, want %d (Q4's place)", pr, j, got, want)
			}
		}
	}
	clear(rec)
	setQ5(rec, 5, 13, 0b10110) // k 13: line 1, high nibble of byte 4·5+1; bit 3 of line 4's byte 21
	if rec[64+21] != 0b0110<<4 || rec[4*64+21] != 1<<3 {
		t.Errorf("k 13: bytes %#x %#x", rec[64+21], rec[4*64+21])
	}
	setQ5(rec, 0, 31, 0b11001) // k 31: line 3, high nibble of byte 3; bit 7 of line 4's byte 3
	if rec[3*64+3] != 0b1001<<4 || rec[4*64+3] != 1<<7 {
		t.Errorf("k 31: bytes %#x %#x", rec[3*64+3], rec[4*64+3])
	}
	setQ5(rec, 0, 3, 0b01111) // k 3: line 0, low nibble of byte 3; bit 0 clear
	if rec[3] != 0b1111 || rec[4*64+3] != 1<<7 {
		t.Errorf("k 3: bytes %#x %#x", rec[3], rec[4*64+3])
	}
	if q5At(rec, 5, 13) != 0b10110 || q5At(rec, 0, 31) != 0b11001 || q5At(rec, 0, 3) != 0b01111 {
		t.Error("a value overwrote another")
	}
	// the kernels' decode: nibble | ((L4 << (4−h)) & 16) for h ≤ 4, ((L4 >> (h−4)) & 16) else, on 16-bit words
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			setQ5(rec, pr, j, (pr*29+j*13+7)%32)
		}
	}
	for pr := 0; pr < PanelRows; pr++ {
		for j := 0; j < GroupK; j++ {
			h := j / 4
			b := 4*pr + j%4
			w := uint16(rec[4*64+b&^1]) | uint16(rec[4*64+b|1])<<8
			if h <= 4 {
				w <<= uint(4 - h)
			} else {
				w >>= uint(h - 4)
			}
			hi := int(byte(w>>(8*uint(b&1))) & 16)
			if got, want := nibble(rec, pr, j)|hi, (pr*29+j*13+7)%32; got != want {
				t.Fatalf("row %d, k %d: word decode %d, want %d", pr, j, got, want)
			}
		}
	}
}
