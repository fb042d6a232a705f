package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
)

// goldenGGUFs are the golden folder's GGUF files of the tiny model made by
// llama.cpp (gguf/ and gguf-community/), and the tiny model's config.
func goldenGGUFs(t *testing.T) ([]string, *arch.Config) {
	t.Helper()
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, sub := range []string{"gguf", "gguf-community"} {
		p, _ := filepath.Glob(filepath.Join(dir, sub, "*.gguf"))
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		t.Skipf("no gguf/*.gguf in %s", dir)
	}
	cfg, err := arch.Load(filepath.Join(dir, "tiny_model"))
	if err != nil {
		t.Fatal(err)
	}
	return paths, cfg
}

func fileTypeByID(id uint64) (GGUFFileType, bool) {
	for _, ft := range GGUFFileTypes {
		if uint64(ft.ID) == id {
			return ft, true
		}
	}
	return GGUFFileType{}, false
}

// TestSynthGGUFTypesGolden: for each golden file llama-quantize wrote (its
// general.file_type one of GGUFFileTypes), LlamaQuantTypes gives every
// tensor the file's type, and the synthetic file of the tiny model's
// config in that type has the file's tensors (names, dims, types, order,
// hence offsets) and metadata (keys in order, values but general.name).
// The F32 file is the converter's own (its order and 4-D dims differ):
// its types and metadata values are compared.
func TestSynthGGUFTypesGolden(t *testing.T) {
	paths, cfg := goldenGGUFs(t)
	seen := map[string]bool{}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := gguf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			id, err := f.Metadata.Uint("general.file_type")
			if err != nil {
				t.Fatal(err)
			}
			ft, ok := fileTypeByID(id)
			if !ok {
				t.Skipf("file type %d is not one krun synth writes", id)
			}
			seen[ft.Name] = true
			fcfg, err := ConfigFromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			var shapes []GGUFTensorShape
			for _, ti := range f.Tensors {
				shapes = append(shapes, GGUFTensorShape{ti.Name, trimOnes(ti.Dims)})
			}
			types, err := LlamaQuantTypes(ft, fcfg, shapes)
			if err != nil {
				t.Fatal(err)
			}
			for i, ti := range f.Tensors {
				if types[i] != ti.Type {
					t.Errorf("%s %v: LlamaQuantTypes says %s, llama-quantize wrote %s", ti.Name, ti.Dims, types[i], ti.Type)
				}
			}
			s, err := NewSynthGGUF(cfg, ft, 1)
			if err != nil {
				t.Fatal(err)
			}
			converter := ft.ID == ftypeF32
			if len(s.Tensors) != len(f.Tensors) {
				t.Fatalf("%d tensors, the file has %d", len(s.Tensors), len(f.Tensors))
			}
			for _, st := range s.Tensors {
				ti, ok := f.Tensor(st.Name)
				switch {
				case !ok:
					t.Errorf("%s: not in the file", st.Name)
				case !slices.Equal(st.Dims, trimOnes(ti.Dims)) || st.Type != ti.Type:
					t.Errorf("%s: %s %v, the file's %s %v", st.Name, st.Type, st.Dims, ti.Type, ti.Dims)
				}
			}
			if !converter {
				for i, st := range s.Tensors {
					if ti := f.Tensors[i]; st.Name != ti.Name || !slices.Equal(st.Dims, ti.Dims) {
						t.Errorf("tensor %d: %s %v, the file's %s %v", i, st.Name, st.Dims, ti.Name, ti.Dims)
					}
				}
				// with the file's name, the header is the file's, byte for byte
				for i := range s.Meta {
					if s.Meta[i].Key == "general.name" {
						s.Meta[i].Value, _ = f.Metadata.Get("general.name")
					}
				}
				raw, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := s.Write(&b, 1, nil); err != nil {
					t.Fatal(err)
				}
				start := f.Tensors[0].FileOffset - f.Tensors[0].Offset
				if b.Len() != len(raw) || !bytes.Equal(b.Bytes()[:start], raw[:start]) {
					t.Errorf("%d bytes, the file's %d; headers (%d bytes) equal: %v", b.Len(), len(raw), start, bytes.Equal(b.Bytes()[:start], raw[:start]))
				}
			}
			var keys []string
			for i, kv := range s.Meta {
				keys = append(keys, kv.Key)
				want, ok := f.Metadata.Get(kv.Key)
				if !ok {
					t.Errorf("metadata %s: not in the file", kv.Key)
					continue
				}
				if kv.Key != "general.name" && (kv.Value.Type != want.Type || kv.Value.String() != want.String()) {
					t.Errorf("metadata %d %s = %s %s, the file's %s %s", i, kv.Key, kv.Value.Type, kv.Value, want.Type, want)
				}
			}
			if fk := f.Metadata.Keys(); !converter && !slices.Equal(keys, fk) || converter && len(keys) != len(fk) {
				t.Errorf("metadata keys\n%v\nthe file's\n%v", keys, fk)
			}
		})
	}
	for _, n := range []string{"F32", "Q8_0", "Q4_0", "Q4_K_M", "Q3_K_M", "Q2_K", "IQ4_XS", "MXFP4_MOE"} {
		if !seen[n] {
			t.Errorf("no golden file of type %s checked", n)
		}
	}
}

// TestSynthGGUFTypes48B: llama-quantize's rules at Kimi-Linear-48B-A3B's
// widths and 27 layers (256 experts: none of the 8-expert rules; layer 0
// KDA: GQA 0; KDA layers 0-2, 4-6, …; attn_v's order the KDA layers'),
// and the fallbacks of its 128-wide rows (ssm_f_b, ssm_g_b, attn_k_b).
func TestSynthGGUFTypes48B(t *testing.T) {
	cfg, err := SyntheticConfig(27)
	if err != nil {
		t.Fatal(err)
	}
	const (
		f32, f16, bf16, q8, q4, q5, q51 = gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeQ5_1
		q2k, q3k, q4k, q5k, q6k         = gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K
		iq4xs, iq4nl, mx                = gguf.TypeIQ4_XS, gguf.TypeIQ4_NL, gguf.TypeMXFP4
	)
	always := map[string]gguf.Type{ // whatever the type
		"output_norm.weight": f32, "blk.0.attn_norm.weight": f32, "blk.0.ssm_a": f32, "blk.0.ssm_dt.bias": f32,
		"blk.0.ssm_conv1d_q.weight": f32, "blk.0.ssm_norm.weight": f32, "blk.3.attn_kv_a_norm.weight": f32,
		"blk.5.ffn_gate_inp.weight": f32, "blk.5.exp_probs_b.bias": f32, "blk.26.ffn_norm.weight": f32,
	}
	for _, c := range []struct {
		ft   string
		want map[string]gguf.Type
	}{
		{"F32", map[string]gguf.Type{"token_embd.weight": f32, "blk.1.ffn_up_exps.weight": f32}},
		{"F16", map[string]gguf.Type{"token_embd.weight": f16, "output.weight": f16, "blk.3.attn_k_b.weight": f16, "blk.0.ssm_f_b.weight": f16}},
		{"BF16", map[string]gguf.Type{"token_embd.weight": bf16, "blk.1.ffn_down_exps.weight": bf16}},
		{"Q8_0", map[string]gguf.Type{
			"token_embd.weight": q8, "output.weight": q8, "blk.0.attn_v.weight": q8, "blk.0.ssm_f_b.weight": q8,
			"blk.3.attn_k_b.weight": q8, "blk.26.ffn_down_exps.weight": q8,
		}},
		{"Q4_0", map[string]gguf.Type{
			"token_embd.weight": q4, "output.weight": q6k, "blk.0.attn_v.weight": q4, "blk.0.ssm_f_b.weight": q4,
			"blk.3.attn_k_b.weight": q4, "blk.26.ffn_down_exps.weight": q4, "blk.1.ssm_beta.weight": q4,
		}},
		{"Q4_K_M", map[string]gguf.Type{
			"token_embd.weight": q4k, "output.weight": q6k,
			// attn_v: the i-th of 20 KDA layers; use_more_bits(i, 20): i < 2, i ≥ 17, (i−2)%3 == 2
			"blk.0.attn_v.weight": q6k, "blk.1.attn_v.weight": q6k, "blk.2.attn_v.weight": q4k, // i = 0, 1, 2
			"blk.5.attn_v.weight": q6k, "blk.6.attn_v.weight": q4k, "blk.9.attn_v.weight": q6k, // i = 4, 5, 7
			"blk.20.attn_v.weight": q4k, "blk.21.attn_v.weight": q6k, "blk.22.attn_v.weight": q6k, "blk.25.attn_v.weight": q6k, // i = 15, 16, 17, 19
			// ffn_down of layer l of 27: l < 3, l ≥ 23, (l−3)%3 == 2
			"blk.0.ffn_down.weight": q6k, "blk.2.ffn_down_exps.weight": q6k, "blk.3.ffn_down_exps.weight": q4k,
			"blk.5.ffn_down_exps.weight": q6k, "blk.5.ffn_down_shexp.weight": q6k, "blk.6.ffn_down_exps.weight": q4k,
			"blk.22.ffn_down_exps.weight": q4k, "blk.23.ffn_down_exps.weight": q6k, "blk.26.ffn_down_exps.weight": q6k,
			"blk.1.ffn_gate_exps.weight": q4k, "blk.1.attn_output.weight": q4k, "blk.3.attn_output.weight": q4k,
			"blk.3.attn_q.weight": q4k, "blk.3.attn_kv_a_mqa.weight": q4k, "blk.3.attn_v_b.weight": q4k,
			"blk.3.attn_k_b.weight": q5, "blk.0.ssm_f_b.weight": q5, "blk.0.ssm_g_b.weight": q5, "blk.0.ssm_f_a.weight": q4k,
		}},
		{"Q3_K_M", map[string]gguf.Type{
			"token_embd.weight": q3k, "output.weight": q6k,
			"blk.0.attn_v.weight": q5k, "blk.1.attn_v.weight": q5k, "blk.2.attn_v.weight": q4k, "blk.25.attn_v.weight": q4k,
			"blk.0.ffn_down.weight": q5k, "blk.1.ffn_down_exps.weight": q4k, "blk.26.ffn_down_shexp.weight": q4k,
			"blk.0.attn_output.weight": q4k, "blk.26.attn_output.weight": q4k, "blk.1.ffn_up_exps.weight": q3k,
			"blk.0.attn_k.weight": q3k, "blk.0.ssm_f_b.weight": q4, "blk.3.attn_k_b.weight": q4, "blk.3.attn_v_b.weight": q3k,
		}},
		{"Q2_K", map[string]gguf.Type{
			"token_embd.weight": q2k, "output.weight": q6k,
			"blk.0.attn_v.weight": q3k, "blk.25.attn_v.weight": q3k, "blk.0.ffn_down.weight": q3k, "blk.9.ffn_down_exps.weight": q3k,
			"blk.9.ffn_down_shexp.weight": q3k, "blk.7.attn_output.weight": q3k, "blk.9.ffn_gate_exps.weight": q2k,
			"blk.7.attn_q.weight": q2k, "blk.7.attn_kv_a_mqa.weight": q2k, "blk.7.attn_k_b.weight": q4, "blk.9.ssm_g_b.weight": q4,
		}},
		{"IQ4_XS", map[string]gguf.Type{
			"token_embd.weight": iq4xs, "output.weight": q6k, "blk.0.attn_v.weight": iq4xs,
			"blk.0.ffn_down.weight": q5k, "blk.2.ffn_down_exps.weight": q5k, "blk.3.ffn_down_exps.weight": iq4xs,
			"blk.3.attn_k_b.weight": iq4nl, "blk.0.ssm_f_b.weight": iq4nl, "blk.3.attn_output.weight": iq4xs,
		}},
		{"Q5_K_M", map[string]gguf.Type{"blk.3.attn_k_b.weight": q51, "blk.0.attn_v.weight": q6k, "blk.3.attn_output.weight": q5k}},
		{"MXFP4_MOE", map[string]gguf.Type{
			"token_embd.weight": q8, "output.weight": q8, "blk.1.ffn_gate_exps.weight": mx, "blk.1.ffn_down_exps.weight": mx,
			"blk.1.ffn_up_shexp.weight": q8, "blk.3.attn_k_b.weight": mx, "blk.3.attn_v_b.weight": mx, "blk.0.attn_v.weight": q8,
			"blk.0.ssm_f_b.weight": q8,
		}},
	} {
		t.Run(c.ft, func(t *testing.T) {
			ft, err := ParseGGUFFileType(strings.ToLower(c.ft))
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSynthGGUF(cfg, ft, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]gguf.Type{}
			for _, x := range s.Tensors {
				got[x.Name] = x.Type
			}
			for _, m := range []map[string]gguf.Type{always, c.want} {
				for name, want := range m {
					if g, ok := got[name]; !ok || g != want {
						t.Errorf("%s: %s, want %s", name, g, want)
					}
				}
			}
		})
	}
	if _, err := ParseGGUFFileType("Q1_0"); err == nil || !strings.Contains(err.Error(), "Q4_K_M") {
		t.Errorf("unknown type: %v", err)
	}
}

// synthTiny writes the tiny model's synthetic file of type ft.
func synthTiny(t *testing.T, cfg *arch.Config, ft string, seed uint64, threads int) []byte {
	t.Helper()
	typ, err := ParseGGUFFileType(ft)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSynthGGUF(cfg, typ, seed)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Write(&b, threads, nil); err != nil {
		t.Fatal(err)
	}
	if size, err := s.Size(); err != nil || size != int64(b.Len()) {
		t.Fatalf("Size %d, %v; wrote %d", size, err, b.Len())
	}
	return b.Bytes()
}

// TestSynthGGUFTiny: the tiny model's synthetic file of each type opens;
// its metadata gives back the config; the GGUF source finds every tensor
// with its shape (a type krun does not read yet is named as such); the
// constant tensors hold their values; a file of a type krun reads loads
// and runs (finite logits).
func TestSynthGGUFTiny(t *testing.T) {
	_, cfg := goldenGGUFs(t)
	dir := t.TempDir()
	for _, ft := range GGUFFileTypes {
		t.Run(ft.Name, func(t *testing.T) {
			p := filepath.Join(dir, ft.Name+".gguf")
			if err := os.WriteFile(p, synthTiny(t, cfg, ft.Name, 1, 2), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ConfigFromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			if got.HiddenSize != cfg.HiddenSize || got.NumExperts != cfg.NumExperts || got.LinearAttn.NumHeads != cfg.LinearAttn.NumHeads ||
				!slices.Equal(got.LinearAttn.FullAttnLayers, cfg.LinearAttn.FullAttnLayers) || got.VocabSize != cfg.VocabSize {
				t.Errorf("config from the file %+v differs from %+v", got, cfg)
			}
			readable := true
			for _, ti := range f.Tensors {
				readable = readable && ggmlReadable(ti.Type)
			}
			// (a type krun does not read yet may be named, nothing else)
			if _, err = NewGGUFSource(f, got, 1); err != nil && (readable || strings.Contains(err.Error(), "missing") ||
				strings.Contains(err.Error(), "mis-shaped") || strings.Contains(err.Error(), "extra")) {
				t.Fatal(err)
			}
			for name, want := range map[string]float32{"output_norm.weight": 1, "blk.0.ssm_a": -1, "blk.1.exp_probs_b.bias": 0, "blk.0.ssm_dt.bias": 0} {
				b, _ := f.TensorData(name)
				for i := 0; i < len(b); i += 4 {
					if v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:])); v != want {
						t.Fatalf("%s[%d] = %g, want %g", name, i/4, v, want)
					}
				}
			}
			b, _ := f.TensorData("blk.0.ssm_conv1d_q.weight")
			var lo, hi float32
			for i := 0; i < len(b); i += 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
				lo, hi = min(lo, v), max(hi, v)
			}
			if lo < -0.5 || hi > 0.5 || hi-lo < 0.5 {
				t.Errorf("conv taps in [%g, %g], want spread over ±0.5", lo, hi)
			}
			if !readable || testing.Short() && ft.Name != "Q4_K_M" {
				return
			}
			m := mustLoadGGUF(t, p, LoadOptions{Runtime: Runtime{Threads: 1}})
			prompt := []int32{1, 5, 7, 300}
			lg, err := m.Prefill(m.NewState(0), prompt)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range lg {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("logit %d = %g", i, v)
				}
			}
			// the file's blocks in place equal its dequantized weights
			// (f32 activations: the int8 classes round their own)
			cls := []kernel.Class{kernel.ClassF32}
			logits := func(opt LoadOptions) []float32 {
				opt.Threads, opt.Classes = 1, cls
				m := mustLoadGGUF(t, p, opt)
				st := m.NewState(0)
				out, err := m.Prefill(st, prompt)
				if err != nil {
					t.Fatal(err)
				}
				out = slices.Clone(out)
				next, err := m.Decode([]*State{st}, []int32{9})
				if err != nil {
					t.Fatal(err)
				}
				return append(out, next[0]...)
			}
			if e := relRMS(logits(LoadOptions{}), logits(LoadOptions{Formats: Formats{DType: kernel.F32}})); !(e <= tolQuantPipeline) {
				t.Errorf("in place vs the dequantized weights: logits differ by %.3g relative RMS (> %g)", e, tolQuantPipeline)
			}
		})
	}
}

// TestSynthGGUFDeterministic: the same type and seed give the same bytes
// at 1 and 3 threads with chunks of a few rows (so that a tensor has many);
// another seed other bytes.
func TestSynthGGUFDeterministic(t *testing.T) {
	_, cfg := goldenGGUFs(t)
	old := synthGGUFChunk
	synthGGUFChunk = 1000
	defer func() { synthGGUFChunk = old }()
	for _, ft := range []string{"Q4_K_M", "MXFP4_MOE", "F16"} {
		a := synthTiny(t, cfg, ft, 7, 1)
		b := synthTiny(t, cfg, ft, 7, 3)
		c := synthTiny(t, cfg, ft, 8, 3)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: 1 and 3 threads wrote other bytes", ft)
		}
		if bytes.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 wrote the same bytes", ft)
		}
	}
	// the chunk size is part of the bytes, not the threads
	synthGGUFChunk = old
	if a, b := synthTiny(t, cfg, "Q8_0", 7, 1), synthTiny(t, cfg, "Q8_0", 7, 4); !bytes.Equal(a, b) {
		t.Error("Q8_0: 1 and 4 threads wrote other bytes")
	}
}

// TestSynthGGUFSizeLabel: the converter's size label of the 48B model
// (the tiny model's, 8x1.9M, is checked against the golden files).
func TestSynthGGUFSizeLabel(t *testing.T) {
	cfg, err := SyntheticConfig(27)
	if err != nil {
		t.Fatal(err)
	}
	if got := ggufSizeLabel(synthGGUFShapes(cfg)); got != "256x2.2B" {
		t.Errorf("size label %q, want 256x2.2B", got)
	}
	for n, want := range map[uint64]string{400: "0.40K", 1_900_000: "1.9M", 2_204_000_000: "2.2B", 48_000_000_000: "48B", 999_999: "1000K"} {
		if got := roundedCount(n); got != want {
			t.Errorf("roundedCount(%d) = %s, want %s", n, got, want)
		}
	}
}
