// Package roofline measures the machine's ceilings — compute peaks per ISA
// and data type, bandwidth per memory level — and places kernel runs
// against them (arithmetic intensity vs achieved FLOP/s).
//
// This file holds the read-bandwidth kernels: S interleaved sequential
// streams, the access pattern of a GEMV over packed weights.
package roofline

import (
	"fmt"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/pool"
)

// ReadStreams are the stream counts the read kernels support.
var ReadStreams = []int{1, 2, 4, 8}

// ReadAlign is the granule a read buffer's length must be a multiple of
// per stream.
const ReadAlign = 128

// Read reads buf as streams interleaved sequential streams and returns a
// checksum (the sum of its 64-bit words, so the loads cannot be dropped).
// len(buf) must be a multiple of streams·ReadAlign.
func Read(buf []byte, streams int) uint64 {
	if len(buf)%(streams*ReadAlign) != 0 {
		panic(fmt.Sprintf("roofline.Read: %d bytes is not a multiple of %d", len(buf), streams*ReadAlign))
	}
	if fn := readAsm(streams); fn != nil {
		return fn(buf)
	}
	return readGeneric(buf, streams)
}

func readGeneric(buf []byte, streams int) uint64 {
	part := len(buf) / streams
	var sum uint64
	for o := 0; o < part; o += 8 {
		for s := 0; s < streams; s++ {
			b := buf[s*part+o:]
			sum += uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		}
	}
	return sum
}

// ReadParallel reads buf on threads workers of the default pool, each its
// own contiguous share, with streams streams each; it returns the combined
// checksum.
func ReadParallel(buf []byte, streams, threads int) uint64 {
	unit := streams * ReadAlign
	units := len(buf) / unit
	sums := make([]uint64, pool.Default().Threads(threads))
	pool.Default().For(threads, units, 1, func(w, lo, hi int) {
		sums[w] = Read(buf[lo*unit:hi*unit], streams)
	})
	var s uint64
	for _, x := range sums {
		s += x
	}
	return s
}

// haveAVX512 / haveAVX2 follow the effective features at call time.
func haveAVX512() bool { return cpu.Has(cpu.AVX512F) }
func haveAVX2() bool   { return cpu.Has(cpu.AVX2) }
