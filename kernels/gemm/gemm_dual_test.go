package gemm

import (
	"math"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// TestDualStreams checks every int8-activation variant for one activation
// row against the reference at panel counts around dualMinPanels (7: one
// stream; 8; an odd 17 with the last panel partial; 41), K crossing
// groups and super-blocks (odd and even group counts), on 1, 2, 3 and 7
// threads (shapeThreads; the outputs bit for bit the same at each), gemv
// and gateup, each format the variant serves: where a two-stream kernel
// exists (vnniPanelsDual) a worker's panels run as two halves side by
// side at streams=2 and in order at streams=1: both run at the first
// thread count whatever the machine's default (the others take the
// default) and give the same bits.
func TestDualStreams(t *testing.T) {
	seed := uint64(500)
	ran := 0
	for _, op := range []string{OpGEMV, OpGateUp} {
		o := kernel.LookupOp(op)
		for _, dt := range panelFormats(o.DTypes) {
			for _, v := range kernel.Candidates(op, dt, []kernel.Class{kernel.ClassInt8Act}) {
				if emulatedPortable(v) {
					continue
				}
				// odd and even group counts, each with and without a Q4
				// min (problems with an odd seed have one)
				ks := []int{31, 95, 300, 310, 640}
				if quant.IsK(dt) {
					ks = []int{300, 513}
				}
				for _, n := range []int{7 * 16, 8 * 16, 16*16 + 5, 41*16 - 3} {
					for _, k := range ks {
						if !sampled(int(seed)) {
							seed++
							continue
						}
						s := kernel.MakeShape(shapeKeys, 1, n, k)
						var first []float32 // the first thread count's output: every other must equal it bit for bit
						for ti, threads := range shapeThreads(seed) {
							counts := []int{0} // the default configuration
							if ti == 0 {
								counts = streamCounts(v)
							}
							for _, streams := range counts {
								p, want := sharedProblem(t, o.Name, s, dt, seed)
								cfg := v.DefaultConfig(s, threads)
								if streams > 0 {
									cfg.Params["streams"] = streams
								}
								checkShapeConfig(t, v, dt, s, seed, cfg, want, p)
								got, err := kernel.RunOutput(v, p, cfg)
								if err != nil {
									t.Fatal(err)
								}
								if first == nil {
									first = slices.Clone(got)
								} else if !slices.Equal(math32bits(got), math32bits(first)) {
									t.Errorf("%s at %s dtype=%s threads=%d streams=%d: output differs from the first configuration's", v.ID(), s, dt, threads, streams)
								}
								ran++
							}
						}
						seed++
					}
				}
			}
		}
	}
	t.Logf("%d cases", ran)
}

// streamCounts is the streams values to run v at: each of its streams
// parameter (one and two whatever this machine's default), or the
// default configuration alone (0) for a variant without it.
func streamCounts(v *kernel.Variant) []int {
	if p := v.Param("streams"); p != nil {
		return p.Values
	}
	return []int{0}
}

// math32bits is v's bit patterns (a NaN equals itself only bit for bit).
func math32bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}
