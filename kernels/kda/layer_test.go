package kda

import (
	"encoding/json"
	"math"
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
