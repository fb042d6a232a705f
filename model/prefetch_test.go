package model

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/mapfile"
)

// TestPrefetch: a mapped model file's MoE blocks prefetch (where the OS
// can; a copied one's never),
// each call naming exactly the experts the tokens routed to in that
// layer; the logits are bit-identical with prefetch on and off; heap
// models (a checkpoint folder, Random) never get a hook.
func TestPrefetch(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			path := convertTiny(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
			mc, err := LoadFile(path, LoadOptions{Files: Files{Weights: WeightsCopy}})
			if err != nil {
				t.Fatal(err)
			}
			if mc.Prefetching() || mc.SetPrefetch(true) {
				t.Error("weights copied into memory: prefetch on")
			}
			mc.Close()
			m, err := LoadFile(path, LoadOptions{Files: Files{Weights: WeightsMap}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got := m.Prefetching(); got != PrefetchSupported {
				t.Fatalf("model file: Prefetching() = %v on an OS where PrefetchSupported = %v", got, PrefetchSupported)
			}
			if !PrefetchSupported {
				t.Skip("no prefetch on this OS")
			}
			// record each block's calls around the installed hook
			calls := make([][]int, len(m.Layers))
			moeLayers := 0
			for l := range m.Layers {
				b := m.Layers[l].MoE
				if b == nil {
					continue
				}
				moeLayers++
				inner := b.Prefetch
				b.Prefetch = func(experts []int) {
					if !slices.IsSorted(experts) {
						t.Errorf("layer %d: Prefetch(%v) not in ascending order", l, experts)
					}
					calls[l] = append(calls[l], experts...)
					inner(experts)
				}
			}
			if moeLayers == 0 {
				t.Fatal("the tiny model has no MoE layer")
			}
			st := m.NewState(0)
			defer st.Close()
			if _, err := m.Prefill(st, c.ids[0]); err != nil {
				t.Fatal(err)
			}
			for _, id := range c.gen[0][:min(3, len(c.gen[0]))] {
				clear(calls)
				before := m.ExpertCounts()
				if _, err := m.Decode([]*State{st}, []int32{id}); err != nil {
					t.Fatal(err)
				}
				since := m.ExpertCountsSince(before)
				for l := range m.Layers {
					if m.Layers[l].MoE == nil {
						continue
					}
					var routed []int
					for e, n := range since[l] {
						if n > 0 {
							routed = append(routed, e)
						}
					}
					if !slices.Equal(calls[l], routed) {
						t.Errorf("layer %d: prefetched %v, the token routed to %v", l, calls[l], routed)
					}
				}
			}

			m.SetPrefetch(true)
			on := runGolden(t, m, c, 0)
			if m.SetPrefetch(false) || m.Prefetching() {
				t.Fatal("SetPrefetch(false) left prefetch on")
			}
			off := runGolden(t, m, c, 0)
			for _, x := range [][2][]float32{{on.logits, off.logits}, {on.decode, off.decode}} {
				for i := range x[0] {
					if math.Float32bits(x[0][i]) != math.Float32bits(x[1][i]) {
						t.Fatalf("logit %d: %v with prefetch, %v without (want bit-identical)", i, x[0][i], x[1][i])
					}
				}
			}
			if !m.SetPrefetch(true) || !m.Prefetching() {
				t.Error("SetPrefetch(true) did not turn prefetch back on")
			}

			heap := mustLoad(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
			if heap.Prefetching() || heap.SetPrefetch(true) || heap.Prefetching() {
				t.Error("a checkpoint folder's model (weights on the heap) prefetches")
			}
			cfg, err := arch.Load(c.f.Dir())
			if err != nil {
				t.Fatal(err)
			}
			r, err := Random(cfg, LoadOptions{Formats: Formats{DType: kernel.Q8}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Prefetching() || r.SetPrefetch(true) {
				t.Error("a random model prefetches")
			}
		})
	}
}

// TestPrefetchEnv: KTUNE_PREFETCH=0 loads a model file without prefetch.
func TestPrefetchEnv(t *testing.T) {
	c := loadTiny(t)[0]
	path := convertTiny(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	t.Setenv(PrefetchEnv, "0")
	m, err := LoadFile(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Prefetching() {
		t.Errorf("%s=0: prefetch on", PrefetchEnv)
	}
	t.Setenv(PrefetchEnv, "1")
	if !PrefetchDefault() {
		t.Errorf("%s=1: default off", PrefetchEnv)
	}
}

// TestWillNeed: willNeed takes any slice of a mapping (unaligned, short,
// empty, spanning chunks) and the pages end up readable with the file's
// bytes.
func TestWillNeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w")
	want := make([]byte, 3*prefetchChunk+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, release, err := mapfile.Map(f, int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	defer release(data)
	var vec []byte
	for _, r := range [][2]int{{0, 0}, {0, 1}, {1, 4095}, {4095, 2}, {100, prefetchChunk + 7}, {0, len(want)}, {len(want) - 3, 3}} {
		willNeed(data[r[0]:r[0]+r[1]], &vec)
	}
	if !slices.Equal(data, want) {
		t.Error("mapped bytes differ from the file's")
	}
}
