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
type Cache struct {
	R, DR      int
	DType      kernel.DType
	PageTokens int
	f32        [][]float32 // F32 pages: PageTokens rows of R+DR
	b16        [][]uint16  // BF16 pages
	q8         [][]int8    // Q8 pages
	q8s        [][]float32 // Q8 scales: 2 per token
	n          int
}

// NewCache returns an empty cache.
func NewCache(r, dr int, dt kernel.DType) (*Cache, error) {
	switch dt {
	case kernel.F32, kernel.BF16, kernel.Q8:
	default:
		return nil, fmt.Errorf("mla: cache dtype %s not supported (f32, bf16, q8)", dt)
	}
	if r < 1 || dr < 0 {
		return nil, fmt.Errorf("mla: bad cache widths r=%d dr=%d", r, dr)
	}
	return &Cache{R: r, DR: dr, DType: dt, PageTokens: DefaultPageTokens}, nil
}

// Len is the number of cached tokens.
func (c *Cache) Len() int { return c.n }

// Width is R+DR, the values per token.
func (c *Cache) Width() int { return c.R + c.DR }

// RowBytes is the storage of one token.
func (c *Cache) RowBytes() int {
	w := c.Width()
	switch c.DType {
	case kernel.BF16:
		return 2 * w
	case kernel.Q8:
		return w + 8
	}
	return 4 * w
}

func (c *Cache) pages() int { return max(len(c.f32), len(c.b16), len(c.q8)) }

// Bytes is the memory the cache holds (whole pages).
func (c *Cache) Bytes() int64 { return int64(c.pages()) * int64(c.PageTokens*c.RowBytes()) }

// Reset empties the cache, keeping its pages for reuse.
func (c *Cache) Reset() { c.n = 0 }

// Truncate drops tokens from position n on.
func (c *Cache) Truncate(n int) {
	if n < c.n {
		c.n = max(n, 0)
	}
}

// Append adds one token: kvc (R values) and kpe (DR values).
func (c *Cache) Append(kvc, kpe []float32) {
	if len(kvc) != c.R || len(kpe) != c.DR {
		panic(fmt.Sprintf("mla: Append of %d+%d values to a %d+%d cache", len(kvc), len(kpe), c.R, c.DR))
	}
	w, pt := c.Width(), c.PageTokens
	if c.n == c.pages()*pt {
		switch c.DType {
		case kernel.F32:
			c.f32 = append(c.f32, make([]float32, pt*w))
		case kernel.BF16:
			c.b16 = append(c.b16, make([]uint16, pt*w))
		case kernel.Q8:
			c.q8 = append(c.q8, make([]int8, pt*w))
			c.q8s = append(c.q8s, make([]float32, 2*pt))
		}
	}
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
