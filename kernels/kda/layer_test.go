package kda

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/quant"
)

// loadLayer reads a kda_layer golden file's weights (f32 matrices).
func loadLayer(t *testing.T, f *golden.File) *LayerWeights {
	var cfg struct {
		Hidden     int     `json:"hidden_size"`
		Eps        float32 `json:"rms_norm_eps"`
		LinearAttn struct {
			Heads   int `json:"num_heads"`
			HeadDim int `json:"head_dim"`
			Conv    int `json:"short_conv_kernel_size"`
		} `json:"linear_attn_config"`
	}
	if err := json.Unmarshal(f.Config, &cfg); err != nil {
		t.Fatalf("%s: config: %v", f.Name(), err)
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
	w := &LayerWeights{Hidden: cfg.Hidden, Heads: cfg.LinearAttn.Heads, HeadDim: cfg.LinearAttn.HeadDim, ConvWidth: cfg.LinearAttn.Conv, Eps: cfg.Eps,
		Q: mat("q_proj.weight"), K: mat("k_proj.weight"), V: mat("v_proj.weight"), FA: mat("f_a_proj.weight"), FB: mat("f_b_proj.weight"),
		Beta: mat("b_proj.weight"), GA: mat("g_a_proj.weight"), GB: mat("g_b_proj.weight"), O: mat("o_proj.weight"),
		ConvQ: f.F32(t, p+"q_conv1d.weight"), ConvK: f.F32(t, p+"k_conv1d.weight"), ConvV: f.F32(t, p+"v_conv1d.weight"),
		ALog: f.F32(t, p+"A_log"), DtBias: f.F32(t, p+"dt_bias"), ONorm: f.F32(t, p+"o_norm.weight")}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLayerGolden runs prefill → decode → extend on every kda_layer golden
// file with every prefill and decode variant, checking outputs, caches and
// the prefill's intermediate tensors.
func TestLayerGolden(t *testing.T) {
	for _, f := range golden.Load(t, golden.KDALayer) {
		t.Run(f.Name(), func(t *testing.T) {
			w := loadLayer(t, f)
			B := f.Dims(t, "x")[0]
			kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, pv *kernel.Variant) {
				kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, dv *kernel.Variant) {
					c := w.NewLayerCache(B)
					opt := LayerOptions{Threads: 2,
						Chunked:   &kernel.Choice{Variant: pv, Config: pv.DefaultConfig(nil, 2)},
						Recurrent: &kernel.Choice{Variant: dv, Config: dv.DefaultConfig(nil, 2)},
						Debug: func(name string, got []float32) {
							golden.Check(t, name, got, f.F32(t, name), 1e-4)
						}}
					for _, phase := range []string{"", "_decode", "_extend"} {
						x := f.F32(t, "x"+phase)
						T := f.Dims(t, "x"+phase)[1]
						y := make([]float32, len(x))
						w.Forward(y, x, B, T, c, opt)
						opt.Debug = nil // dbg.* tensors exist for the prefill only
						golden.Check(t, "y"+phase, y, f.F32(t, "y"+phase), 1e-4)
						suffix := map[string]string{"": ".prefill", "_decode": ".decode", "_extend": ".extend"}[phase]
						golden.Check(t, "state"+suffix, c.State, f.F32(t, "state"+suffix), 1e-4)
						golden.Check(t, "conv_q"+suffix, c.ConvQ, f.F32(t, "conv_q"+suffix), 1e-4)
						golden.Check(t, "conv_k"+suffix, c.ConvK, f.F32(t, "conv_k"+suffix), 1e-4)
						golden.Check(t, "conv_v"+suffix, c.ConvV, f.F32(t, "conv_v"+suffix), 1e-4)
					}
				})
			})
		})
	}
}

func TestSoftplusStable(t *testing.T) {
	// softplusGate with −exp(A_log) = −1 and no bias is −softplus(z), on
	// a row longer than one vector block (its tail done by the scalar exp)
	zs := []float32{-1000, -100, -30, -17, -1, -1e-3, 0, 1e-7, 1, 2.5, 17, 30, 88, 100, 1000}
	for len(zs) < 150 {
		zs = append(zs, float32(len(zs)-75)/3)
	}
	g := append([]float32(nil), zs...)
	negA := []float32{-1}
	softplusGate(g, make([]float32, len(g)), negA, len(g))
	for i, z := range zs {
		zz := float64(z)
		want := math.Max(zz, 0) + math.Log1p(math.Exp(-math.Abs(zz)))
		s := -float64(g[i])
		if s < 0 || s != s || math.Abs(s-want) > 2e-7*math.Max(want, 1e-30)+1e-45 {
			t.Errorf("softplus(%v) = %v, want %v", z, s, want)
		}
	}
}

// convTol bounds convSiLU against its float64 reference, relative to the
// sum of |tap·input| (the f32 rounding of a W-term sum) plus an absolute
// floor for SiLU near 0.
const convTol = 1e-6

// convRef is the short convolution with SiLU in float64: out[b,t,c] =
// silu(Σ_j taps[c·W+j]·in(t−W+1+j)), inputs before 0 coming from the
// window (input −W+j at win[j]); it returns the outputs, the sums of
// |tap·input| and the new windows (inputs T−W … T−1).
func convRef(u, cache, taps []float32, B, T, HD, W int) (out, mag []float64, win []float32) {
	out, mag, win = make([]float64, B*T*HD), make([]float64, B*T*HD), make([]float32, len(cache))
	for b := 0; b < B; b++ {
		for c := 0; c < HD; c++ {
			in := func(t int) float32 { // input t of channel c, t ≥ −W
				if t < 0 {
					return cache[(b*HD+c)*W+W+t]
				}
				return u[(b*T+t)*HD+c]
			}
			for t := 0; t < T; t++ {
				var s, m float64
				for j := 0; j < W; j++ {
					p := float64(taps[c*W+j]) * float64(in(t-W+1+j))
					s, m = s+p, m+math.Abs(p)
				}
				out[(b*T+t)*HD+c], mag[(b*T+t)*HD+c] = s/(1+math.Exp(-s)), m
			}
			for j := 0; j < W; j++ {
				win[(b*HD+c)*W+j] = in(T - W + j)
			}
		}
	}
	return out, mag, win
}

// TestConvSiLU checks convSiLU against convRef on head widths below, at
// and across the channel block (H·D = 650 > convBlock), batches, prompts
// shorter and longer than the window, and thread counts 1, 2, 3, 7 (whose
// results must be the same bits), and that two calls on a split prompt
// or one call per token (convDirect below convDirectT) equal one call.
func TestConvSiLU(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sh := range []struct{ H, D, W int }{{3, 7, 4}, {5, 48, 4}, {2, 128, 4}, {1, 130, 3}, {2, 17, 2}, {5, 130, 4}} {
		HD := sh.H * sh.D
		w := &LayerWeights{Heads: sh.H, HeadDim: sh.D, ConvWidth: sh.W}
		rnd := func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(r.NormFloat64())
			}
			return s
		}
		w.ConvQ, w.ConvK, w.ConvV = rnd(HD*sh.W), rnd(HD*sh.W), rnd(HD*sh.W)
		for _, B := range []int{1, 2} {
			for _, T := range []int{1, 3, convDirectT - 1, convDirectT, 33} {
				name := fmt.Sprintf("H=%d/D=%d/W=%d/B=%d/T=%d", sh.H, sh.D, sh.W, B, T)
				c0 := w.NewLayerCache(B)
				for _, s := range [][]float32{c0.ConvQ, c0.ConvK, c0.ConvV} {
					copy(s, rnd(len(s)))
				}
				in := [3][]float32{rnd(B * T * HD), rnd(B * T * HD), rnd(B * T * HD)}
				var first [3][]float32
				for _, th := range []int{1, 2, 3, 7} {
					c := w.NewLayerCache(B)
					copy(c.ConvQ, c0.ConvQ)
					copy(c.ConvK, c0.ConvK)
					copy(c.ConvV, c0.ConvV)
					got := [3][]float32{slices.Clone(in[0]), slices.Clone(in[1]), slices.Clone(in[2])}
					w.convSiLU(got[0], got[1], got[2], c, B, T, th)
					for i, x := range []struct{ cache, taps, win []float32 }{{c0.ConvQ, w.ConvQ, c.ConvQ}, {c0.ConvK, w.ConvK, c.ConvK}, {c0.ConvV, w.ConvV, c.ConvV}} {
						want, mag, win := convRef(in[i], x.cache, x.taps, B, T, HD, sh.W)
						for j, g := range got[i] {
							if e := math.Abs(float64(g) - want[j]); !(e <= convTol*(mag[j]+1)) {
								t.Fatalf("%s threads=%d tensor %d: out[%d] (b %d, t %d, channel %d) = %v, want %v",
									name, th, i, j, j/(T*HD), j/HD%T, j%HD, g, want[j])
							}
						}
						if !slices.Equal(x.win, win) {
							t.Fatalf("%s threads=%d tensor %d: window %v, want %v", name, th, i, x.win, win)
						}
					}
					if th == 1 {
						first = got
					} else if !slices.Equal(got[0], first[0]) || !slices.Equal(got[1], first[1]) || !slices.Equal(got[2], first[2]) {
						t.Fatalf("%s: threads=%d differs from threads=1", name, th)
					}
				}
				if T < 2 {
					continue
				}
				// token by token (convDirect): the same bits as in one call
				c1 := w.NewLayerCache(B)
				copy(c1.ConvQ, c0.ConvQ)
				copy(c1.ConvK, c0.ConvK)
				copy(c1.ConvV, c0.ConvV)
				for tok := 0; tok < T; tok++ {
					var p [3][]float32
					for i := range p {
						for b := 0; b < B; b++ {
							p[i] = append(p[i], in[i][(b*T+tok)*HD:(b*T+tok+1)*HD]...)
						}
					}
					w.convSiLU(p[0], p[1], p[2], c1, B, 1, 3)
					for i := range p {
						for b := 0; b < B; b++ {
							if !slices.Equal(p[i][b*HD:(b+1)*HD], first[i][(b*T+tok)*HD:(b*T+tok+1)*HD]) {
								t.Fatalf("%s: tensor %d, token %d of sequence %d differs when fed token by token", name, i, tok, b)
							}
						}
					}
				}
				// a prompt in two pieces: the same bits as in one call
				c := w.NewLayerCache(B)
				copy(c.ConvQ, c0.ConvQ)
				copy(c.ConvK, c0.ConvK)
				copy(c.ConvV, c0.ConvV)
				t1 := T / 2
				for _, part := range [][2]int{{0, t1}, {t1, T}} {
					n := part[1] - part[0]
					var p [3][]float32
					for i := range p {
						for b := 0; b < B; b++ {
							p[i] = append(p[i], in[i][(b*T+part[0])*HD:(b*T+part[1])*HD]...)
						}
					}
					w.convSiLU(p[0], p[1], p[2], c, B, n, 2)
					for i := range p {
						for b := 0; b < B; b++ {
							if !slices.Equal(p[i][b*n*HD:(b+1)*n*HD], first[i][(b*T+part[0])*HD:(b*T+part[1])*HD]) {
								t.Fatalf("%s: tensor %d, tokens [%d, %d) of sequence %d differ when fed in two calls", name, i, part[0], part[1], b)
							}
						}
					}
				}
			}
		}
	}
}
