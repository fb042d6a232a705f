package kfile

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// FirstNonFinite finds the first NaN or ±Inf among b's values of dtype dt
// (F32, BF16, F16: safetensors' names; f32, bf16 work too) and returns its
// index and value, or −1.
func FirstNonFinite(dt string, b []byte) (int, float32) {
	switch dt {
	case "F32", "f32":
		for i := 0; i+4 <= len(b); i += 4 {
			if u := binary.LittleEndian.Uint32(b[i:]); u&0x7f800000 == 0x7f800000 {
				return i / 4, math.Float32frombits(u)
			}
		}
	case "BF16", "bf16":
		for i := 0; i+2 <= len(b); i += 2 {
			if u := binary.LittleEndian.Uint16(b[i:]); u&0x7f80 == 0x7f80 {
				return i / 2, half.BF16ToF32(u)
			}
		}
	case "F16", "f16":
		for i := 0; i+2 <= len(b); i += 2 {
			if u := binary.LittleEndian.Uint16(b[i:]); u&0x7c00 == 0x7c00 {
				return i / 2, half.F16ToF32(u)
			}
		}
	}
	return -1, 0
}

// CheckFinite checks that a tensor's bytes hold no NaN or ±Inf: every
// value of a raw or packed f32/bf16 tensor, every f16 scale (and min) of a
// q8/q4 matrix. Its error names the tensor and where in it.
func CheckFinite(t *Tensor, b []byte) error {
	if t.Layout == LayoutRaw {
		if i, v := FirstNonFinite(t.DType, b); i >= 0 {
			return fmt.Errorf("tensor %q: value %v at index %d (of %v %s) is not finite", t.Name, v, i, t.Shape, t.DType)
		}
		return nil
	}
	switch dt := kernel.DType(t.DType); dt {
	case kernel.F32, kernel.BF16:
		if i, v := FirstNonFinite(t.DType, b); i >= 0 {
			return fmt.Errorf("tensor %q: packed %s value %v (at value %d of the packed layout) is not finite", t.Name, dt, v, i)
		}
	case kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		// super-block records of 256 k for 16 rows: a header whose [16]f16
		// d and [16]f16 dm end it, then the value lines (quant/kquant.go)
		sbb := quant.KSuperBytes(dt)
		k := max(t.Shape[1], 1)
		sbs := int((k + quant.SuperK - 1) / quant.SuperK)
		for off := 0; off+sbb <= len(b); off += sbb {
			if i, v := FirstNonFinite("F16", b[off+quant.KHeaderBytes-4*quant.PanelRows:off+quant.KHeaderBytes]); i >= 0 {
				rec := off / sbb
				what := "d"
				if i >= quant.PanelRows {
					what = "dm"
				}
				c0 := rec % sbs * quant.SuperK
				return fmt.Errorf("tensor %q: the %s super-block %s of row %d, columns %d..%d is %v, not finite",
					t.Name, dt, what, rec/sbs*quant.PanelRows+i%quant.PanelRows, c0, min(c0+quant.SuperK, int(k))-1, v)
			}
		}
	case kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2:
		// records of one group of 32 k for 16 rows: quantized values, then
		// [16]f16 scales (and [16]f16 mins for q4 with a min; q2's scale
		// words are f16s whose low mantissa bits hold an offset code, which
		// leaves their exponent, and so finiteness, as an f16's)
		data, gb := 8*quant.LineBytes, quant.Q8GroupBytes
		if dt == kernel.Q3 {
			data, gb = quant.Q3Lines*quant.LineBytes, quant.Q3GroupBytes
		}
		if dt == kernel.Q6 {
			data, gb = quant.Q6Lines*quant.LineBytes, quant.Q6GroupBytes
		}
		if dt == kernel.Q5 {
			data, gb = quant.Q5Lines*quant.LineBytes, quant.Q5GroupBytes
		}
		if dt == kernel.Q2 {
			data, gb = quant.Q2Lines*quant.LineBytes, quant.Q2GroupBytes
		}
		if dt == kernel.Q4 {
			data, gb = 4*quant.LineBytes, quant.Q4GroupBytes
			if t.HasMin {
				gb = quant.Q4MinGroupBytes
			}
		}
		for off := 0; off+gb <= len(b); off += gb {
			if i, v := FirstNonFinite("F16", b[off+data:off+gb]); i >= 0 {
				k := max(t.Shape[1], 1)
				groups := int((k + quant.GroupK - 1) / quant.GroupK)
				rec := off / gb
				return fmt.Errorf("tensor %q: the %s scale of row %d, columns %d..%d is %v, not finite",
					t.Name, dt, rec/groups*quant.PanelRows+i%quant.PanelRows, rec%groups*quant.GroupK, rec%groups*quant.GroupK+quant.GroupK-1, v)
			}
		}
	}
	return nil
}
