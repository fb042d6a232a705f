package model

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model/kfile"
)

// bufReader reads a model file's parts through the page cache (a test's
// temporary folder may not take O_DIRECT); corrupt, if set, may change a
// read's bytes or fail it.
type bufReader struct {
	fs      []*os.File
	corrupt func(part int, off int64, b []byte) error
	delay   time.Duration // before each read: a slow disk
	reads   atomic.Int64
}

func (r *bufReader) ReadAt(part int, dst []byte, off int64) (int, error) {
	r.reads.Add(1)
	time.Sleep(r.delay)
	n, err := r.fs[part].ReadAt(dst, off)
	if err == io.EOF {
		err = nil
	}
	if err == nil && r.corrupt != nil {
		err = r.corrupt(part, off, dst[:n])
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

func (r *bufReader) Close() error {
	var err error
	for _, f := range r.fs {
		err = errors.Join(err, f.Close())
	}
	return err
}

// openBuf is the test's open function for the parts at paths.
func openBuf(t *testing.T, r *bufReader, paths ...string) func() (blockReader, error) {
	return func() (blockReader, error) {
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			r.fs = append(r.fs, f)
		}
		return r, nil
	}
}

// checkCacheViews: every expert with a slot has its matrices in that
// slot's bytes (the file's bytes), every other one its views of the
// mapping.
func checkCacheViews(t *testing.T, c *expertCache) {
	t.Helper()
	for g := range c.experts {
		x := &c.experts[g]
		for i, q := range x.mats {
			if x.slot < 0 {
				if unsafe.SliceData(q.Data) != unsafe.SliceData(x.orig[i]) {
					t.Fatalf("expert %d (no slot): matrix %d is not its view of the mapping", g, i)
				}
				continue
			}
			if c.owner[x.slot] != int32(g) {
				t.Fatalf("expert %d: slot %d is owned by %d", g, x.slot, c.owner[x.slot])
			}
			if string(q.Data) != string(x.orig[i]) {
				t.Fatalf("expert %d: matrix %d in slot %d differs from the file", g, i, x.slot)
			}
		}
	}
}

// cacheCase loads the tiny model twice from one mapped model file (or
// GGUF), without the cache, and returns the models and a locate function.
type cacheModel struct {
	name   string
	load   func(t *testing.T) *Model
	locate func(m *Model) func([]byte) (int, int64, bool)
	paths  []string
}

func cacheModels(t *testing.T) (*tinyCase, []cacheModel) {
	c := loadTiny(t)[0]
	path := convertTiny(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}})
	out := []cacheModel{{
		name: "kt",
		load: func(t *testing.T) *Model {
			m, err := LoadFile(path, LoadOptions{Files: Files{Weights: WeightsMap}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m
		},
		locate: func(m *Model) func([]byte) (int, int64, bool) {
			f := m.closer.(*kfile.File)
			return func(b []byte) (int, int64, bool) { off, ok := f.Offset(b); return 0, off, ok }
		},
		paths: []string{path},
	}}
	if gc, _, quantized := ggufFilesMaybe(t); gc != nil && len(quantized) > 0 {
		c = gc
		p := quantized[0]
		out = append(out, cacheModel{
			name: "gguf-" + filepath.Base(p),
			load: func(t *testing.T) *Model {
				return mustLoadGGUF(t, p, LoadOptions{Files: Files{Weights: WeightsMap, NoVerify: true}})
			},
			locate: func(m *Model) func([]byte) (int, int64, bool) { return m.closer.(*GGUFSource).File.Locate },
			paths:  []string{p},
		})
	}
	return c, out
}

// TestExpertCache: a model whose routed experts run from a cache of 1, a
// few or all of their slots gives logits bit-identical to the mapped
// model's, on a model file and a GGUF; it reads a miss, finds a hit, and
// keeps each expert either in its slot (the file's bytes) or on its view
// of the mapping. Reads that fail leave the experts on the mapping (same
// logits, counted); slow reads are waited for; reads that return wrong
// bytes change the logits (the comparison sees them).
func TestExpertCache(t *testing.T) {
	t.Setenv(ExpertCacheEnv, "0")
	t.Setenv(PreloadEnv, "0")
	tc, models := cacheModels(t)
	for _, cm := range models {
		t.Run(cm.name, func(t *testing.T) {
			ref := runGolden(t, cm.load(t), tc, 0)
			m := cm.load(t)
			n := len(m.newExpertCache(cm.locate(m)).experts)
			same := func(got runOut) bool {
				for _, x := range [][2][]float32{{got.logits, ref.logits}, {got.decode, ref.decode}} {
					for i := range x[0] {
						if math.Float32bits(x[0][i]) != math.Float32bits(x[1][i]) {
							return false
						}
					}
				}
				return true
			}
			run := func(slots int, r *bufReader) (runOut, ExpertCacheStats) {
				t.Helper()
				c := m.newExpertCache(cm.locate(m))
				if err := c.start(slots, openBuf(t, r, cm.paths...)); err != nil {
					t.Fatal(err)
				}
				m.cache = c
				if !m.SetPrefetch(true) {
					t.Fatal("SetPrefetch(true) with a cache: off")
				}
				got := runGolden(t, m, tc, 0)
				if r.corrupt == nil {
					checkCacheViews(t, c)
				}
				st := m.ExpertCache()
				if err := m.closeExpertCache(); err != nil {
					t.Fatal(err)
				}
				checkCacheViews(t, c) // every expert back on the mapping
				return got, st
			}
			misses := map[int]int64{}
			for _, slots := range []int{1, 5, n} {
				got, st := run(slots, &bufReader{})
				misses[slots] = st.Misses
				if !same(got) {
					t.Errorf("%d slots of %d: logits differ from the mapped model's", slots, n)
				}
				if st.Slots != slots || st.Misses == 0 || st.ReadBytes == 0 || st.ReadErrs != 0 {
					t.Errorf("%d slots: %+v", slots, st)
				}
				if slots == n && (st.Hits == 0 || st.Misses > int64(n)) {
					t.Errorf("all %d experts fit: %d hits, %d misses", n, st.Hits, st.Misses)
				}
			}
			if misses[5] <= 5 {
				t.Errorf("5 slots: %d misses (want more: evictions read again)", misses[5])
			}
			// a slow disk: experts computed before their reads end would differ
			if got, st := run(5, &bufReader{delay: 2 * time.Millisecond}); !same(got) || st.Misses == 0 {
				t.Errorf("slow reads: same logits %v, %+v", same(got), st)
			}
			planted := errors.New("planted")
			got, st := run(5, &bufReader{corrupt: func(int, int64, []byte) error { return planted }})
			if !same(got) || st.ReadErrs == 0 {
				t.Errorf("failing reads: same logits %v, %d read errors", same(got), st.ReadErrs)
			}
			got, _ = run(n, &bufReader{corrupt: func(_ int, _ int64, b []byte) error {
				for i := range b {
					b[i] ^= 0x10
				}
				return nil
			}})
			if same(got) {
				t.Error("reads of wrong bytes: the logits did not change")
			}
		})
	}
}

// TestExpertCacheFill: the preload fills the free slots (expert 0 of every
// layer first) and the decode then finds them (hits, nothing read), with
// the same logits; a stopped fill reads nothing.
func TestExpertCacheFill(t *testing.T) {
	t.Setenv(ExpertCacheEnv, "0")
	t.Setenv(PreloadEnv, "0")
	tc, models := cacheModels(t)
	cm := models[0]
	ref := runGolden(t, cm.load(t), tc, 0)
	m := cm.load(t)
	c := m.newExpertCache(cm.locate(m))
	n := len(c.experts)
	r := &bufReader{}
	if err := c.start(n, openBuf(t, r, cm.paths...)); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	stop.Store(true)
	if got := c.fill(c.fillOrder(m), &stop); got != 0 || r.reads.Load() != 0 {
		t.Fatalf("a stopped fill read %d bytes", got)
	}
	stop.Store(false)
	order := c.fillOrder(m)
	if len(order) != n {
		t.Fatalf("fill order of %d experts, want %d", len(order), n)
	}
	seen := map[int]bool{}
	round := func(g int) int { // the expert's index in its layer
		e := -1
		for _, b := range c.base {
			if b >= 0 && b <= g {
				e = g - b
			}
		}
		return e
	}
	for i, g := range order {
		if seen[g] {
			t.Fatalf("expert %d twice in the fill order", g)
		}
		seen[g] = true
		if i > 0 && round(g) < round(order[i-1]) {
			t.Fatalf("fill order %v: not in rounds", order)
		}
	}
	var want int64
	for g := range c.experts {
		for _, b := range c.experts[g].orig {
			want += int64(len(b))
		}
	}
	if got := c.fill(order, &stop); got != want {
		t.Errorf("fill read %d bytes, want %d", got, want)
	}
	m.cache = c
	m.SetPrefetch(true)
	reads := r.reads.Load()
	got := runGolden(t, m, tc, 0)
	if r.reads.Load() != reads {
		t.Errorf("%d reads after a full fill", r.reads.Load()-reads)
	}
	st := m.ExpertCache()
	if st.Misses != 0 || st.Hits == 0 {
		t.Errorf("after a full fill: %+v", st)
	}
	for i := range got.logits {
		if math.Float32bits(got.logits[i]) != math.Float32bits(ref.logits[i]) {
			t.Fatalf("logit %d: %v filled, %v mapped", i, got.logits[i], ref.logits[i])
		}
	}
	checkCacheViews(t, c)
}

// TestCacheSlots: the cache is made only where the experts do not fit
// beside the hot weights and enough slots do; forced, where they fit too.
func TestCacheSlots(t *testing.T) {
	const slot = 1 << 20
	for _, c := range []struct {
		mode          int
		budget, total int64
		n, want       int
	}{
		{0, 1000 * slot, 900 * slot, 900, 0},                      // they fit
		{0, 900 * slot, 900 * slot, 900, 0},                       // exactly
		{0, 500 * slot, 900 * slot, 900, 500},                     // half of them
		{0, (expertCacheMinSlots - 1) * slot, 900 * slot, 900, 0}, // too few slots
		{0, expertCacheMinSlots * slot, 900 * slot, 900, expertCacheMinSlots},
		{0, -5, 900 * slot, 900, 0},                  // no memory
		{1, 1000 * slot, 900 * slot, 900, 900},       // forced where they fit
		{1, 0, 900 * slot, 900, expertCacheMinSlots}, // forced with no budget
		{1, 0, 10 * slot, 10, 10},                    // forced, few experts
	} {
		if got := cacheSlots(c.mode, c.budget, c.total, slot, c.n); got != c.want {
			t.Errorf("cacheSlots(%d, %d MiB, %d MiB, 1 MiB, %d) = %d, want %d", c.mode, c.budget>>20, c.total>>20, c.n, got, c.want)
		}
	}
}

// ggufFilesMaybe is ggufFiles, or nothing where the golden folder has no
// GGUF file.
func ggufFilesMaybe(t *testing.T) (*tinyCase, string, []string) {
	dir, err := golden.Dir()
	if err != nil {
		return nil, "", nil
	}
	if p, _ := filepath.Glob(filepath.Join(dir, "gguf", "*.gguf")); len(p) == 0 {
		return nil, "", nil
	}
	return ggufFiles(t)
}

// TestLocate: a GGUF file's Locate gives the part and file offset of a
// tensor's bytes, and nothing for bytes outside the mapping.
func TestLocate(t *testing.T) {
	_, _, quantized := ggufFilesMaybe(t)
	if len(quantized) == 0 {
		t.Skip("no quantized GGUF golden file")
	}
	f, err := gguf.Open(quantized[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.ReadFile(quantized[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range f.Tensors[:min(8, len(f.Tensors))] {
		b, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		part, off, ok := f.Locate(b)
		if !ok || part != 0 || string(raw[off:off+int64(len(b))]) != string(b) {
			t.Errorf("%s: Locate = %d, %d, %v: not the tensor's bytes in the file", ti.Name, part, off, ok)
		}
	}
	if _, _, ok := f.Locate(make([]byte, 8)); ok {
		t.Error("heap bytes located in the file")
	}
}
