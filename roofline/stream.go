package roofline

// This file holds the write, copy and triad bandwidth kernels (read is in
// roofline.go): assembly where the ISA has it (stream_*_amd64.s), the
// plain Go loops below otherwise. Stores are regular (write-allocate),
// not non-temporal.

import (
	"encoding/binary"
	"fmt"
)

// StreamAlign is the granule the lengths given to Write and Copy must be a
// multiple of (in bytes; Triad's in bytes of each array).
const StreamAlign = 256

// Write stores x over dst; len(dst) must be a multiple of StreamAlign.
func Write(dst []byte, x uint64) {
	checkAlign("Write", len(dst))
	if k := streamAsm(); k != nil {
		k.write(dst, x)
		return
	}
	writeGeneric(dst, x)
}

// Copy copies src to dst (equal lengths, a multiple of StreamAlign).
func Copy(dst, src []byte) {
	checkAlign("Copy", len(dst))
	if len(src) != len(dst) {
		panic(fmt.Sprintf("roofline.Copy: lengths %d and %d", len(dst), len(src)))
	}
	if k := streamAsm(); k != nil {
		k.copy(dst, src)
		return
	}
	copyGeneric(dst, src)
}

// Triad computes a = b + s·c (equal lengths, 4·len a multiple of StreamAlign).
func Triad(a, b, c []float32, s float32) {
	checkAlign("Triad", 4*len(a))
	if len(b) != len(a) || len(c) != len(a) {
		panic(fmt.Sprintf("roofline.Triad: lengths %d, %d, %d", len(a), len(b), len(c)))
	}
	if k := streamAsm(); k != nil {
		k.triad(a, b, c, s)
		return
	}
	triadGeneric(a, b, c, s)
}

func checkAlign(fn string, n int) {
	if n%StreamAlign != 0 {
		panic(fmt.Sprintf("roofline.%s: %d bytes is not a multiple of %d", fn, n, StreamAlign))
	}
}

type streamKernels struct {
	write func([]byte, uint64)
	copy  func(dst, src []byte)
	triad func(a, b, c []float32, s float32)
}

func writeGeneric(dst []byte, x uint64) {
	for i := 0; i+8 <= len(dst); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], x)
	}
}

func copyGeneric(dst, src []byte) {
	copy(dst, src) // the runtime's memmove
}

func triadGeneric(a, b, c []float32, s float32) {
	for i := range a {
		a[i] = b[i] + s*c[i]
	}
}
