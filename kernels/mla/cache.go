package mla

import (
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
)

// DefaultPageTokens is the number of tokens per cache page.
const DefaultPageTokens = 256

// Cache is one sequence's latent KV cache for one MLA layer: per token the
// normalised latent ĉ (R values) and the shared key part k_pe (DR values),
// append-only, in pages so that a long context never needs one giant
// allocation. Values are stored as F32, BF16, or Q8 (int8 with two f32
// scales per token, one for ĉ and one for k_pe).
//
// Pages come from a PageAllocator: the Go heap (NewCache), or a
// file-backed mapping (NewCacheWith and a FileAllocator) for contexts
// longer than RAM should hold. Each page is one allocation of
// PageTokens·RowBytes bytes viewed as typed rows (a Q8 page holds its
// 2·PageTokens f32 scales first, then the int8 rows).
type Cache struct {
	R, DR      int
	DType      kernel.DType
	PageTokens int // tokens per page; change only while the cache is empty
	alloc      PageAllocator
	file       bool        // alloc is file-backed
	f32        [][]float32 // F32 pages: PageTokens rows of R+DR
	b16        [][]uint16  // BF16 pages
	q8         [][]int8    // Q8 pages
	q8s        [][]float32 // Q8 scales: 2 per token
	n          int
	bytes      int64 // the pages' bytes, as allocated
}

// NewCache returns an empty cache whose pages are heap memory.
func NewCache(r, dr int, dt kernel.DType) (*Cache, error) {
	return NewCacheWith(r, dr, dt, nil)
}

// NewCacheWith returns an empty cache whose pages come from alloc (nil:
// the heap). The cache does not own alloc: whoever made it closes it,
// after the cache is dropped or Released.
func NewCacheWith(r, dr int, dt kernel.DType, alloc PageAllocator) (*Cache, error) {
	switch dt {
	case kernel.F32, kernel.BF16, kernel.Q8:
	default:
		return nil, fmt.Errorf("mla: cache dtype %s not supported (f32, bf16, q8)", dt)
	}
	if r < 1 || dr < 0 {
		return nil, fmt.Errorf("mla: bad cache widths r=%d dr=%d", r, dr)
	}
	if alloc == nil {
		alloc = HeapAllocator{}
	}
	fb, _ := alloc.(FileBacked)
	return &Cache{R: r, DR: dr, DType: dt, PageTokens: DefaultPageTokens, alloc: alloc,
		file: fb != nil && fb.FileBacked()}, nil
}

// FileBacked reports whether the cache's pages are file-backed.
func (c *Cache) FileBacked() bool { return c.file }

// Len is the number of cached tokens.
func (c *Cache) Len() int { return c.n }

// Width is R+DR, the values per token.
func (c *Cache) Width() int { return c.R + c.DR }

// RowBytes is the storage of one token.
func (c *Cache) RowBytes() int { return RowBytes(c.Width(), c.DType) }

// RowBytes is the storage of one token of width values (R+DR) in a cache
// of dtype dt: the one formula the pages are cut by and the memory
// estimates use (a Q8 row: its int8 values and two f32 scales).
func RowBytes(width int, dt kernel.DType) int {
	switch dt {
	case kernel.BF16:
		return 2 * width
	case kernel.Q8:
		return width + 8
	}
	return 4 * width
}

func (c *Cache) pages() int { return max(len(c.f32), len(c.b16), len(c.q8)) }

// Bytes is the memory the cache holds: what its allocator gave it.
func (c *Cache) Bytes() int64 { return c.bytes }

// Capacity is the number of tokens the allocated pages hold.
func (c *Cache) Capacity() int { return c.pages() * c.PageTokens }

// Reserve allocates pages until the cache can hold n tokens, so that the
// Appends up to n tokens cannot fail. An allocator's error (a full disk, a
// failed mapping) is returned; the pages allocated before it are kept.
func (c *Cache) Reserve(n int) error {
	w, pt := c.Width(), c.PageTokens
	for c.Capacity() < n {
		b, err := c.alloc.Alloc(pt * c.RowBytes())
		if err != nil {
			return fmt.Errorf("mla: cache page %d (tokens %d..%d): %w", c.pages(), c.Capacity(), c.Capacity()+pt-1, err)
		}
		if len(b) != pt*c.RowBytes() {
			return fmt.Errorf("mla: cache page %d: allocator returned %d bytes, want %d", c.pages(), len(b), pt*c.RowBytes())
		}
		c.bytes += int64(len(b))
		switch c.DType {
		case kernel.F32:
			c.f32 = append(c.f32, f32View(b))
		case kernel.BF16:
			c.b16 = append(c.b16, u16View(b))
		case kernel.Q8:
			c.q8s = append(c.q8s, f32View(b[:8*pt]))
			c.q8 = append(c.q8, i8View(b[8*pt:8*pt+pt*w]))
		}
	}
	return nil
}

// Release empties the cache and drops its pages (the allocator still owns
// them: heap pages are collected, mapped ones stay until the allocator is
// closed). Use it before closing a file-backed allocator, so that the
// cache holds no view of unmapped memory.
func (c *Cache) Release() {
	c.n = 0
	c.f32, c.b16, c.q8, c.q8s = nil, nil, nil, nil
	c.bytes = 0
}

// Reset empties the cache, keeping its pages for reuse.
func (c *Cache) Reset() { c.n = 0 }

// Truncate drops tokens from position n on.
func (c *Cache) Truncate(n int) {
	if n < c.n {
		c.n = max(n, 0)
	}
}

// Append adds one token: kvc (R values) and kpe (DR values). It panics if
// a new page cannot be allocated, which the heap allocator never reports
// (it runs out of memory instead); with a fallible allocator use AppendErr,
// or Reserve the tokens first.
func (c *Cache) Append(kvc, kpe []float32) {
	if err := c.AppendErr(kvc, kpe); err != nil {
		panic(err)
	}
}

// AppendErr is Append returning the allocator's error; the cache is
// unchanged then. Wrong widths still panic (a programming error).
func (c *Cache) AppendErr(kvc, kpe []float32) error {
	if len(kvc) != c.R || len(kpe) != c.DR {
		panic(fmt.Sprintf("mla: Append of %d+%d values to a %d+%d cache", len(kvc), len(kpe), c.R, c.DR))
	}
	if err := c.Reserve(c.n + 1); err != nil {
		return err
	}
	w, pt := c.Width(), c.PageTokens
	p, i := c.n/pt, c.n%pt
	c.n++
	switch c.DType {
	case kernel.F32:
		row := c.f32[p][i*w : (i+1)*w]
		copy(row, kvc)
		copy(row[c.R:], kpe)
	case kernel.BF16:
		row := c.b16[p][i*w : (i+1)*w]
		for j, v := range kvc {
			row[j] = half.F32ToBF16(v)
		}
		for j, v := range kpe {
			row[c.R+j] = half.F32ToBF16(v)
		}
	case kernel.Q8:
		row := c.q8[p][i*w : (i+1)*w]
		c.q8s[p][2*i] = quantQ8(row[:c.R], kvc)
		c.q8s[p][2*i+1] = quantQ8(row[c.R:], kpe)
	}
	return nil
}

func quantQ8(dst []int8, x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	if amax == 0 {
		clear(dst)
		return 0
	}
	s := amax / 127
	for i, v := range x {
		dst[i] = int8(math.RoundToEven(float64(v / s)))
	}
	return s
}

// View returns tokens [t0, t0+n) as f32 rows without copying when the
// cache is F32 and the range lies in one page; ok is false otherwise.
func (c *Cache) View(t0, n int) (rows []float32, ok bool) {
	pt, w := c.PageTokens, c.Width()
	if c.DType != kernel.F32 || n < 1 || t0 < 0 || t0+n > c.n || t0/pt != (t0+n-1)/pt {
		return nil, false
	}
	i := t0 % pt
	return c.f32[t0/pt][i*w : (i+n)*w], true
}

// ViewBF16 returns tokens [t0, t0+n) as BF16 rows without copying when the
// cache is BF16 and the range lies in one page; ok is false otherwise.
func (c *Cache) ViewBF16(t0, n int) (rows []uint16, ok bool) {
	pt, w := c.PageTokens, c.Width()
	if c.DType != kernel.BF16 || n < 1 || t0 < 0 || t0+n > c.n || t0/pt != (t0+n-1)/pt {
		return nil, false
	}
	i := t0 % pt
	return c.b16[t0/pt][i*w : (i+n)*w], true
}

// BlockBF16 writes tokens [t0, t0+n) as BF16 rows of Width values into
// dst: copied from a BF16 cache, rounded (nearest even) from the others.
func (c *Cache) BlockBF16(t0, n int, dst []uint16) {
	w, pt := c.Width(), c.PageTokens
	if t0 < 0 || t0+n > c.n || len(dst) < n*w {
		panic(fmt.Sprintf("mla: BlockBF16(%d, %d) of a %d-token cache into %d values", t0, n, c.n, len(dst)))
	}
	if c.DType != kernel.BF16 {
		row := make([]float32, w)
		for t := t0; t < t0+n; t++ {
			c.Block(t, 1, row)
			for j, v := range row {
				dst[(t-t0)*w+j] = half.F32ToBF16(v)
			}
		}
		return
	}
	for t := t0; t < t0+n; {
		p, i := t/pt, t%pt
		m := min(pt-i, t0+n-t) // tokens left in this page
		copy(dst[(t-t0)*w:(t-t0+m)*w], c.b16[p][i*w:(i+m)*w])
		t += m
	}
}

// Block writes tokens [t0, t0+n) as f32 rows of Width values into dst.
func (c *Cache) Block(t0, n int, dst []float32) {
	w, pt := c.Width(), c.PageTokens
	if t0 < 0 || t0+n > c.n || len(dst) < n*w {
		panic(fmt.Sprintf("mla: Block(%d, %d) of a %d-token cache into %d values", t0, n, c.n, len(dst)))
	}
	for t := t0; t < t0+n; {
		p, i := t/pt, t%pt
		m := min(pt-i, t0+n-t) // tokens left in this page
		d := dst[(t-t0)*w : (t-t0+m)*w]
		switch c.DType {
		case kernel.F32:
			copy(d, c.f32[p][i*w:(i+m)*w])
		case kernel.BF16:
			for j, h := range c.b16[p][i*w : (i+m)*w] {
				d[j] = half.BF16ToF32(h)
			}
		case kernel.Q8:
			src, sc := c.q8[p][i*w:(i+m)*w], c.q8s[p][2*i:2*(i+m)]
			for r := 0; r < m; r++ {
				s0, s1 := sc[2*r], sc[2*r+1]
				for j := 0; j < c.R; j++ {
					d[r*w+j] = s0 * float32(src[r*w+j])
				}
				for j := c.R; j < w; j++ {
					d[r*w+j] = s1 * float32(src[r*w+j])
				}
			}
		}
		t += m
	}
}
