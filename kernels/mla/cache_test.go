package mla

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

func newFileAlloc(t *testing.T, dir string, chunk int) *FileAllocator {
	t.Helper()
	a, err := NewFileAllocator(dir)
	if !FileAllocatorSupported {
		if err == nil || !strings.Contains(err.Error(), runtime.GOOS) {
			t.Fatalf("NewFileAllocator on %s: %v, want an error naming the OS", runtime.GOOS, err)
		}
		t.Skipf("file-backed pages are not supported on %s", runtime.GOOS)
	}
	if err != nil {
		t.Fatal(err)
	}
	if chunk > 0 {
		a.chunk = chunk
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d is %v, want %v (bit-identical)", what, i, got[i], want[i])
		}
	}
}

// TestFileCacheIdentical: a cache over file-backed pages holds, views and
// decodes bit for bit what the heap cache does, for every dtype and
// contexts crossing page and mapping boundaries.
func TestFileCacheIdentical(t *testing.T) {
	for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8} {
		for _, tc := range []struct{ pt, n, r, dr, chunk int }{
			{16, 50, 40, 8, 8 << 10}, // 3+ pages, several small mappings
			{DefaultPageTokens, 600, 64, 16, 0},
			{7, 22, 33, 5, 4 << 10}, // odd widths: Q8 rows of 46 bytes
		} {
			t.Run(fmt.Sprintf("%s/pt%d_n%d", dt, tc.pt, tc.n), func(t *testing.T) {
				a := newFileAlloc(t, t.TempDir(), tc.chunk)
				heap, err := NewCache(tc.r, tc.dr, dt)
				if err != nil {
					t.Fatal(err)
				}
				file, err := NewCacheWith(tc.r, tc.dr, dt, a)
				if err != nil {
					t.Fatal(err)
				}
				if heap.FileBacked() || !file.FileBacked() {
					t.Fatalf("FileBacked: heap %v, file %v", heap.FileBacked(), file.FileBacked())
				}
				heap.PageTokens, file.PageTokens = tc.pt, tc.pt
				r := rand.New(rand.NewPCG(uint64(tc.n), 9))
				W := tc.r + tc.dr
				for j := 0; j < tc.n; j++ {
					kv, pe := randn(r, tc.r, 1), randn(r, tc.dr, 2)
					heap.Append(kv, pe)
					if err := file.AppendErr(kv, pe); err != nil {
						t.Fatal(err)
					}
				}
				if heap.Bytes() != file.Bytes() || a.Bytes() < file.Bytes() {
					t.Errorf("bytes: heap %d, file %d, allocator %d", heap.Bytes(), file.Bytes(), a.Bytes())
				}
				hb, fb := make([]float32, tc.n*W), make([]float32, tc.n*W)
				heap.Block(0, tc.n, hb)
				file.Block(0, tc.n, fb)
				sameBits(t, "Block", fb, hb)
				for _, v := range [][2]int{{0, 1}, {0, tc.pt}, {tc.pt - 1, 2}, {tc.pt, 3}, {tc.n - 1, 1}} {
					hv, hok := heap.View(v[0], v[1])
					fv, fok := file.View(v[0], v[1])
					if hok != fok || hok != (dt == kernel.F32 && v[0]/tc.pt == (v[0]+v[1]-1)/tc.pt) {
						t.Fatalf("View(%d, %d): ok heap %v, file %v", v[0], v[1], hok, fok)
					}
					sameBits(t, fmt.Sprintf("View(%d, %d)", v[0], v[1]), fv, hv)
				}
				// decode: every variant over the two caches
				NH := 3
				q := randn(r, NH*W, 0.3)
				kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, v *kernel.Variant) {
					run := func(c *Cache) []float32 {
						d := &Decode{NH: NH, R: tc.r, DR: tc.dr, Scale: 0.1, Q: q, Caches: []*Cache{c}, Z: make([]float32, NH*tc.r)}
						cfg := v.DefaultConfig(kernel.MakeShape(decodeKeys, 1, tc.n, NH, tc.r, tc.dr), 2)
						v.Impl.(decodeFn)(d, cfg.Threads, cfg.Params)
						return d.Z
					}
					sameBits(t, "decode", run(file), run(heap))
				})
				// truncate and append again over the kept pages
				heap.Truncate(tc.pt + 1)
				file.Truncate(tc.pt + 1)
				kv, pe := randn(r, tc.r, 1), randn(r, tc.dr, 1)
				heap.Append(kv, pe)
				if err := file.AppendErr(kv, pe); err != nil {
					t.Fatal(err)
				}
				heap.Block(0, tc.pt+2, hb)
				file.Block(0, tc.pt+2, fb)
				sameBits(t, "Block after Truncate", fb[:(tc.pt+2)*W], hb[:(tc.pt+2)*W])
			})
		}
	}
}

// TestFileAllocatorLeavesNothing: the spill file is unlinked at once, and
// Close releases its descriptor (and so its disk space).
func TestFileAllocatorLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	a := newFileAlloc(t, dir, 16<<10)
	c, err := NewCacheWith(32, 8, kernel.F32, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(2000); err != nil {
		t.Fatal(err)
	}
	empty := func(when string) {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 0 {
			t.Errorf("%s: %s holds %v", when, dir, ents)
		}
	}
	empty("in use")
	if runtime.GOOS == "linux" && !openSpillFile(t) {
		t.Error("no open spill file in /proc/self/fd while in use")
	}
	c.Release()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	empty("after Close")
	if runtime.GOOS == "linux" && openSpillFile(t) {
		t.Error("spill file still open after Close")
	}
	if _, err := a.Alloc(64); !errors.Is(err, ErrAllocatorClosed) {
		t.Errorf("Alloc after Close: %v, want ErrAllocatorClosed", err)
	}
	if err := c.AppendErr(make([]float32, 32), make([]float32, 8)); !errors.Is(err, ErrAllocatorClosed) || c.Len() != 0 {
		t.Errorf("Append after Close: %v, %d tokens", err, c.Len())
	}
}

// openSpillFile reports whether this process holds a spill file open.
func openSpillFile(t *testing.T) bool {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "ktune-mla-cache-") {
			return true
		}
	}
	return false
}

// failingAlloc hands out n pages of heap, then fails.
type failingAlloc struct{ n int }

var errDiskFull = errors.New("no space left on device (test)")

func (f *failingAlloc) Alloc(bytes int) ([]byte, error) {
	if f.n == 0 {
		return nil, errDiskFull
	}
	f.n--
	return HeapAllocator{}.Alloc(bytes)
}

func (f *failingAlloc) Close() error { return nil }

// TestAllocatorFailure: when the allocator fails, AppendErr and Reserve
// return its error and leave the cache as it was; Append panics with it.
func TestAllocatorFailure(t *testing.T) {
	for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8} {
		t.Run(string(dt), func(t *testing.T) {
			c, err := NewCacheWith(16, 4, dt, &failingAlloc{n: 2})
			if err != nil {
				t.Fatal(err)
			}
			c.PageTokens = 8
			kv, pe := make([]float32, 16), make([]float32, 4)
			for j := 0; j < 16; j++ {
				kv[0] = float32(j)
				if err := c.AppendErr(kv, pe); err != nil {
					t.Fatalf("token %d: %v", j, err)
				}
			}
			err = c.AppendErr(kv, pe)
			if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "cache page 2") {
				t.Fatalf("third page: %v", err)
			}
			t.Log(err)
			if c.Len() != 16 || c.Capacity() != 16 {
				t.Errorf("after the failure: %d tokens, capacity %d", c.Len(), c.Capacity())
			}
			if err := (&LayerCache{Seqs: []*Cache{c}}).Reserve(1); !errors.Is(err, errDiskFull) {
				t.Errorf("LayerCache.Reserve: %v", err)
			}
			rows := make([]float32, 16*20)
			c.Block(0, 16, rows)
			if rows[15*20] != 15 {
				t.Errorf("token 15 reads %v", rows[15*20])
			}
			func() {
				defer func() {
					if e, ok := recover().(error); !ok || !errors.Is(e, errDiskFull) {
						t.Errorf("Append panicked with %v, want the allocator's error", e)
					}
				}()
				c.Append(kv, pe)
			}()
		})
	}
}
