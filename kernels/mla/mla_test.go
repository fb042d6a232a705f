package mla

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/scratch"
)

func TestMain(m *testing.M) { kerneltest.Main(m, "mla") }

func TestDecodeVariants(t *testing.T) {
	ctx := []int{1, 2, 63, 64, 65, 1000}
	var shapes []kernel.Shape
	for _, c := range ctx {
		shapes = append(shapes, kernel.MakeShape(decodeKeys, 1, c, 4, 64, 16), kernel.MakeShape(decodeKeys, 1, c, 4, 512, 64))
	}
	shapes = append(shapes, kernel.MakeShape(decodeKeys, 3, 77, 2, 40, 8), kernel.MakeShape(decodeKeys, 1, 200, 32, 512, 64))
	kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, v *kernel.Variant) {
		kerneltest.CheckVariant(t, v, kernel.F32, shapes, 0, 1)
	})
}

func TestPrefillVariants(t *testing.T) {
	var shapes []kernel.Shape
	for _, tp := range [][2]int{{1, 0}, {5, 0}, {17, 0}, {1, 40}, {9, 64}, {70, 3}} {
		shapes = append(shapes, kernel.MakeShape(prefillKeys, tp[0], tp[1], 3, 16, 8, 24, 32))
	}
	// a latent width and key count off the 16-row panels, queries in
	// several blocks over a prefix (the absorbed form packs both ways)
	shapes = append(shapes, kernel.MakeShape(prefillKeys, 20, 37, 2, 8, 4, 12, 40))
	kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, v *kernel.Variant) {
		kerneltest.CheckVariant(t, v, kernel.F32, shapes, 0, 1)
	})
}

// TestCacheDTypes: decode over a BF16 cache is within relative RMS 5e-3 of
// the f32 cache, over an int8 cache within 1e-2 (issue 5's bounds).
func TestCacheDTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	NH, R, DR, C := 8, 128, 32, 500
	q := randn(r, NH*(R+DR), 0.3)
	kv, pe := randn(r, C*R, 1), randn(r, C*DR, 2)
	run := func(dt kernel.DType) []float32 {
		c, err := NewCache(R, DR, dt)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < C; j++ {
			c.Append(kv[j*R:(j+1)*R], pe[j*DR:(j+1)*DR])
		}
		d := &Decode{NH: NH, R: R, DR: DR, Scale: 0.1, Q: q, Caches: []*Cache{c}, Z: make([]float32, NH*R)}
		decodeGeneric(d, 2, kernel.Values{"kb": 64, "split": 2})
		return d.Z
	}
	want := run(kernel.F32)
	for dt, tol := range map[kernel.DType]float64{kernel.BF16: 5e-3, kernel.Q8: 1e-2} {
		d, err := kernel.Compare(run(dt), want, kernel.Tolerance{RelRMS: tol, MaxRel: 10 * tol})
		t.Logf("%s cache: relative RMS %.2e", dt, d.RelRMS)
		if err != nil {
			t.Errorf("%s cache: %v", dt, err)
		}
	}
	c, _ := NewCache(R, DR, kernel.Q8)
	if c.RowBytes() != R+DR+8 {
		t.Errorf("q8 row bytes %d", c.RowBytes())
	}
	if _, err := NewCache(R, DR, kernel.Q4); err == nil {
		t.Error("q4 cache accepted")
	}
}

// TestLargeScores: scores far beyond exp's range give no NaN, and equal
// the reference.
func TestLargeScores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	c, _ := NewCache(32, 8, kernel.F32)
	randomCache(r, c, 300)
	q := randn(r, 2*40, 50)
	for _, v := range kernel.Variants(OpDecode) {
		d := &Decode{NH: 2, R: 32, DR: 8, Scale: 1, Q: q, Caches: []*Cache{c}, Z: make([]float32, 2*32)}
		v.Impl.(decodeFn)(d, 2, v.DefaultConfig(nil, 2).Params)
		for i, z := range d.Z {
			if math.IsNaN(float64(z)) || math.IsInf(float64(z), 0) {
				t.Fatalf("%s: z[%d] = %v", v.Name, i, z)
			}
		}
	}
}

// loadLayer reads an mla golden file's weights.
func loadLayer(t *testing.T, f *golden.File) *LayerWeights {
	var cfg struct {
		Hidden int     `json:"hidden_size"`
		NH     int     `json:"num_attention_heads"`
		DN     int     `json:"qk_nope_head_dim"`
		DR     int     `json:"qk_rope_head_dim"`
		DV     int     `json:"v_head_dim"`
		R      int     `json:"kv_lora_rank"`
		Eps    float32 `json:"kv_a_layernorm_eps"`
	}
	if err := json.Unmarshal(f.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Eps == 0 {
		cfg.Eps = 1e-6
	}
	const p = "model.layers.0.self_attn."
	mat := func(name string) *quant.Matrix {
		d := f.Dims(t, p+name)
		m, err := quant.Quantize(kernel.F32, f.F32(t, p+name), d[0], d[1], false)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	w := &LayerWeights{Hidden: cfg.Hidden, Heads: cfg.NH, DN: cfg.DN, DR: cfg.DR, DV: cfg.DV, R: cfg.R, KVEps: cfg.Eps,
		Q: mat("q_proj.weight"), KVA: mat("kv_a_proj_with_mqa.weight"), KVANorm: f.F32(t, p+"kv_a_layernorm.weight"), O: mat("o_proj.weight")}
	if err := w.SplitKVB(f.F32(t, p+"kv_b_proj.weight")); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLayerGolden: prefill → decode → extend against every mla golden
// file, with every variant pair and the f32 cache; then the cache. A
// prefill variant of a class other than f32 has its outputs (attention,
// y, y_extend) checked at its class's tolerance instead of 1e-4.
func TestLayerGolden(t *testing.T) {
	for _, f := range golden.Load(t, golden.MLA) {
		t.Run(f.Name(), func(t *testing.T) {
			w := loadLayer(t, f)
			B := f.Dims(t, "x")[0]
			kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, pv *kernel.Variant) {
				check := func(name string, got []float32) { golden.Check(t, name, got, f.F32(t, name), 1e-4) }
				prefilled := check // outputs of the prefill variant's arithmetic
				if pv.Class != kernel.ClassF32 {
					tol := kernel.LookupOp(OpPrefill).Tolerance(pv.Class, nil)
					prefilled = func(name string, got []float32) {
						d := kerneltest.Close(t, name, got, f.F32(t, name), tol)
						t.Logf("%s: rel RMS %.2e (class %s)", name, d.RelRMS, pv.Class)
					}
				}
				kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, dv *kernel.Variant) {
					c, err := w.NewLayerCache(B, kernel.F32)
					if err != nil {
						t.Fatal(err)
					}
					opt := LayerOptions{Threads: 2, Prefill: &kernel.Choice{Variant: pv, Config: pv.DefaultConfig(nil, 2)}, Decode: &kernel.Choice{Variant: dv, Config: dv.DefaultConfig(nil, 2)},
						Debug: func(name string, got []float32) {
							switch name {
							case "dbg.q", "dbg.kv_c", "dbg.k_pe":
								check(name, got)
							case "dbg.attn_out":
								prefilled(name, got)
							}
						}}
					for _, ph := range []string{"", "_decode", "_extend"} {
						x := f.F32(t, "x"+ph)
						y := make([]float32, len(x))
						w.Forward(y, x, B, f.Dims(t, "x"+ph)[1], c, opt)
						opt.Debug = nil
						if ph == "_decode" {
							check("y"+ph, y)
						} else {
							prefilled("y"+ph, y)
						}
					}
					S := c.Seqs[0].Len()
					kvc, kpe := make([]float32, 0, B*S*w.R), make([]float32, 0, B*S*w.DR)
					row := make([]float32, w.R+w.DR)
					for b := 0; b < B; b++ {
						for j := 0; j < S; j++ {
							c.Seqs[b].Block(j, 1, row)
							kvc = append(kvc, row[:w.R]...)
							kpe = append(kpe, row[w.R:]...)
						}
					}
					golden.Check(t, "cache.kv_c", kvc, f.F32(t, "cache.kv_c"), 1e-4)
					golden.Check(t, "cache.k_pe", kpe, f.F32(t, "cache.k_pe"), 1e-4)
				})
			})
		})
	}
}

// TestDecodeAfterPrefill: decoding token by token after a prefill gives
// the outputs of one longer prefill.
func TestDecodeAfterPrefill(t *testing.T) {
	for _, f := range golden.Load(t, golden.MLA) {
		w := loadLayer(t, f)
		B := f.Dims(t, "x")[0]
		x := f.F32(t, "x")
		T, C := f.Dims(t, "x")[1], w.Hidden
		whole, _ := w.NewLayerCache(B, kernel.F32)
		yw := make([]float32, len(x))
		w.Forward(yw, x, B, T, whole, LayerOptions{Threads: 2})
		split := T - 3
		pc, _ := w.NewLayerCache(B, kernel.F32)
		xa := make([]float32, 0, B*split*C)
		for b := 0; b < B; b++ {
			xa = append(xa, x[b*T*C:(b*T+split)*C]...)
		}
		ya := make([]float32, len(xa))
		w.Forward(ya, xa, B, split, pc, LayerOptions{Threads: 2})
		for tt := split; tt < T; tt++ {
			xt := make([]float32, 0, B*C)
			for b := 0; b < B; b++ {
				xt = append(xt, x[(b*T+tt)*C:(b*T+tt+1)*C]...)
			}
			yt := make([]float32, len(xt))
			w.Forward(yt, xt, B, 1, pc, LayerOptions{Threads: 2})
			for b := 0; b < B; b++ {
				kerneltest.Close(t, fmt.Sprintf("token %d seq %d", tt, b), yt[b*C:(b+1)*C], yw[(b*T+tt)*C:(b*T+tt+1)*C], kernel.Tolerance{RelRMS: 1e-5, MaxRel: 1e-4})
			}
		}
	}
}

// prefillInt8Shapes: the int8act decompression at Kimi's widths (the VNNI
// GEMM's full panels and groups) and off them (a latent width off the
// group of 32, key counts off the 16-row panels), queries in several
// blocks of the default 128 with a tail, with and without a prefix.
var prefillInt8Shapes = []kernel.Shape{
	kernel.MakeShape(prefillKeys, 150, 0, 4, 128, 64, 128, 512),
	kernel.MakeShape(prefillKeys, 131, 37, 3, 128, 64, 128, 512),
	kernel.MakeShape(prefillKeys, 70, 3, 3, 16, 8, 24, 40),
	kernel.MakeShape(prefillKeys, 1, 40, 2, 16, 8, 24, 32),
	kernel.MakeShape(prefillKeys, 20, 300, 2, 128, 64, 128, 512), // a long cached prefix: the absorbed form's case
}

// TestPrefillInt8: every int8act prefill variant at prefillInt8Shapes on
// 1, 2, 3 and 7 threads is within the class tolerance of the float64
// reference and bit-identical across the thread counts; and the same
// check fails with a planted error: W_UV 5% too large, or head 0's rows
// of W_UK those of head 1 (in the f32 and the Q8 copies: the absorbed form
// reads the f32 ones).
func TestPrefillInt8(t *testing.T) {
	op := kernel.LookupOp(OpPrefill)
	kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, v *kernel.Variant) {
		if v.Class != kernel.ClassInt8Act {
			t.Skipf("class %s", v.Class)
		}
		tol := op.Tolerance(v.Class, nil)
		fn := v.Impl.(prefillFn)
		for _, s := range prefillInt8Shapes {
			pb, err := newPrefillProblem(s, kernel.F32, 1)
			if err != nil {
				t.Fatal(err)
			}
			p := pb.(*problem).pre
			want := make([]float32, len(p.O))
			ref := *p
			ref.O = want
			prefillRef(&ref, 1, nil)
			run := func(p *Prefill, threads int) []float32 {
				clear(p.O)
				fn(p, threads, v.DefaultConfig(s, threads).Params)
				return slices.Clone(p.O)
			}
			one := run(p, 1)
			d := kerneltest.Close(t, s.String(), one, want, tol)
			t.Logf("%s: rel RMS %.2e, max rel %.2e vs float64 reference", s, d.RelRMS, d.MaxRel)
			for _, th := range []int{2, 3, 7} {
				got := run(p, th)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(one[i]) {
						t.Fatalf("%s threads=%d: O[%d] = %v, 1 thread %v", s, th, i, got[i], one[i])
					}
				}
			}
			// planted errors: the check above must fail on them
			wuv := slices.Clone(p.WUV)
			for i := range wuv {
				wuv[i] *= 1.05
			}
			bad := *p // planted in both copies: the absorbed form reads the f32 ones
			bad.WUV = wuv
			if bad.WUVq, err = quant.Quantize(kernel.Q8, wuv, p.NH*p.DV, p.R, false); err != nil {
				t.Fatal(err)
			}
			if _, err := kernel.Compare(run(&bad, 2), want, tol); err == nil {
				t.Errorf("%s: W_UV 5%% too large passes the tolerance", s)
			}
			wuk := slices.Clone(p.WUK) // head 0 decompressed with head 1's W_UK
			copy(wuk[:p.DN*p.R], p.WUK[p.DN*p.R:2*p.DN*p.R])
			bad = *p
			bad.WUK = wuk
			if bad.WUKq, err = quant.Quantize(kernel.Q8, wuk, p.NH*p.DN, p.R, false); err != nil {
				t.Fatal(err)
			}
			if _, err := kernel.Compare(run(&bad, 2), want, tol); err == nil {
				t.Errorf("%s: head 0 with head 1's W_UK passes the tolerance", s)
			}
		}
	})
}

// TestPackKeysQ8: packKeysQ8's panels are quant.Quantize's Q8 packing of
// the same rows: equal scales, equal codes but where w/d lies within 1e-4
// of a rounding tie (it multiplies by 1/d where Quantize divides), at key
// widths on and off the group of 32 (a group straddling the two parts, a
// padded one), tiny rows (subnormal f16 scales) and a partial last panel;
// and it is no copy of Quantize
// by accident: a code off by one is caught.
func TestPackKeysQ8(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, w := range [][3]int{{128, 64, 37}, {16, 8, 16}, {40, 3, 33}} { // DN, DR, rows
		DN, DR, N := w[0], w[1], w[2]
		QW := DN + DR
		rows := randn(r, N*QW, 2)
		for i := 0; i < len(rows); i += 97 {
			rows[i] *= 40 // outliers set some groups' scales
		}
		for i := 5 * QW; i < 7*QW; i++ {
			rows[i] *= 1e-4 // subnormal f16 scales, ~1% coarse (the clamped path)
		}
		want, err := quant.Quantize(kernel.Q8, rows, N, QW, false)
		if err != nil {
			t.Fatal(err)
		}
		got, buf := newQ8(N, QW)
		defer scratch.Put(buf)
		row, zero := make([]float32, got.Kp), make([]float32, max(DN, DR))
		var kr, pr [16][]float32
		pb := got.PanelBytes()
		for p := 0; p < got.Panels(); p++ {
			for l := range 16 {
				kr[l], pr[l] = zero[:DN], zero[:DR]
				if j := 16*p + l; j < N {
					kr[l], pr[l] = rows[j*QW:j*QW+DN], rows[j*QW+DN:(j+1)*QW]
				}
			}
			packKeysQ8(got.Data[p*pb:(p+1)*pb], &kr, &pr, row)
		}
		check := func(got *quant.Matrix) error {
			for p := 0; p < got.Panels(); p++ {
				for g := 0; g < got.Groups(); g++ {
					gr, wr := got.Panel(p)[g*quant.Q8GroupBytes:], want.Panel(p)[g*quant.Q8GroupBytes:]
					for l := range 16 {
						off := 8*quant.LineBytes + 2*l
						if gr[off] != wr[off] || gr[off+1] != wr[off+1] {
							return fmt.Errorf("panel %d group %d row %d: scale %#x, want %#x", p, g, l, gr[off:off+2], wr[off:off+2])
						}
						d := half.F16ToF32(binary.LittleEndian.Uint16(wr[off:]))
						for j := range 32 {
							o := (j/4)*quant.LineBytes + 4*l + j%4
							if gr[o] == wr[o] {
								continue
							}
							k, n := g*32+j, 16*p+l
							if n >= N && d == 0 {
								continue // a padding row: value 0 either way (Quantize leaves code 0, packKeysQ8 writes 128)
							}
							if n >= N || k >= QW {
								return fmt.Errorf("padding row %d column %d: code %d, want %d", n, k, gr[o], wr[o])
							}
							x := float64(rows[n*QW+k]) / float64(d)
							if frac := x - math.Floor(x); math.Abs(frac-0.5) > 1e-4 {
								return fmt.Errorf("row %d column %d: code %d, want %d (w/d = %v)", n, k, gr[o], wr[o], x)
							}
						}
					}
				}
			}
			return nil
		}
		if err := check(got); err != nil {
			t.Errorf("DN=%d DR=%d N=%d: %v", DN, DR, N, err)
		}
		got.Data[4*3+1]++ // planted: one code of panel 0, group 0, row 3 off by one
		if check(got) == nil {
			t.Errorf("DN=%d DR=%d N=%d: a code off by one passes", DN, DR, N)
		}
	}
}

// TestRowMax: rowMax (the AVX-512 kernel on the bulk where the CPU has it,
// and with AVX-512 masked) equals the plain loop at lengths around the
// vector and unroll widths, with the maximum at every position class
// (first, in the bulk, in the tail) and ±Inf; it reads no element past
// len(x) (a larger guard value follows); a kernel that skipped the last
// vector would fail (the maximum placed there).
func TestRowMax(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	check := func(t *testing.T) {
		for _, n := range []int{1, 15, 16, 17, 31, 32, 48, 63, 64, 65, 79, 80, 128, 129, 513} {
			for _, at := range []int{0, n / 2, n - 1, (n &^ 15) - 1} {
				if at < 0 {
					continue
				}
				buf := randn(r, n+16, 1)
				x := buf[:n]
				for i := n; i < len(buf); i++ {
					buf[i] = 1e30 // guard cells: never the answer
				}
				x[at] = 7
				want := float32(math.Inf(-1))
				for _, v := range x {
					want = max(want, v)
				}
				if got := rowMax(x); got != want || want != 7 {
					t.Fatalf("n=%d max at %d: %v, want %v", n, at, got, want)
				}
			}
		}
		x := []float32{1, float32(math.Inf(1))}
		x = append(x, randn(r, 30, 1)...)
		if got := rowMax(x); !math.IsInf(float64(got), 1) {
			t.Errorf("+Inf: %v", got)
		}
		for i := range x {
			x[i] = float32(math.Inf(-1))
		}
		if got := rowMax(x); !math.IsInf(float64(got), -1) {
			t.Errorf("all −Inf: %v", got)
		}
	}
	t.Run("best", check)
	t.Run("noavx512", func(t *testing.T) {
		defer cpu.Disable(cpu.AVX512F)()
		check(t)
	})
}

// TestPrefillClasses: the prefill may use int8act only where the caller's
// classes allow it and the layer's projections are int8-quantized (f32
// always); SplitKVB keeps the Q8 copies of W_UK and W_UV exactly there.
func TestPrefillClasses(t *testing.T) {
	f32, i8, bf := kernel.ClassF32, kernel.ClassInt8Act, kernel.ClassBF16Act
	for _, c := range []struct {
		classes []kernel.Class
		dt      kernel.DType
		want    []kernel.Class
	}{
		{nil, kernel.Q4, []kernel.Class{f32, i8}},
		{nil, kernel.Q8, []kernel.Class{f32, i8}},
		{nil, kernel.F32, []kernel.Class{f32}},
		{nil, kernel.BF16, []kernel.Class{f32}},
		{[]kernel.Class{f32}, kernel.Q8, []kernel.Class{f32}},
		{[]kernel.Class{bf}, kernel.Q8, []kernel.Class{f32}},
		{[]kernel.Class{i8}, kernel.Q6, []kernel.Class{f32, i8}},
		{[]kernel.Class{f32, i8, bf}, kernel.F32, []kernel.Class{f32}},
	} {
		if got := prefillClasses(c.classes, c.dt); !slices.Equal(got, c.want) {
			t.Errorf("prefillClasses(%v, %s) = %v, want %v", c.classes, c.dt, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(13, 13))
	for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8, kernel.Q4} {
		w := &LayerWeights{Hidden: 64, Heads: 2, DN: 16, DR: 8, DV: 16, R: 32}
		var err error
		if w.Q, err = quant.Quantize(dt, randn(r, 2*24*64, 0.1), 2*24, 64, false); err != nil {
			t.Fatal(err)
		}
		if err := w.SplitKVB(randn(r, 2*32*32, 0.1)); err != nil {
			t.Fatal(err)
		}
		if q8 := w.WUKq != nil && w.WUVq != nil; q8 != (dt != kernel.F32 && dt != kernel.BF16) {
			t.Errorf("projections %s: Q8 copies of W_UK, W_UV: %v", dt, q8)
		}
	}
}

// TestPickPrefillAbsorbed: without a profile, a cached prefix at least as
// long as the new tokens runs the absorbed form — its int8act scores where
// int8act is allowed and absorbed_int8 runs, f32 otherwise — and a shorter
// one the decompressed form.
func TestPickPrefillAbsorbed(t *testing.T) {
	i8 := []kernel.Class{kernel.ClassF32, kernel.ClassInt8Act}
	f32 := []kernel.Class{kernel.ClassF32}
	wantI8 := "absorbed"
	if v, err := kernel.Lookup(OpPrefill + "/absorbed_int8"); err == nil && v.Available() {
		wantI8 = "absorbed_int8"
	}
	for _, c := range []struct {
		prefix, T int
		classes   []kernel.Class
		want      string
	}{
		{4096, 64, i8, wantI8},
		{64, 64, i8, wantI8},
		{4096, 64, f32, "absorbed"},
		{0, 512, f32, kernel.Default(OpPrefill, kernel.F32, f32...).Name},
		{63, 64, i8, kernel.Default(OpPrefill, kernel.F32, i8...).Name},
	} {
		s := kernel.MakeShape(prefillKeys, c.T, c.prefix, 32, 128, 64, 128, 512)
		got := kernel.Rules{Classes: c.classes}.Choose(OpPrefill, kernel.F32, s, 2)
		if got.Variant == nil || got.Variant.Name != c.want {
			t.Errorf("prefix %d, %d tokens, classes %v: %v, want %s", c.prefix, c.T, c.classes, got.Variant, c.want)
		}
	}
}
