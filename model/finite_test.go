package model

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/model/kfile"
)

// TestPackRowsRefusesBadWeights: NaN and ±Inf weights, a finite weight
// that rounds to Inf in bf16 and one whose q8/q4 group scale overflows
// f16 are refused with their row and column; ordinary weights pass.
func TestPackRowsRefusesBadWeights(t *testing.T) {
	const n, k = 40, 64
	for _, c := range []struct {
		dt   kernel.DType
		v    float32
		want string // "" passes
	}{
		{kernel.F32, float32(math.NaN()), "not finite"},
		{kernel.Q8, float32(math.Inf(-1)), "not finite"},
		{kernel.BF16, math.MaxFloat32, "overflows bf16"},
		{kernel.Q8, 1e10, "too large for q8"},
		{kernel.Q4, 1e7, "too large for q4"},
		{kernel.Q4K, 1e10, "too large for q4k"},
		{kernel.Q6K, 1e6, ""},
		{kernel.Q8, 1e6, ""},
		{kernel.BF16, 3e38, ""},
	} {
		w := make([]float32, n*k)
		for i := range w {
			w[i] = float32(i%7) - 3
		}
		w[33*k+40] = c.v
		_, err := packRows(c.dt, n, k, 2, false, func(dst []float32, r0, r1 int) error {
			copy(dst, w[r0*k:r1*k])
			return nil
		})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %v: %v", c.dt, c.v, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "row 33")):
			t.Errorf("%s %v: err %v, want %q at row 33", c.dt, c.v, err, c.want)
		}
	}
}

// TestCheckFinite: kfile's check finds NaN in raw values and an Inf q8 scale.
func TestCheckFinite(t *testing.T) {
	raw := &kfile.Tensor{Name: "a", Layout: kfile.LayoutRaw, DType: "BF16", Shape: []int64{4}}
	if err := kfile.CheckFinite(raw, []byte{0, 0x3f, 0xc0, 0x7f, 0, 0, 0, 0}); err == nil || !strings.Contains(err.Error(), "index 1") {
		t.Errorf("bf16 NaN: %v", err)
	}
	m, err := packRows(kernel.Q8, 16, 32, 1, false, func(dst []float32, r0, r1 int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	m.Data[8*64+2*5], m.Data[8*64+2*5+1] = 0x00, 0x7c // row 5's scale: +Inf in f16
	q := &kfile.Tensor{Name: "w", Layout: kfile.LayoutPacked, DType: "q8", Shape: []int64{16, 32}}
	if err := kfile.CheckFinite(q, m.Data); err == nil || !strings.Contains(err.Error(), "row 5") {
		t.Errorf("q8 Inf scale: %v", err)
	}
	k, err := packRows(kernel.Q3K, 16, 300, 1, false, func(dst []float32, r0, r1 int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	sb := quant.KSuperBytes(kernel.Q3K)
	k.Data[sb+224+2*5+1] = 0xfc // second super-block, row 5's dm: −Inf
	kt := &kfile.Tensor{Name: "w", Layout: kfile.LayoutPacked, DType: "q3k", Shape: []int64{16, 300}}
	if err := kfile.CheckFinite(kt, k.Data); err == nil || !strings.Contains(err.Error(), "row 5, columns 256..299") || !strings.Contains(err.Error(), "dm") {
		t.Errorf("q3k Inf dm: %v", err)
	}
	var in *InputError
	if !errors.As(inputErr(errors.New("x")), &in) || inputErr(nil) != nil {
		t.Error("inputErr")
	}
}

// TestKOverflowHint: the range a K format's overflow error says fits is
// what packs (the limit lies within 5% of it): weights spanning 0.9 of it
// pack, 1.1 of it are refused with the same hint. A hint off by the 63 of
// the 6-bit codes, the format's levels or a factor of 2 fails one side.
func TestKOverflowHint(t *testing.T) {
	const n, k = 16, 256
	re := regexp.MustCompile(`a range of about ([0-9.e+]+) fits`)
	for _, dt := range []kernel.DType{kernel.Q3K, kernel.Q4K, kernel.Q5K, kernel.Q6K} {
		pack := func(v float32) error {
			_, err := packRows(dt, n, k, 1, false, func(dst []float32, r0, r1 int) error {
				for i := range dst {
					dst[i] = float32(i%7) - 3
				}
				dst[5*k+100] = v
				return nil
			})
			return err
		}
		err := pack(3e9)
		if err == nil {
			t.Fatalf("%s: weights of 3e9 packed", dt)
		}
		m := re.FindStringSubmatch(err.Error())
		if m == nil || !strings.Contains(err.Error(), "row 5") {
			t.Fatalf("%s: %v, want row 5 and the range that fits", dt, err)
		}
		hint, perr := strconv.ParseFloat(m[1], 64)
		if perr != nil {
			t.Fatal(perr)
		}
		if err := pack(float32(0.9 * hint)); err != nil {
			t.Errorf("%s: a range of 0.9 × the hint %g is refused: %v", dt, hint, err)
		}
		err = pack(float32(1.1 * hint))
		if err == nil || !strings.Contains(err.Error(), m[0]) {
			t.Errorf("%s: a range of 1.1 × the hint %g: %v, want refused with the same hint", dt, hint, err)
		}
	}
}
