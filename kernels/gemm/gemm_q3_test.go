package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/roofline"
)

// setQ3 stores u (0…7) at row i, group element j of a Q3 record (the
// layout of quant/q3.go; q3At reads it back).
func setQ3(rec []byte, i, j, u int) {
	b := 4*i + j%4
	if q := j / 4; q < 6 {
		off, sh := (q/2)*quant.LineBytes+b, uint(3*(q%2))
		rec[off] = rec[off]&^(7<<sh) | byte(u)<<sh
		return
	}
	q := j / 4
	lo, hi := (q-6)*quant.LineBytes+b, 2*quant.LineBytes+b
	rec[lo] = rec[lo]&0x3f | byte(u&3)<<6
	rec[hi] = rec[hi]&^(1<<uint(q)) | byte(u>>2)<<uint(q)
}

// TestQ3Shapes checks every Q3 candidate of gemm.gemv and gemm.gemm with
// the dot-product error model (as FuzzGEMM does) at awkward shapes: M
// across the row tiles, N across panels, K across groups.
func TestQ3Shapes(t *testing.T) {
	seed := uint64(1)
	for _, m := range []int{1, 2, 3, 4, 5, 8, 11, 12, 13, 25} {
		for _, nk := range [][2]int{{1, 1}, {15, 31}, {16, 32}, {17, 33}, {40, 95}, {63, 257}, {64, 64}} {
			s := kernel.MakeShape(shapeKeys, m, nk[0], nk[1])
			for _, op := range []string{OpGEMV, OpGEMM} {
				fuzzOne(t, op, kernel.Q3, s, seed)
			}
			seed++
		}
	}
}

// BenchmarkQ3Decode compares decode GEMV (m = 1) on Q3 and Q4 weights
// streamed from DRAM, beside the read ceiling, at the experts' shapes
// (gate/up 1024×2304, down 2304×1024) and a 32768×2304 head slice. With
// -count, the sub-benchmarks alternate. GB/s counts the packed weights.
//
//	go test ./kernels/gemm -run '^$' -bench Q3Decode -count 5
func BenchmarkQ3Decode(b *testing.B) { benchDecode(b, kernel.Q3, kernel.Q4) }

// benchDecode is BenchmarkQ3Decode's body over the dtypes dts.
func benchDecode(b *testing.B, dts ...kernel.DType) {
	benchDecodeShapes(b, [][2]int{{1024, 2304}, {2304, 1024}, {32768, 2304}}, dts...)
}

// benchDecodeShapes is benchDecode at the shapes nks (n, k).
func benchDecodeShapes(b *testing.B, nks [][2]int, dts ...kernel.DType) {
	r := rand.New(rand.NewPCG(1, 2))
	for threads := 1; threads <= 2; threads++ {
		b.Run(fmt.Sprintf("op=read/streams=4/mem=dram/threads=%d", threads), func(b *testing.B) {
			buf := make([]byte, dramBytes)
			for i := range buf {
				buf[i] = byte(i)
			}
			b.SetBytes(dramBytes)
			for b.Loop() {
				roofline.ReadParallel(buf, 4, threads)
			}
			b.ReportMetric(dramBytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	for _, nk := range nks {
		n, k := nk[0], nk[1]
		x := make([]float32, k)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		y := make([]float32, n)
		s := kernel.MakeShape(shapeKeys, 1, n, k)
		for _, dt := range dts {
			w, err := quant.Random(r, dt, n, k, false, 0.02)
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range benchVariants(OpGEMV, dt) {
				for threads := 1; threads <= 2; threads++ {
					b.Run(kernel.BenchName(v, dt, s, threads, "mem=dram"), func(b *testing.B) {
						ws := weightCopies(w, "dram")
						plan := kernel.Choice{Variant: v, Config: v.DefaultConfig(s, threads)}
						b.SetBytes(int64(len(w.Data)))
						i := 0
						for b.Loop() {
							Run(plan, y, x, ws[i], 1, false)
							if i++; i == len(ws) {
								i = 0
							}
						}
						sec := b.Elapsed().Seconds() / float64(b.N)
						b.ReportMetric(float64(len(w.Data))/sec/1e9, "GB/s")
						b.ReportMetric(sec*1e6, "µs/op")
					})
				}
			}
		}
	}
}
