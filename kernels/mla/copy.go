// Copying a cache into another (state snapshots for a prefix cache).

package mla

import "fmt"

// CopyFrom makes c hold exactly src's tokens, in src's stored form (no
// conversion, so a Q8 or BF16 cache is copied bit for bit). c keeps its
// own allocator and reuses its pages, allocating more as needed; it must
// have src's widths, dtype and page size. On an allocator error c is left
// empty.
func (c *Cache) CopyFrom(src *Cache) error {
	if c.R != src.R || c.DR != src.DR || c.DType != src.DType || c.PageTokens != src.PageTokens {
		return fmt.Errorf("mla: copy of a %d+%d %s cache (%d-token pages) into a %d+%d %s cache (%d-token pages)",
			src.R, src.DR, src.DType, src.PageTokens, c.R, c.DR, c.DType, c.PageTokens)
	}
	c.n = 0
	if err := c.Reserve(src.n); err != nil {
		return err
	}
	w, pt := c.Width(), c.PageTokens
	for p := 0; p*pt < src.n; p++ {
		m := min(pt, src.n-p*pt) // tokens in this page
		switch {
		case src.f32 != nil:
			copy(c.f32[p][:m*w], src.f32[p][:m*w])
		case src.b16 != nil:
			copy(c.b16[p][:m*w], src.b16[p][:m*w])
		case src.q8 != nil:
			copy(c.q8[p][:m*w], src.q8[p][:m*w])
			copy(c.q8s[p][:2*m], src.q8s[p][:2*m])
		}
	}
	c.n = src.n
	return nil
}
