package gemm

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// ggufShapes are the test shapes of a GGUF format: rows of one, two and
// three blocks (32 or 256 values each), output counts below, at and
// across a panel (16 rows), and row counts of decode and of prefill.
func ggufShapes(op string, dt kernel.DType) []kernel.Shape {
	t, _ := quant.GGUFType(dt)
	bs := max(t.BlockSize(), 32)
	ms := []int{1, 2, 5, 8, 9, 33}
	if op == OpGEMV {
		ms = []int{1, 2, 3, 8}
	}
	// (no output count below 16: the int8 classes' tolerance is an RMS
	// over outputs, which one or two outputs near zero by chance exceed)
	nk := [][2]int{{40, bs}, {17, 2 * bs}, {16, bs}, {33, 3 * bs}}
	if testing.Short() {
		ms, nk = ms[:3], nk[1:3]
	}
	var out []kernel.Shape
	for _, m := range ms {
		for _, s := range nk {
			out = append(out, kernel.MakeShape(shapeKeys, m, s[0], s[1]))
		}
	}
	return out
}

// TestGGUFVariants checks every variant serving a GGUF format against the
// reference (ggml's own dequantization, float64 sums) at ggufShapes, at
// its class's tolerance (gateup under its error model).
func TestGGUFVariants(t *testing.T) {
	for _, op := range allOps {
		t.Run(op, func(t *testing.T) {
			kerneltest.ForEachVariant(t, op, func(t *testing.T, v *kernel.Variant) {
				for _, dt := range v.DTypes {
					if !quant.IsGGUF(dt) {
						continue
					}
					t.Run(string(dt), func(t *testing.T) {
						if op == OpGateUp {
							checkGateUpShapes(t, v, dt, 1, ggufShapes(op, dt))
							return
						}
						kerneltest.CheckVariant(t, v, dt, ggufShapes(op, dt), 2, 1)
					})
				}
			})
		})
	}
}
