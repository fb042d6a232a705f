// Package quant defines the weight formats every kernel reads — F32, BF16,
// Q8 and Q4 — and their one canonical packed layout, which is what a
// converted model file stores and what every variant of a format reads.
// Tuning chooses variants, tiles and threads, never this layout.
//
// A weight is a matrix W [N×K] in Hugging Face layout (N output rows, K
// inputs; y = x·Wᵀ). Packed, the rows are cut into panels of PanelRows (16)
// rows, the last one zero-padded, stored one after another. Inside a panel
// the K axis is interleaved with the rows so that every 64-byte line holds
// the same few k for all 16 rows: one AVX-512 register, four NEON
// registers, two AVX2 registers. A GEMV streams the panels sequentially;
// a GEMM micro-kernel reads a panel as its packed B operand.
//
// Per panel, for k in K order:
//
//	F32   [K][16]f32                     64 B per k
//	BF16  [Kp/2][16][2]bf16              64 B per pair of k (Kp = K rounded up to 2)
//	Q8    per group of 32 k: [8][16][4]u8, then [16]f16 scales
//	      = 544 B per group; u = q+128 (offset binary), w = d·(u−128)
//	Q4    per group of 32 k: [4][16][4] bytes of two nibbles, then [16]f16
//	      scales, then (with min) [16]f16 mins = 288 B (320 B with min);
//	      in line c, byte 4r+j holds k = 8c+j (low nibble) and 8c+4+j
//	      (high nibble) of row r; w = d·(q−8), or w = d·q + m with a min
//	Q3    per group of 32 k: [3][16][4] bytes of 3-bit values, then [16]f16
//	      scales = 224 B (3.5 bits per weight); w = d·(u−4); see q3.go
//	Q6    per group of 32 k: [6][16][4] bytes of 6-bit values, then [16]f16
//	      scales = 416 B (6.5 bits per weight); w = d·(u−32); see q6.go
//	Q5    per group of 32 k: [4][16][4] bytes of Q4's nibbles, one line of
//	      fifth bits, then [16]f16 scales = 352 B (5.5 bits per weight);
//	      w = d·(u−16) (ggml Q5_0); see q5.go
//	Q2    per group of 32 k: [2][16][4] bytes of 2-bit values, then [16]u16
//	      scale words (an f16 scale and a 4-bit offset code) = 160 B (2.5
//	      bits per weight); w = d·(u − (c−1)/4); see q2.go
//
// K is zero-padded to a multiple of 32 for Q8/Q4/Q3/Q6/Q5/Q2 (Kp); kernels pad the
// activations with zeros, so padded weights never contribute. The group
// size and the f16 scales let ggml's Q8_0 and Q4_0 blocks be repacked
// exactly, and Q4_K (6-bit sub-block scales under an f16 super-scale) with
// only its group scales rounded to f16 (relative error ≤ 2⁻¹¹ of a scale,
// well under the 4-bit rounding itself); see ggml.go.
package quant

import (
	"fmt"
	"slices"

	"github.com/ktune/ktune/internal/kernel"
)

const (
	// PanelRows is the number of output rows interleaved in a panel.
	PanelRows = 16
	// GroupK is the number of weights sharing one scale (Q8, Q4).
	GroupK = 32
	// LineBytes is the size of one interleaved line.
	LineBytes = 64
)

// Group sizes in bytes.
const (
	Q8GroupBytes    = 8*LineBytes + 2*PanelRows // 544
	Q4GroupBytes    = 4*LineBytes + 2*PanelRows // 288
	Q4MinGroupBytes = Q4GroupBytes + 2*PanelRows
)

// Matrix is a packed weight matrix.
type Matrix struct {
	DType  kernel.DType
	N, K   int  // logical shape
	Np, Kp int  // padded: Np to PanelRows, Kp to GroupK (Q8, Q4, Q3, Q6, Q5, Q2), SuperK (Q3K…Q6K), 2 (BF16) or K (F32)
	HasMin bool // Q4 with a per-group min (w = d·q + m)
	Data   []byte
}

// Clone returns a copy with data of its own (nil: nil).
func (m *Matrix) Clone() *Matrix {
	if m == nil {
		return nil
	}
	c := *m
	c.Data = slices.Clone(m.Data)
	return &c
}

// Panels is the number of row panels.
func (m *Matrix) Panels() int { return m.Np / PanelRows }

// Groups is the number of K groups (Q8, Q4).
func (m *Matrix) Groups() int { return m.Kp / GroupK }

// GroupBytes is the size of one group record of one panel (Q8, Q4, Q3,
// Q6, Q5, Q2; 0 for the K formats, whose groups sit in super-block
// records: KSuperBytes, KGroup).
func (m *Matrix) GroupBytes() int { return groupBytes(m.DType, m.HasMin) }

func groupBytes(dt kernel.DType, hasMin bool) int {
	switch dt {
	case kernel.Q8:
		return Q8GroupBytes
	case kernel.Q4:
		if hasMin {
			return Q4MinGroupBytes
		}
		return Q4GroupBytes
	case kernel.Q3:
		return Q3GroupBytes
	case kernel.Q6:
		return Q6GroupBytes
	case kernel.Q5:
		return Q5GroupBytes
	case kernel.Q2:
		return Q2GroupBytes
	}
	return 0
}

// PanelBytes is the size of one packed panel.
func (m *Matrix) PanelBytes() int { return panelBytes(m.DType, m.Kp, m.HasMin) }

func panelBytes(dt kernel.DType, kp int, hasMin bool) int {
	if IsGGUF(dt) {
		return PanelRows * ggufRowBytes(dt, kp) // 16 whole rows (the last panel may hold fewer)
	}
	switch dt {
	case kernel.F32:
		return 4 * PanelRows * kp
	case kernel.BF16:
		return 2 * PanelRows * kp
	}
	if IsK(dt) {
		return kp / SuperK * KSuperBytes(dt)
	}
	return kp / GroupK * groupBytes(dt, hasMin)
}

// Panel returns the bytes of panel p (of a GGUF-format matrix: its rows,
// fewer than 16 in a partial last panel).
func (m *Matrix) Panel(p int) []byte {
	b := m.PanelBytes()
	return m.Data[p*b : min((p+1)*b, len(m.Data))]
}

// PaddedK returns K rounded up as a format requires.
func PaddedK(dt kernel.DType, k int) int {
	switch dt {
	case kernel.BF16:
		return (k + 1) &^ 1
	case kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2:
		return (k + GroupK - 1) / GroupK * GroupK
	case kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
		return (k + SuperK - 1) / SuperK * SuperK
	}
	return k
}

// PaddedN returns N rounded up to whole panels.
func PaddedN(n int) int { return (n + PanelRows - 1) / PanelRows * PanelRows }

// Size is the packed size in bytes of an N×K matrix (a GGUF format's: N
// rows, unpadded).
func Size(dt kernel.DType, n, k int, hasMin bool) int64 {
	if IsGGUF(dt) {
		return int64(n) * int64(ggufRowBytes(dt, k))
	}
	return int64(PaddedN(n)/PanelRows) * int64(panelBytes(dt, PaddedK(dt, k), hasMin))
}

// BytesPerWeight is the packed cost of one weight (ignoring padding).
func BytesPerWeight(dt kernel.DType, hasMin bool) float64 {
	switch dt {
	case kernel.F32:
		return 4
	case kernel.BF16:
		return 2
	}
	if IsK(dt) {
		return float64(KSuperBytes(dt)) / float64(PanelRows*SuperK)
	}
	if t, ok := GGUFType(dt); ok {
		return float64(t.BlockBytes()) / float64(t.BlockSize())
	}
	return float64(groupBytes(dt, hasMin)) / float64(PanelRows*GroupK)
}

// New allocates a zeroed packed matrix.
func New(dt kernel.DType, n, k int, hasMin bool) (*Matrix, error) {
	if err := checkShape(dt, n, k, hasMin); err != nil {
		return nil, err
	}
	m := &Matrix{DType: dt, N: n, K: k, Np: PaddedN(n), Kp: PaddedK(dt, k), HasMin: hasMin && dt == kernel.Q4}
	m.Data = make([]byte, Size(dt, n, k, m.HasMin))
	return m, nil
}

// View wraps packed bytes (e.g. a slice of an mmap'd model file) without
// copying; the length must match the shape exactly.
func View(dt kernel.DType, n, k int, hasMin bool, data []byte) (*Matrix, error) {
	if err := checkShape(dt, n, k, hasMin); err != nil {
		return nil, err
	}
	if want := Size(dt, n, k, hasMin); int64(len(data)) != want {
		return nil, fmt.Errorf("quant: %s %d×%d matrix needs %d packed bytes, got %d", dt, n, k, want, len(data))
	}
	return &Matrix{DType: dt, N: n, K: k, Np: PaddedN(n), Kp: PaddedK(dt, k), HasMin: hasMin, Data: data}, nil
}

func checkShape(dt kernel.DType, n, k int, hasMin bool) error {
	switch dt {
	case kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4, kernel.Q3, kernel.Q6, kernel.Q5, kernel.Q2,
		kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K:
	default:
		if !IsGGUF(dt) {
			return fmt.Errorf("quant: unsupported weight dtype %q", dt)
		}
	}
	if n < 1 || k < 1 {
		return fmt.Errorf("quant: bad shape %d×%d", n, k)
	}
	if IsGGUF(dt) {
		if err := checkGGUFShape(dt, k); err != nil {
			return err
		}
	}
	if hasMin && dt != kernel.Q4 {
		return fmt.Errorf("quant: a min exists only for q4, not %s", dt)
	}
	return nil
}
