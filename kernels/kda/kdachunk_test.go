package kda

import (
	"fmt"
	"math"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// chunkVariants are the ISA chunked prefill kernels these tests hold
// against chunkGeneric and the recurrence.
var chunkVariants = []string{"avx512_chunk", "neon_chunk", "sve_chunk"}

// chunkSet gives the chunk sizes a test runs at its i-th shape, out of all:
// every one of them, or one, rotating with i (every shape still runs, and
// every size across the shapes).
type chunkSet func(i int, all []int) []int

// forChunkVariants runs f on each of chunkVariants as a subtest, skipping
// those this build or CPU lacks (failing instead when KTUNE_REQUIRE covers
// their requirements). In short mode a variant that needs SVE runs each
// shape at one chunk size: qemu (the CI's arm64) emulates SVE floating
// point lane by lane in soft float, about 20× slower than NEON, and the
// SVE tile itself is held to gemmGo at every size by TestGemmSVE.
func forChunkVariants(t *testing.T, f func(t *testing.T, fn headFn, chunks chunkSet)) {
	t.Helper()
	for _, name := range chunkVariants {
		t.Run(name, func(t *testing.T) {
			if _, err := kernel.Lookup(OpPrefill + "/" + name); err != nil {
				// another architecture's form (kernels/all's expectedVariants
				// fails a build that stops registering its own)
				t.Skip(err)
			}
			v := kerneltest.Variant(t, OpPrefill+"/"+name)
			kerneltest.SkipRepeatUnderEmulation(t, v)
			chunks := func(i int, all []int) []int { return all }
			if testing.Short() && v.Requires.Has(cpu.SVE) {
				chunks = func(i int, all []int) []int { return all[i%len(all) : i%len(all)+1] }
			}
			f(t, v.Impl.(headFn), chunks)
		})
	}
}

// TestChunkShapes: each ISA chunked form against the f32 chunked
// generic form and the recurrence on ragged T, K ≠ V, widths that are not
// multiples of 16, every chunk size, from a random initial state.
func TestChunkShapes(t *testing.T) {
	forChunkVariants(t, func(t *testing.T, fn headFn, chunks chunkSet) {
		Ts := []int{1, 2, 15, 16, 17, 31, 33, 48, 63, 64, 65, 100, 130}
		kvs := [][2]int{{128, 128}, {32, 48}, {17, 33}, {64, 16}, {48, 80}, {128, 64}, {16, 128}, {128, 256}, {160, 48}}
		if testing.Short() { // under qemu: the ragged and K > 128 shapes
			Ts = []int{1, 17, 65, 130}
			kvs = [][2]int{{128, 128}, {17, 33}, {48, 80}, {160, 48}}
		}
		tol := tolerance(kernel.ClassF32, nil)
		i := 0
		for _, kv := range kvs {
			for _, T := range Ts {
				base := randomTensors(uint64(T*1000+kv[0]), 2, T, 2, kv[0], kv[1], -5)
				rec := clone(base)
				run(&rec, recurrentGeneric, 2, kernel.Values{"strip": 16})
				i++
				for _, c := range chunks(i, chunkParam.Values) {
					gen, got := clone(base), clone(base)
					run(&gen, chunkGeneric, 1, kernel.Values{"chunk": c})
					run(&got, fn, 2, kernel.Values{"chunk": c})
					label := fmt.Sprintf("K=%d V=%d T=%d chunk=%d", kv[0], kv[1], T, c)
					kerneltest.Close(t, label+" o vs generic_chunk", got.O, gen.O, tol)
					kerneltest.Close(t, label+" state vs generic_chunk", got.State, gen.State, tol)
					kerneltest.Close(t, label+" o vs recurrence", got.O, rec.O, tol)
					kerneltest.Close(t, label+" state vs recurrence", got.State, rec.State, tol)
				}
			}
		}
	})
}

// TestChunkLong: long sequences at the Kimi head size against the
// recurrence, with mild and extreme (g ≈ −50 per token) gates.
func TestChunkLong(t *testing.T) {
	forChunkVariants(t, func(t *testing.T, fn headFn, chunks chunkSet) {
		Ts := []int{1000, 4096}
		if testing.Short() {
			Ts = []int{300}
		}
		tol := tolerance(kernel.ClassF32, nil)
		i := 0
		for _, T := range Ts {
			for _, gMin := range []float64{-0.5, -50} {
				base := randomTensors(11, 1, T, 2, 128, 128, gMin)
				want := clone(base)
				run(&want, recurrentGeneric, 2, kernel.Values{"strip": 32})
				i++
				for _, c := range chunks(i, chunkParam.Values) {
					got := clone(base)
					run(&got, fn, 2, kernel.Values{"chunk": c})
					label := fmt.Sprintf("T=%d gmin=%v chunk=%d", T, gMin, c)
					kerneltest.Close(t, label+" o", got.O, want.O, tol)
					kerneltest.Close(t, label+" state", got.State, want.State, tol)
				}
			}
		}
	})
}

// TestChunkGateMix: per-channel mixes of g = 0 (no decay), g ≈ −50
// and g ≈ −80 (a full forget within a token), which would overflow a
// factorised exp(Γ_r)·exp(−Γ_s) and produce subnormals in the products.
func TestChunkGateMix(t *testing.T) {
	forChunkVariants(t, func(t *testing.T, fn headFn, chunks chunkSet) {
		tol := tolerance(kernel.ClassF32, nil)
		for shape, kv := range [][2]int{{128, 128}, {32, 48}} {
			base := randomTensors(9, 1, 200, 2, kv[0], kv[1], -80)
			for i := range base.G {
				switch i % 5 {
				case 0:
					base.G[i] = 0
				case 1:
					base.G[i] = -50
				case 2:
					base.G[i] = -1e-3
				}
			}
			want := clone(base)
			run(&want, recurrentGeneric, 1, kernel.Values{"strip": 16})
			for _, c := range chunks(shape, chunkParam.Values) {
				got := clone(base)
				run(&got, fn, 2, kernel.Values{"chunk": c})
				for i, x := range append(append([]float32(nil), got.O...), got.State...) {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						t.Fatalf("K=%d chunk=%d: non-finite value at %d", kv[0], c, i)
					}
				}
				label := fmt.Sprintf("K=%d V=%d chunk=%d", kv[0], kv[1], c)
				kerneltest.Close(t, label+" o", got.O, want.O, tol)
				kerneltest.Close(t, label+" state", got.State, want.State, tol)
			}
		}
	})
}

// TestChunkContinuation: prefill(T1) then prefill(T2) from the
// carried state equals prefill(T1+T2), across chunk boundaries and ragged
// pieces; and prefill(T1) then T2 decode steps equals the recurrence.
func TestChunkContinuation(t *testing.T) {
	forChunkVariants(t, func(t *testing.T, fn headFn, chunks chunkSet) {
		tol := tolerance(kernel.ClassF32, nil)
		sizes, splits := chunkParam.Values, [][2]int{{37, 9}, {64, 64}, {1, 130}, {100, 17}}
		if testing.Short() { // under qemu
			sizes, splits = []int{16, 64}, [][2]int{{37, 9}, {100, 17}}
		}
		for i, split := range splits {
			for _, c := range chunks(i, sizes) {
				T1, T2 := split[0], split[1]
				whole := randomTensors(4, 2, T1+T2, 2, 128, 96, -5)
				want := clone(whole)
				run(&want, fn, 2, kernel.Values{"chunk": c})
				ref := clone(whole)
				run(&ref, recurrentGeneric, 2, kernel.Values{"strip": 32})
				got := clone(whole)
				first := slice(&got, 0, T1)
				run(&first, fn, 2, kernel.Values{"chunk": c})
				rest := slice(&got, T1, T1+T2)
				rest.State = first.State
				run(&rest, fn, 1, kernel.Values{"chunk": c})
				o := regroup(append(first.O, rest.O...), got, T1, T2)
				label := fmt.Sprintf("chunk=%d T1=%d T2=%d", c, T1, T2)
				kerneltest.Close(t, label+" o vs whole", o, want.O, tol)
				kerneltest.Close(t, label+" state vs whole", rest.State, want.State, tol)
				kerneltest.Close(t, label+" o vs recurrence", o, ref.O, tol)
				kerneltest.Close(t, label+" state vs recurrence", rest.State, ref.State, tol)

				dec := clone(whole)
				first = slice(&dec, 0, T1)
				run(&first, fn, 2, kernel.Values{"chunk": c})
				rest = slice(&dec, T1, T1+T2)
				rest.State = first.State
				decodeAll(&rest, recurrentGeneric, kernel.Config{Threads: 2, Params: kernel.Values{"strip": 16}})
				o = regroup(append(first.O, rest.O...), dec, T1, T2)
				kerneltest.Close(t, label+" then decode: o", o, ref.O, tol)
				kerneltest.Close(t, label+" then decode: state", rest.State, ref.State, tol)
			}
		}
	})
}

// TestChunkZeroState: a fresh sequence (zero state) with zero values
// stays exactly zero (the padding is exact).
func TestChunkZeroState(t *testing.T) {
	forChunkVariants(t, func(t *testing.T, fn headFn, _ chunkSet) {
		for _, kv := range [][2]int{{128, 128}, {17, 33}} {
			tn := randomTensors(2, 1, 70, 1, kv[0], kv[1], -3)
			clear(tn.State)
			clear(tn.Vv)
			run(&tn, fn, 1, kernel.Values{"chunk": 32})
			for i, x := range append(tn.O, tn.State...) {
				if x != 0 {
					t.Fatalf("K=%d V=%d: value %v at %d, want 0", kv[0], kv[1], x, i)
				}
			}
		}
	})
}

// TestChunkGuards: o and the state sit between NaN guard cells at
// unaligned offsets; nothing outside them is written.
func TestChunkGuards(t *testing.T) {
	forChunkVariants(t, func(t *testing.T, fn headFn, chunks chunkSet) {
		tol := tolerance(kernel.ClassF32, nil)
		for i, sh := range [][3]int{{70, 128, 128}, {17, 17, 33}, {64, 32, 48}, {33, 128, 64}} {
			T, K, V := sh[0], sh[1], sh[2]
			base := randomTensors(uint64(20+i), 1, T, 2, K, V, -5)
			want := clone(base)
			run(&want, chunkGeneric, 1, kernel.Values{"chunk": 16})
			for _, c := range chunks(i, chunkParam.Values) {
				got := clone(base)
				og, sg := kerneltest.NewGuarded(len(got.O), (i+1)%4), kerneltest.NewGuarded(len(got.State), i%4)
				copy(sg.Data(), got.State)
				got.O, got.State = og.Data(), sg.Data()
				run(&got, fn, 2, kernel.Values{"chunk": c})
				og.CheckGuards(t)
				sg.CheckGuards(t)
				label := fmt.Sprintf("T=%d K=%d V=%d chunk=%d", T, K, V, c)
				kerneltest.Close(t, label+" o", got.O, want.O, tol)
				kerneltest.Close(t, label+" state", got.State, want.State, tol)
			}
		}
	})
}

// TestChunkGEMMDriver: chunkGEMM's driver over the plain-Go gemm against
// chunkGeneric and the recurrence on every architecture (the ISA tiles
// that plug into it are held to gemmGo by their own tests).
func TestChunkGEMMDriver(t *testing.T) {
	fn := chunkGEMM(gemmGo)
	tol := tolerance(kernel.ClassF32, nil)
	for _, kv := range [][2]int{{32, 48}, {17, 33}, {64, 16}} {
		for _, T := range []int{1, 17, 65} {
			base := randomTensors(uint64(T*100+kv[0]), 2, T, 2, kv[0], kv[1], -5)
			rec := clone(base)
			run(&rec, recurrentGeneric, 1, kernel.Values{"strip": 16})
			for _, c := range chunkParam.Values {
				gen, got := clone(base), clone(base)
				run(&gen, chunkGeneric, 1, kernel.Values{"chunk": c})
				run(&got, fn, 1, kernel.Values{"chunk": c})
				label := fmt.Sprintf("K=%d V=%d T=%d chunk=%d", kv[0], kv[1], T, c)
				kerneltest.Close(t, label+" o vs generic_chunk", got.O, gen.O, tol)
				kerneltest.Close(t, label+" state vs generic_chunk", got.State, gen.State, tol)
				kerneltest.Close(t, label+" o vs recurrence", got.O, rec.O, tol)
				kerneltest.Close(t, label+" state vs recurrence", got.State, rec.State, tol)
			}
		}
	}
}
