package model

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
)

// tinySynthConfig is SyntheticConfig(layers) at the golden tiny model's
// widths (hidden 256, 8 experts of 64, vocabulary 512).
func tinySynthConfig(t testing.TB, layers int) *arch.Config {
	t.Helper()
	c, err := SyntheticConfig(layers)
	if err != nil {
		t.Fatal(err)
	}
	c.VocabSize, c.HiddenSize, c.IntermediateSize, c.HeadDim = 512, 256, 256, 64
	c.NumAttentionHeads, c.NumKeyValueHeads, c.KVLoraRank, c.QKNopeHeadDim, c.QKRopeHeadDim, c.VHeadDim = 4, 4, 64, 32, 16, 32
	c.LinearAttn.NumHeads, c.LinearAttn.HeadDim = 4, 64
	c.NumExperts, c.NumExpertsPerToken, c.MoEIntermediateSize = 8, 2, 64
	c.BOSTokenID, c.EOSTokenID, c.PadTokenID = 1, 2, 511
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSyntheticConfig: Kimi's layer pattern, cut; 27 layers is the 48B
// config.
func TestSyntheticConfig(t *testing.T) {
	k := arch.Kimi48B()
	c, err := SyntheticConfig(27)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.LinearAttn.KDALayers, k.LinearAttn.KDALayers) || !slices.Equal(c.LinearAttn.FullAttnLayers, k.LinearAttn.FullAttnLayers) {
		t.Errorf("27 layers: KDA %v MLA %v, want Kimi's", c.LinearAttn.KDALayers, c.LinearAttn.FullAttnLayers)
	}
	for layers, mla := range map[int][]int{1: nil, 3: {3}, 4: {4}, 6: {4, 6}, 9: {4, 8, 9}} {
		c, err := SyntheticConfig(layers)
		if err != nil || !slices.Equal(c.LinearAttn.FullAttnLayers, mla) {
			t.Errorf("%d layers: MLA %v (%v), want %v", layers, c.LinearAttn.FullAttnLayers, err, mla)
		}
	}
}

// writeSynth writes a synthetic file of cfg and returns its path and bytes.
func writeSynth(t *testing.T, cfg *arch.Config, opt LoadOptions, seed uint64, threads int) (string, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "s.kt")
	opt.Threads = threads
	if err := WriteSynthetic(cfg, out, opt, seed, map[string]string{"preset": "test"}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	opt.Threads = 0
	if size, err := SyntheticFileSize(cfg, opt, seed, map[string]string{"preset": "test"}); err != nil || size != int64(len(b)) {
		t.Errorf("SyntheticFileSize = %d, %v; the file has %d bytes", size, err, len(b))
	}
	return out, b
}

// runSynth loads a synthetic file, prefills a few ids and decodes a few
// steps; every logit must be finite and the logits must vary. It returns
// the final hidden states of the prompt [T·C].
func runSynth(t *testing.T, path string) []float32 {
	t.Helper()
	m, err := LoadFile(path, LoadOptions{Runtime: Runtime{Threads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	st := m.NewState(0)
	var last []float32
	L := m.Shapes.Layers
	lg, err := m.PrefillWith(st, []int32{5, 77, 300, 12, 499, 6}, PrefillOptions{Hidden: func(i, pos int, h []float32) {
		if i == L {
			last = append(last, h...)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	all := [][]float32{lg}
	for _, id := range []int32{9, 400, 33} {
		d, err := m.Decode([]*State{st}, []int32{id})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, d[0])
	}
	for step, v := range all {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("step %d: logit %v", step, x)
			}
			lo, hi = min(lo, x), max(hi, x)
		}
		if !(hi > lo) {
			t.Errorf("step %d: every logit is %v", step, lo)
		}
	}
	return last
}

// TestSyntheticFile: a synthetic file in each of q4, q3, q2, q5, the K formats and a fit-style
// mix (experts per layer, the shared expert apart) loads and runs with
// finite logits, is marked synthetic, and has the same bytes at 1 and 3
// threads; another seed gives other bytes; SyntheticFileSize is exact.
func TestSyntheticFile(t *testing.T) {
	cfg := tinySynthConfig(t, 3)
	for name, opt := range map[string]LoadOptions{
		"q4":  {Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q4}},
		"q3":  {Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q3}},
		"q2":  {Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q2}},
		"q5":  {Formats: Formats{DType: kernel.Q5, ExpertDType: kernel.Q5}},
		"q4k": {Formats: Formats{DType: kernel.Q6K, ExpertDType: kernel.Q4K, HeadDType: kernel.Q5K}},
		"fit": {Formats: Formats{DType: kernel.Q8, AttnDType: kernel.Q6, GateDType: kernel.BF16, HeadDType: kernel.F32, ExpertDType: kernel.Q3, ExpertDTypeByLayer: map[int]kernel.DType{1: kernel.Q4, 2: kernel.Q3}, SharedDType: kernel.Q6}},
	} {
		t.Run(name, func(t *testing.T) {
			path, b1 := writeSynth(t, cfg, opt, 7, 1)
			_, b3 := writeSynth(t, cfg, opt, 7, 3)
			if !bytes.Equal(b1, b3) {
				t.Errorf("1 and 3 threads wrote different bytes")
			}
			if _, other := writeSynth(t, cfg, opt, 8, 2); bytes.Equal(b1, other) {
				t.Errorf("seeds 7 and 8 wrote the same bytes")
			}
			if !bytes.Contains(b1[:min(len(b1), 1<<16)], []byte(`"synthetic":"random weights (seed 7)`)) {
				t.Errorf("the header does not say synthetic")
			}
			runSynth(t, path)
		})
	}
}

// TestSyntheticDeep: 27 layers of random weights (tiny widths) keep the
// logits finite and the tokens apart: the final hidden states of
// different tokens are not one shared direction (the centred codes of
// quant.FillRandom; uniform codes' mean −d/2 would make them so).
func TestSyntheticDeep(t *testing.T) {
	cfg := tinySynthConfig(t, 27)
	path, _ := writeSynth(t, cfg, LoadOptions{Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q4}}, 1, 0)
	h := runSynth(t, path)
	C := cfg.HiddenSize
	T := len(h) / C
	worst := 0.0
	for i := 0; i < T; i++ {
		for j := i + 1; j < T; j++ {
			var dot, ni, nj float64
			for c := 0; c < C; c++ {
				a, b := float64(h[i*C+c]), float64(h[j*C+c])
				dot, ni, nj = dot+a*b, ni+a*a, nj+b*b
			}
			worst = max(worst, math.Abs(dot/math.Sqrt(ni*nj)))
		}
	}
	t.Logf("27 layers: largest |cosine| between two tokens' final hidden states %.3f", worst)
	if worst > 0.9 {
		t.Errorf("tokens collapse onto one direction: |cosine| %.3f", worst)
	}
}

// BenchmarkSyntheticSource: drawing a routed expert's matrix (1024×2304) in
// each quantized format, and the embedding table, at Kimi's widths
// (MB/s of packed bytes, per thread count).
func BenchmarkSyntheticSource(b *testing.B) {
	cfg, err := SyntheticConfig(2)
	if err != nil {
		b.Fatal(err)
	}
	const name = "model.layers.1.block_sparse_moe.experts.0.w1.weight"
	for _, threads := range []int{1, 2} {
		src := NewSyntheticSource(cfg, 1, threads)
		src.Reuse = true
		for _, dt := range []kernel.DType{kernel.Q8, kernel.Q6, kernel.Q4, kernel.Q3} {
			b.Run(fmt.Sprintf("tensor=expert/dtype=%s/threads=%d", dt, threads), func(b *testing.B) {
				for b.Loop() {
					m, err := src.Matrix(name, dt)
					if err != nil {
						b.Fatal(err)
					}
					b.SetBytes(int64(len(m.Data)))
				}
			})
		}
		b.Run(fmt.Sprintf("tensor=embedding/dtype=bf16/threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				_, e, err := src.Embedding("model.embed_tokens.weight")
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(e)))
			}
		})
	}
}

// TestSyntheticAhead: matrices drawn ahead are the ones drawn on demand,
// also when a call leaves the plan's order (the drawing ahead stops).
func TestSyntheticAhead(t *testing.T) {
	cfg := tinySynthConfig(t, 3)
	opt := LoadOptions{Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q4}}
	plan, err := TensorSpecs(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	direct := NewSyntheticSource(cfg, 3, 1)
	ahead := NewSyntheticSource(cfg, 3, 2)
	ahead.Ahead(plan)
	defer ahead.Close()
	var packed []TensorSpec
	for _, p := range plan {
		if p.Kind == Packed {
			packed = append(packed, p)
		}
	}
	for i, p := range packed {
		if i == 5 { // out of order: skip one
			continue
		}
		a, err := ahead.Matrix(p.Name, p.DType)
		if err != nil {
			t.Fatal(err)
		}
		d, err := direct.Matrix(p.Name, p.DType)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Data, d.Data) {
			t.Fatalf("%s (call %d): drawn ahead differs", p.Name, i)
		}
	}
}
