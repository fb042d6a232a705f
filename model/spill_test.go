package model

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/kernels/mla"
)

// smallPages makes st's MLA caches page every 3 tokens, so that the tiny
// model's short prompts cross page boundaries.
func smallPages(st *State) {
	for _, c := range st.mla {
		if c != nil {
			c.PageTokens = 3
		}
	}
}

// runState is runGolden's protocol on a given state: all prompt logits,
// then the golden greedy ids decoded one at a time.
func runState(t *testing.T, m *Model, st *State, c *tinyCase, b int) (logits, decode []float32) {
	t.Helper()
	logits, err := m.PrefillWith(st, c.ids[b], PrefillOptions{AllLogits: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range c.gen[b] {
		lg, err := m.Decode([]*State{st}, []int32{id})
		if err != nil {
			t.Fatal(err)
		}
		decode = append(decode, lg[0]...)
	}
	return logits, decode
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func dirEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("spill folder %s holds %v", dir, ents)
	}
}

// TestCacheSpill: with CacheSpillDir the engine computes bit for bit what
// the heap cache computes (every cache dtype, pages of 3 tokens), so the
// golden logits and greedy ids are reproduced; the spilled pages are
// reported as file-backed, and the folder stays empty.
func TestCacheSpill(t *testing.T) {
	cases := loadTiny(t)
	if !mla.FileAllocatorSupported {
		if _, err := Load(cases[0].f.Dir(), LoadOptions{Memory: Memory{CacheSpillDir: t.TempDir()}}); err == nil {
			t.Fatal("CacheSpillDir accepted on an OS without file-backed pages")
		}
		t.Skip("file-backed pages are not supported here")
	}
	for _, c := range cases {
		for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8} {
			t.Run(fmt.Sprintf("%s/%s", c.f.Name(), dt), func(t *testing.T) {
				dir := t.TempDir()
				heap := mustLoad(t, c.f.Dir(), LoadOptions{Memory: Memory{CacheDType: dt}})
				spill := mustLoad(t, c.f.Dir(), LoadOptions{Memory: Memory{CacheDType: dt, CacheSpillDir: dir}})
				if r := spill.Memory(); r.MLACacheSpillDir != dir || r.MLACacheFile == 0 || r.Budgeted != heap.Memory().Budgeted-r.MLACacheFile {
					t.Errorf("memory report with spill: %+v (heap: %+v)", r, heap.Memory())
				}
				t.Log(spill.Memory())
				for b := 0; b < c.B; b++ {
					hs, ss := heap.NewState(0), spill.NewState(0)
					smallPages(hs)
					smallPages(ss)
					hl, hd := runState(t, heap, hs, c, b)
					sl, sd := runState(t, spill, ss, c, b)
					if !bitsEqual(sl, hl) || !bitsEqual(sd, hd) {
						d1, _, _ := golden.MaxAbsDiff(sl, hl)
						d2, _, _ := golden.MaxAbsDiff(sd, hd)
						t.Errorf("b%d: spilled cache differs from the heap cache: logits max diff %.3g, decode %.3g", b, d1, d2)
					}
					if dt == kernel.F32 {
						TV, nV := c.T*c.V, c.nDecode*c.V
						golden.Check(t, fmt.Sprintf("b%d logits", b), sl, c.logits[b*TV:(b+1)*TV], tolLogits)
						golden.Check(t, fmt.Sprintf("b%d decode_logits", b), sd, c.decode[b*nV:(b+1)*nV], tolLogits)
						got := []int32{int32(argmax(sl[(c.T-1)*c.V:]))}
						for i := 0; i+1 < c.nDecode; i++ {
							got = append(got, int32(argmax(sd[i*c.V:(i+1)*c.V])))
						}
						if fmt.Sprint(got) != fmt.Sprint(c.gen[b]) {
							t.Errorf("b%d greedy ids %v, want %v", b, got, c.gen[b])
						}
					}
					hh, hf := hs.BytesByTier()
					sh, sf := ss.BytesByTier()
					if hf != 0 || sf == 0 || sh+sf != hh || ss.Bytes() != hs.Bytes() {
						t.Errorf("bytes by tier: heap state %d+%d, spilled state %d+%d", hh, hf, sh, sf)
					}
					dirEmpty(t, dir)
					if err := ss.Close(); err != nil {
						t.Fatal(err)
					}
					if _, f := ss.BytesByTier(); ss.Len() != 0 || f != 0 {
						t.Errorf("after Close: %d tokens, %d file-backed bytes", ss.Len(), f)
					}
					// a closed state is empty and usable again (a new file)
					smallPages(ss)
					if sl2, sd2 := runState(t, spill, ss, c, b); !bitsEqual(sl2, hl) || !bitsEqual(sd2, hd) {
						t.Errorf("b%d: a state reused after Close differs", b)
					}
					ss.Close()
					hs.Close()
				}
				dirEmpty(t, dir)
			})
		}
	}
}

// TestCacheSpillErrors: a spill folder that is missing at load is refused;
// one that disappears before the first token makes Prefill fail with the
// reason, leaving the state empty.
func TestCacheSpillErrors(t *testing.T) {
	if !mla.FileAllocatorSupported {
		t.Skip("file-backed pages are not supported here")
	}
	tiny := loadTiny(t)[0].f.Dir()
	if _, err := Load(tiny, LoadOptions{Memory: Memory{CacheSpillDir: "/nonexistent/ktune-spill"}}); err == nil || !strings.Contains(err.Error(), "spill") {
		t.Errorf("missing folder at load: %v", err)
	}
	dir := t.TempDir() + "/spill"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := mustLoad(t, tiny, LoadOptions{Memory: Memory{CacheSpillDir: dir}})
	st := m.NewState(0)
	os.Remove(dir)
	_, err := m.Prefill(st, []int32{1, 2, 3})
	if err == nil || !strings.Contains(err.Error(), "MLA cache") {
		t.Fatalf("prefill with the spill folder gone: %v", err)
	}
	t.Log(err)
	if st.Len() != 0 {
		t.Errorf("state holds %d tokens after the failed prefill", st.Len())
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Prefill(st, []int32{1, 2, 3}); err != nil {
		t.Errorf("prefill once the folder is back: %v", err)
	}
	st.Close()
}

// TestCacheSpillBudget: the memory check leaves a spilled cache out, so a
// context whose cache would not fit in RAM loads with a spill folder.
func TestCacheSpillBudget(t *testing.T) {
	if !mla.FileAllocatorSupported {
		t.Skip("file-backed pages are not supported here")
	}
	tiny := loadTiny(t)[0].f.Dir()
	opt := LoadOptions{Memory: Memory{MaxTokens: 1 << 22, AvailableMemory: 64 << 20}}
	if _, err := Load(tiny, opt); err == nil || !strings.Contains(err.Error(), "cache spill folder") {
		t.Fatalf("a 4M-token heap cache in 64 MiB: %v", err)
	}
	opt.CacheSpillDir = t.TempDir()
	m := mustLoad(t, tiny, opt)
	if r := m.Memory(); r.Budgeted > 64<<20 || r.MLACacheFile < 1<<30 {
		t.Errorf("spilled budget: %v", r)
	}
}
