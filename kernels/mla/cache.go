package mla

import (
	"encoding/binary"
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
	pages      [][]byte
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

// Bytes is the memory the cache holds (whole pages).
func (c *Cache) Bytes() int64 { return int64(len(c.pages)) * int64(c.PageTokens*c.RowBytes()) }

// Reset empties the cache, keeping its pages for reuse.
func (c *Cache) Reset() { c.n = 0 }

// Truncate drops tokens from position n on.
func (c *Cache) Truncate(n int) {
	if n < c.n {
		c.n = max(n, 0)
	}
}

func (c *Cache) row(t int) []byte {
	rb := c.RowBytes()
	p, i := t/c.PageTokens, t%c.PageTokens
	return c.pages[p][i*rb : (i+1)*rb]
}

// Append adds one token: kvc (R values) and kpe (DR values).
func (c *Cache) Append(kvc, kpe []float32) {
	if len(kvc) != c.R || len(kpe) != c.DR {
		panic(fmt.Sprintf("mla: Append of %d+%d values to a %d+%d cache", len(kvc), len(kpe), c.R, c.DR))
	}
	if c.n == len(c.pages)*c.PageTokens {
		c.pages = append(c.pages, make([]byte, c.PageTokens*c.RowBytes()))
	}
	c.n++
	b := c.row(c.n - 1)
	switch c.DType {
	case kernel.F32:
		for i, v := range kvc {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		for i, v := range kpe {
			binary.LittleEndian.PutUint32(b[4*(c.R+i):], math.Float32bits(v))
		}
	case kernel.BF16:
		for i, v := range kvc {
			binary.LittleEndian.PutUint16(b[2*i:], half.F32ToBF16(v))
		}
		for i, v := range kpe {
			binary.LittleEndian.PutUint16(b[2*(c.R+i):], half.F32ToBF16(v))
		}
	case kernel.Q8:
		s0, s1 := quantQ8(b[8:8+c.R], kvc), quantQ8(b[8+c.R:], kpe)
		binary.LittleEndian.PutUint32(b[0:], math.Float32bits(s0))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(s1))
	}
}

func quantQ8(dst []byte, x []float32) float32 {
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
		dst[i] = byte(int8(math.RoundToEven(float64(v / s))))
	}
	return s
}

// Block writes tokens [t0, t0+n) as f32 rows of Width values into dst.
func (c *Cache) Block(t0, n int, dst []float32) {
	w := c.Width()
	if t0 < 0 || t0+n > c.n || len(dst) < n*w {
		panic(fmt.Sprintf("mla: Block(%d, %d) of a %d-token cache into %d values", t0, n, c.n, len(dst)))
	}
	for t := 0; t < n; t++ {
		b, d := c.row(t0+t), dst[t*w:(t+1)*w]
		switch c.DType {
		case kernel.F32:
			for i := range d {
				d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case kernel.BF16:
			for i := range d {
				d[i] = half.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
			}
		case kernel.Q8:
			s0 := math.Float32frombits(binary.LittleEndian.Uint32(b[0:]))
			s1 := math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
			for i := 0; i < c.R; i++ {
				d[i] = s0 * float32(int8(b[8+i]))
			}
			for i := c.R; i < w; i++ {
				d[i] = s1 * float32(int8(b[8+i]))
			}
		}
	}
}
