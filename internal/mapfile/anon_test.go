package mapfile

import (
	"testing"
	"unsafe"
)

// TestAnon: the memory is zeroed and writable, 2 MiB-aligned where it is
// mapped (Supported), and released without error; size 0 gives nothing.
func TestAnon(t *testing.T) {
	for _, size := range []int{1, 4095, 3<<20 + 17} {
		b, release, err := Anon(size)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != size {
			t.Fatalf("Anon(%d): %d bytes", size, len(b))
		}
		for i := 0; i < size; i += 997 {
			if b[i] != 0 {
				t.Fatalf("Anon(%d)[%d] = %d, want zeroed", size, i, b[i])
			}
			b[i] = byte(i)
		}
		b[size-1] = 1
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); Supported && p%(2<<20) != 0 {
			t.Errorf("Anon(%d) at %#x: not 2 MiB-aligned", size, p)
		}
		if release != nil {
			if err := release(b); err != nil {
				t.Errorf("Anon(%d): release: %v", size, err)
			}
		}
	}
	if b, release, err := Anon(0); b != nil || release != nil || err != nil {
		t.Errorf("Anon(0) = %d bytes, %v", len(b), err)
	}
}
