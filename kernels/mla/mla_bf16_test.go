package mla

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

// bf16Caches returns, for each context, the same tokens in an f32, a BF16
// and a q8 cache at Kimi's widths (R = 512, DR = 64).
func bf16Caches(r *rand.Rand, ctx int) map[kernel.DType]*Cache {
	kv, pe := randn(r, ctx*kimiR, 1), randn(r, ctx*64, 2)
	out := map[kernel.DType]*Cache{}
	for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8} {
		c, err := NewCache(kimiR, 64, dt)
		if err != nil {
			panic(err)
		}
		for j := 0; j < ctx; j++ {
			c.Append(kv[j*kimiR:(j+1)*kimiR], pe[j*64:(j+1)*64])
		}
		out[dt] = c
	}
	return out
}

const kimiR = 512 // Kimi Linear's latent width, the assembly kernels' R

// TestDecodeBF16Act: every bf16act decode variant at R = 512, DR = 64, over
// contexts 1, 2, 63, 64, 65, 1000 (short: 1, 2, 63, 65, 300; pages of 256
// tokens: blocks cross pages), with BF16, f32 and q8 caches, several
// kb/split/thread settings: within the class tolerance of the float64 reference on the same cache,
// and over an f32 cache bit-for-bit what it gives over the BF16 cache of
// the same tokens (both round the rows to nearest even).
func TestDecodeBF16Act(t *testing.T) {
	kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, v *kernel.Variant) {
		if v.Class != kernel.ClassBF16Act {
			t.Skipf("class %s", v.Class)
		}
		fn := v.Impl.(decodeFn)
		tol := kernel.LookupOp(OpDecode).Tolerance(v.Class, nil)
		r := rand.New(rand.NewPCG(7, 7))
		ctxs := []int{1, 2, 63, 64, 65, 1000}
		if testing.Short() { // still blocks that cross a page (256 tokens) with split 2 and 8
			ctxs = []int{1, 2, 63, 65, 300}
		}
		for _, ctx := range ctxs {
			caches := bf16Caches(r, ctx)
			for _, nh := range []int{4, 32} {
				q := randn(r, nh*576, 0.3)
				dec := func(c *Cache, f decodeFn, threads int, prm kernel.Values) []float32 {
					d := &Decode{NH: nh, R: 512, DR: 64, Scale: float32(1 / math.Sqrt(192)), Q: q, Caches: []*Cache{c}, Z: make([]float32, nh*512)}
					f(d, threads, prm)
					return d.Z
				}
				want := map[kernel.DType][]float32{} // the reference once per cache, not per setting
				for dt, c := range caches {
					want[dt] = dec(c, decodeRef, 1, nil)
				}
				for _, prm := range []kernel.Values{{"kb": 64, "split": 2}, {"kb": 16, "split": 1}, {"kb": 128, "split": 8}} {
					label := fmt.Sprintf("ctx=%d nh=%d kb=%d split=%d", ctx, nh, prm["kb"], prm["split"])
					z16 := dec(caches[kernel.BF16], fn, 2, prm)
					z32 := dec(caches[kernel.F32], fn, 2, prm)
					for _, dt := range []kernel.DType{kernel.BF16, kernel.F32, kernel.Q8} {
						got := z16
						switch dt {
						case kernel.F32:
							got = z32
						case kernel.Q8:
							got = dec(caches[kernel.Q8], fn, 1, prm)
						}
						d := kerneltest.Close(t, label+" cache="+string(dt), got, want[dt], tol)
						if ctx == ctxs[len(ctxs)-1] && nh == 32 && prm["kb"] == 64 {
							t.Logf("%s cache=%s: rel RMS %.2e, max rel %.2e vs float64 reference", label, dt, d.RelRMS, d.MaxRel)
						}
					}
					for i := range z16 {
						if math.Float32bits(z16[i]) != math.Float32bits(z32[i]) {
							t.Fatalf("%s: f32 cache z[%d] = %v, BF16 cache %v", label, i, z32[i], z16[i])
						}
					}
				}
			}
		}
	})
}

// TestDecodeBF16LargeScores: scores far beyond exp's range (and BF16's
// precision) give finite outputs inside the hull of the value rows as
// the kernel sees them (rounded to BF16).
func TestDecodeBF16LargeScores(t *testing.T) {
	kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, v *kernel.Variant) {
		if v.Class != kernel.ClassBF16Act {
			t.Skipf("class %s", v.Class)
		}
		r := rand.New(rand.NewPCG(9, 9))
		caches := bf16Caches(r, 1000)
		q := randn(r, 8*576, 50)
		for _, dt := range []kernel.DType{kernel.BF16, kernel.F32} {
			c := caches[dt]
			d := &Decode{NH: 8, R: 512, DR: 64, Scale: 1, Q: q, Caches: []*Cache{c}, Z: make([]float32, 8*512)}
			v.Impl.(decodeFn)(d, 2, v.DefaultConfig(nil, 2).Params)
			rows := make([]float32, c.Len()*576)
			caches[kernel.BF16].Block(0, c.Len(), rows)
			for i, z := range d.Z {
				lo, hi := math.Inf(1), math.Inf(-1)
				for j := 0; j < c.Len(); j++ {
					x := float64(rows[j*576+i%512])
					lo, hi = min(lo, x), max(hi, x)
				}
				if math.IsNaN(float64(z)) || float64(z) < lo-1e-3 || float64(z) > hi+1e-3 {
					t.Fatalf("%s cache: z[%d] = %v outside [%v, %v]", dt, i, z, lo, hi)
				}
			}
		}
	})
}
