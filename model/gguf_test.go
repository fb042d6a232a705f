package model

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/half"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// ggufFiles finds the golden folder's GGUF copies of the tiny model
// (gguf/*.gguf and gguf-community/*.gguf) and the golden case of the
// checkpoint they were made from.
// The reference ("F32") file is the first whose tensors are all f32, f16
// or bf16 (unquantized: the bf16 checkpoint's values exactly); the others
// are the quantized ones.
func ggufFiles(t *testing.T) (c *tinyCase, f32 string, quantized []string) {
	t.Helper()
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "gguf", "*.gguf"))
	if len(paths) == 0 {
		t.Skipf("no gguf/*.gguf in %s", dir)
	}
	// the community types (iq4_nl, iq4_xs, mxfp4, …), where the folder has them
	community, _ := filepath.Glob(filepath.Join(dir, "gguf-community", "*.gguf"))
	paths = append(paths, community...)
	for _, tc := range loadTiny(t) {
		if filepath.Base(tc.f.Dir()) == "tiny_model" {
			c = tc
		}
	}
	if c == nil {
		t.Fatalf("no tiny_model golden case in %s", dir)
	}
	for _, p := range paths {
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		all := true
		for _, ti := range f.Tensors {
			all = all && (ti.Type == gguf.TypeF32 || ti.Type == gguf.TypeF16 || ti.Type == gguf.TypeBF16)
		}
		f.Close()
		if all && f32 == "" {
			f32 = p
		} else {
			quantized = append(quantized, p)
		}
	}
	if f32 == "" {
		t.Fatalf("no unquantized (f32/f16/bf16) GGUF among %v", paths)
	}
	return c, f32, quantized
}

func mustLoadGGUF(t testing.TB, path string, opt LoadOptions) *Model {
	t.Helper()
	m, err := LoadGGUF(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestGGUFConfig: the metadata gives the checkpoint's config.
func TestGGUFConfig(t *testing.T) {
	c, f32, quantized := ggufFiles(t)
	want, err := arch.Load(c.f.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{f32}, quantized...) {
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ConfigFromGGUF(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got.Shapes() != want.Shapes() {
			t.Errorf("%s: shapes %+v, want %+v", filepath.Base(p), got.Shapes(), want.Shapes())
		}
		if routerConfig(got) != routerConfig(want) || got.RMSNormEps != want.RMSNormEps || got.ModelMaxLength != want.ModelMaxLength ||
			!slices.Equal(got.LinearAttn.KDALayers, want.LinearAttn.KDALayers) || !slices.Equal(got.LinearAttn.FullAttnLayers, want.LinearAttn.FullAttnLayers) ||
			got.BOSTokenID != want.BOSTokenID || got.EOSTokenID != want.EOSTokenID {
			t.Errorf("%s: config %+v, want %+v", filepath.Base(p), got, want)
		}
	}
}

// TestGGUFTensors: every tensor of the F32 file (an f16 one: rounded to
// f16), through the source, is the checkpoint's tensor: names, the reversed shapes, the stacked experts,
// the conv taps and kv_b_proj (un-split) bit for bit, A_log to the value
// whose −exp is the file's (within an ulp of the checkpoint's).
func TestGGUFTensors(t *testing.T) {
	c, f32, _ := ggufFiles(t)
	cfg, err := arch.Load(c.f.Dir())
	if err != nil {
		t.Fatal(err)
	}
	ck, err := NewCheckpointSource(c.f.Dir(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	f, err := gguf.Open(f32)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gcfg, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewGGUFSource(f, gcfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range cfg.TensorNames() {
		want, err := ck.Float32(spec.Name)
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		if len(spec.Shape) == 2 && !strings.HasSuffix(spec.Name, "kv_b_proj.weight") {
			m, err := src.Matrix(spec.Name, kernel.F32)
			if err != nil {
				t.Fatalf("%s: %v", spec.Name, err)
			}
			got = m.Dequantize()
		} else if got, err = src.Float32(spec.Name); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", spec.Name, len(got), len(want))
		}
		// an f16 file holds the checkpoint's values rounded to f16
		if ti, _ := f.Tensor(src.refs[spec.Name].name); ti.Type == gguf.TypeF16 {
			for i, w := range want {
				want[i] = half.F16ToF32(half.F32ToF16(w))
			}
		}
		for i := range want {
			ok := got[i] == want[i]
			if strings.HasSuffix(spec.Name, "A_log") {
				ok = math.Abs(float64(got[i]-want[i])) <= 2*ulp32(want[i])
			}
			if !ok {
				t.Errorf("%s[%d] = %v, want %v", spec.Name, i, got[i], want[i])
				break
			}
		}
	}
}

func ulp32(x float32) float64 {
	return float64(math.Nextafter32(x, float32(math.Inf(1))) - x)
}

// TestALogInverse: the inverse of the converter's −exp gives back, through
// the KDA kernel's own −f32(exp(f64(x))), exactly the stored value.
func TestALogInverse(t *testing.T) {
	for _, x := range []float32{-5, -1.5, -0.3, 0, 1e-3, 0.7, 1, 2.5, 4, 9.75} {
		a := -float32(math.Exp(float64(x)))
		y, err := aLogOf(a)
		if err != nil {
			t.Fatal(err)
		}
		if back := -float32(math.Exp(float64(y))); back != a {
			t.Errorf("A_log %v: ssm_a %v → %v → %v", x, a, y, back)
		}
	}
	for _, a := range []float32{0, 1, float32(math.NaN()), float32(math.Inf(-1))} {
		if _, err := aLogOf(a); err == nil {
			t.Errorf("ssm_a %v accepted", a)
		}
	}
}

// TestGGUFGolden: the F32 file reproduces the golden logits and greedy ids.
func TestGGUFGolden(t *testing.T) {
	c, f32, _ := ggufFiles(t)
	m := mustLoadGGUF(t, f32, LoadOptions{})
	checkGoldenRun(t, m, c)
}

// checkGoldenRun runs the golden protocol on every batch row and checks
// logits, decode logits and greedy ids against the golden data.
func checkGoldenRun(t *testing.T, m *Model, c *tinyCase) {
	t.Helper()
	for b := 0; b < c.B; b++ {
		checkGoldenOut(t, c, b, runGolden(t, m, c, b))
	}
}

// checkGoldenOut checks batch row b's logits, decode logits and greedy
// ids against the golden data.
func checkGoldenOut(t *testing.T, c *tinyCase, b int, r runOut) {
	t.Helper()
	TV, nV := c.T*c.V, c.nDecode*c.V
	golden.Check(t, fmt.Sprintf("b%d logits", b), r.logits, c.logits[b*TV:(b+1)*TV], tolLogits)
	golden.Check(t, fmt.Sprintf("b%d decode_logits", b), r.decode, c.decode[b*nV:(b+1)*nV], tolLogits)
	got := []int{argmax(r.logits[(c.T-1)*c.V:])}
	for i := 0; i+1 < c.nDecode; i++ {
		got = append(got, argmax(r.decode[i*c.V:(i+1)*c.V]))
	}
	for i, id := range got {
		if int32(id) != c.gen[b][i] {
			t.Errorf("b%d greedy id %d = %d, want %d (all: %v, want %v)", b, i, id, c.gen[b][i], got, c.gen[b])
			break
		}
	}
}

// ggufLogits runs batch row 0's prompt and greedy decode on m.
func ggufLogits(t *testing.T, m *Model, c *tinyCase) []float32 {
	r := runGolden(t, m, c, 0)
	return append(r.logits, r.decode...)
}

// TestGGUFQuantized: each quantized file, run in place (its GGUF formats)
// and repacked exactly, equals the engine on its dequantized weights
// (every matrix dequantized to f32) to tolQuantPipeline (f32 activations:
// int8 activations would add their own rounding); the fast repack adds less error than the file's own
// quantization costs: its distance from the dequantized weights' logits is
// at most fastShare of theirs from the golden logits. (The tiny random
// model's routing flips on small changes, so one figure per file would
// not carry over to another golden folder; on the default one the largest
// share is 0.49, Q3_K_M.)
func TestGGUFQuantized(t *testing.T) {
	c, _, quantized := ggufFiles(t)
	const fastShare = 0.6
	for _, p := range quantized {
		t.Run(filepath.Base(p), func(t *testing.T) {
			cls := []kernel.Class{kernel.ClassF32}
			ref := ggufLogits(t, mustLoadGGUF(t, p, LoadOptions{Formats: Formats{DType: kernel.F32}, Runtime: Runtime{Classes: cls}}), c)
			inPlace := ggufLogits(t, mustLoadGGUF(t, p, LoadOptions{Runtime: Runtime{Classes: cls}}), c)
			exact := ggufLogits(t, mustLoadGGUF(t, p, LoadOptions{Runtime: Runtime{Classes: cls}, Files: Files{Weights: WeightsRepack}}), c)
			fast := ggufLogits(t, mustLoadGGUF(t, p, LoadOptions{Conversion: Conversion{GGUFRepack: quant.RepackFast}, Runtime: Runtime{Classes: cls}, Files: Files{Weights: WeightsRepack}}), c)
			want := append(slices.Clone(c.logits[:c.T*c.V]), c.decode[:c.nDecode*c.V]...)
			ip, e, f, g := relRMS(inPlace, ref), relRMS(exact, ref), relRMS(fast, ref), relRMS(ref, want)
			t.Logf("relative RMS of the logits: in place vs dequantized %.2g, exact repack %.2g, fast repack %.2g; dequantized vs golden f32 %.2g", ip, e, f, g)
			if !(ip <= tolQuantPipeline) {
				t.Errorf("the file's blocks in place differ from the dequantized weights' logits by %.3g relative RMS (> %g)", ip, tolQuantPipeline)
			}
			if !(e <= tolQuantPipeline) {
				t.Errorf("exact repack differs from the dequantized weights' logits by %.3g relative RMS (> %g)", e, tolQuantPipeline)
			}
			// the bounds fail a planted error: NaN, and noise of 1e-4 of
			// each logit on the exact run
			planted := slices.Clone(exact)
			for i := range planted {
				planted[i] *= 1 + 1e-4*float32(i%7-3)
			}
			if relRMS(planted, ref) <= tolQuantPipeline || relRMS(append([]float32{float32(math.NaN())}, exact[1:]...), ref) <= tolQuantPipeline {
				t.Error("a planted error passes the exact bound")
			}
			if !(f <= fastShare*g) {
				t.Errorf("fast repack differs from the dequantized weights' logits by %.3g relative RMS, more than %g of the file's own error %.3g", f, fastShare, g)
			}
		})
	}
}

// TestGGMLTarget: the memory estimate's table of formats is what
// quant.FromGGML gives, for every matrix of every golden file, both modes.
func TestGGMLTarget(t *testing.T) {
	_, f32, quantized := ggufFiles(t)
	for _, p := range append([]string{f32}, quantized...) {
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range f.Tensors {
			if len(ti.Dims) < 2 {
				continue
			}
			raw, _ := f.TensorData(ti.Name)
			k := int(ti.Dims[0])
			n := int(ti.NumElements()) / k
			for _, mode := range []quant.GGMLRepack{quant.RepackExact, quant.RepackFast} {
				m, _, err := quant.FromGGML(ti.Type, raw, n, k, mode)
				if err != nil {
					t.Fatalf("%s %s: %v", filepath.Base(p), ti.Name, err)
				}
				dt, hasMin := GGMLTarget(ti.Type, mode)
				if m.DType != dt || m.HasMin != hasMin {
					t.Errorf("%s (%s, mode %d): FromGGML gives %s (min %v), GGMLTarget says %s (min %v)", ti.Name, ti.Type, mode, m.DType, m.HasMin, dt, hasMin)
				}
			}
		}
		f.Close()
	}
}

// rewriteGGUF writes a copy of the GGUF file at path with edit applied to
// its metadata and tensors, into dir.
func rewriteGGUF(t *testing.T, path, dir string, edit func(kv []gguf.KV, ts []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor)) string {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kv []gguf.KV
	for _, k := range f.Metadata.Keys() {
		v, _ := f.Metadata.Get(k)
		kv = append(kv, gguf.KV{Key: k, Value: v})
	}
	var ts []gguf.WriteTensor
	for _, ti := range f.Tensors {
		raw, _ := f.TensorData(ti.Name)
		ts = append(ts, gguf.WriteTensor{Name: ti.Name, Dims: slices.Clone(ti.Dims), Type: ti.Type, Data: slices.Clone(raw)})
	}
	kv, ts = edit(kv, ts)
	var b bytes.Buffer
	if err := gguf.Write(&b, kv, ts); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGGUFBadInput: each broken copy of the F32 file gives one error that
// names the file and the problem.
func TestGGUFBadInput(t *testing.T) {
	_, f32, _ := ggufFiles(t)
	setKV := func(key string, v any) func([]gguf.KV, []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor) {
		return func(kv []gguf.KV, ts []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor) {
			for i := range kv {
				if kv[i].Key == key {
					if v == nil {
						return slices.Delete(kv, i, i+1), ts
					}
					kv[i].Value = gguf.MustValue(v)
				}
			}
			return kv, ts
		}
	}
	tensor := func(name string, fn func(*gguf.WriteTensor) bool) func([]gguf.KV, []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor) {
		return func(kv []gguf.KV, ts []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor) {
			for i := range ts {
				if ts[i].Name == name && !fn(&ts[i]) {
					return kv, slices.Delete(ts, i, i+1)
				}
			}
			return kv, ts
		}
	}
	cases := []struct {
		name string
		edit func([]gguf.KV, []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor)
		want []string
	}{
		{"foreign architecture", setKV("general.architecture", "llama"), []string{`"llama"`, "not a Kimi Linear file"}},
		{"missing key", setKV("kimi-linear.kda.head_dim", nil), []string{`"kimi-linear.kda.head_dim"`, "no such metadata key"}},
		{"key of the wrong type", setKV("kimi-linear.embedding_length", "wide"), []string{`"kimi-linear.embedding_length"`}},
		{"huge block_count", setKV("kimi-linear.block_count", uint32(1<<31-1)), []string{`"kimi-linear.block_count"`, "is 2147483647", "tensors"}},
		{"layer pattern length", setKV("kimi-linear.attention.head_count_kv", []int32{0, 1}), []string{"head_count_kv", "one per layer"}},
		{"softmax gating", setKV("kimi-linear.expert_gating_func", uint32(1)), []string{"expert_gating_func", "sigmoid"}},
		{"missing tensor", tensor("blk.1.ssm_f_b.weight", func(*gguf.WriteTensor) bool { return false }), []string{"1 missing tensors", "blk.1.ssm_f_b.weight"}},
		{"extra tensor", func(kv []gguf.KV, ts []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor) {
			return kv, append(ts, gguf.WriteTensor{Name: "blk.0.extra.weight", Dims: []uint64{4}, Type: gguf.TypeF32, Data: make([]byte, 16)})
		}, []string{"1 extra tensors", "blk.0.extra.weight"}},
		{"mis-shaped tensor", tensor("blk.0.ssm_norm.weight", func(w *gguf.WriteTensor) bool {
			w.Dims, w.Data = []uint64{32}, w.Data[:128]
			return true
		}), []string{"mis-shaped", "blk.0.ssm_norm.weight is [32]"}},
		{"unsupported type", tensor("blk.0.ffn_up.weight", func(w *gguf.WriteTensor) bool {
			w.Type = gguf.TypeIQ2_XS // 74 bytes per 256
			w.Data = make([]byte, int(w.Dims[0]*w.Dims[1])/256*74)
			return true
		}), []string{"cannot read", "blk.0.ffn_up.weight is iq2_xs"}},
		{"NaN weight", tensor("blk.0.ffn_up.weight", func(w *gguf.WriteTensor) bool {
			copy(w.Data[4*300:], []byte{0, 0, 0xc0, 0x7f})
			return true
		}), []string{"blk.0.ffn_up.weight", "NaN", "non-finite", "element 300"}},
		{"NaN norm", tensor("output_norm.weight", func(w *gguf.WriteTensor) bool {
			copy(w.Data[8:], []byte{0, 0, 0x80, 0x7f})
			return true
		}), []string{"output_norm.weight", "+Inf", "non-finite"}},
		{"positive ssm_a", tensor("blk.1.ssm_a", func(w *gguf.WriteTensor) bool {
			copy(w.Data[4:], []byte{0, 0, 0x80, 0x3f}) // 1.0
			return true
		}), []string{"A_log", "negative"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := rewriteGGUF(t, f32, t.TempDir(), tc.edit)
			before, _ := os.ReadFile(p)
			_, err := LoadGGUF(p, LoadOptions{})
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			if !strings.Contains(msg, p) || strings.Contains(msg, "\n") {
				t.Errorf("error does not name the file on one line: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("not an InputError: %T", err)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
				t.Error("the file changed")
			}
		})
	}
}

// TestConvertGGUF: a GGUF converted to a model file without a preset keeps
// every matrix in the format LoadGGUF repacks it into (both repack modes),
// so the two give the same logits; a preset requantizes; a checkpoint
// folder has no stored formats to keep.
func TestConvertGGUF(t *testing.T) {
	c, _, quantized := ggufFiles(t)
	cls := []kernel.Class{kernel.ClassF32}
	for _, p := range quantized {
		for _, mode := range []quant.GGMLRepack{quant.RepackFast, quant.RepackExact} {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(p), mode), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "m.kt")
				if err := ConvertGGUF(p, out, LoadOptions{Conversion: Conversion{GGUFRepack: mode}, Runtime: Runtime{Threads: 1}}, nil, nil); err != nil {
					t.Fatal(err)
				}
				fm, err := LoadFile(out, LoadOptions{Runtime: Runtime{Classes: cls}})
				if err != nil {
					t.Fatal(err)
				}
				defer fm.Close()
				got := ggufLogits(t, fm, c)
				want := ggufLogits(t, mustLoadGGUF(t, p, LoadOptions{Conversion: Conversion{GGUFRepack: mode}, Runtime: Runtime{Classes: cls}, Files: Files{Weights: WeightsRepack}}), c)
				if e := relRMS(got, want); !(e <= 1e-6) {
					t.Errorf("the converted file's logits differ from the GGUF's by %.3g relative RMS", e)
				}
			})
		}
	}
	out := filepath.Join(t.TempDir(), "q8.kt")
	if err := ConvertGGUF(quantized[0], out, LoadOptions{Formats: Formats{DType: kernel.Q8}, Runtime: Runtime{Threads: 1}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	fm, err := LoadFile(out, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dt := fm.LMHead.DType; dt != kernel.Q8 {
		t.Errorf("preset q8: lm_head is %s", dt)
	}
	fm.Close()
	if _, err := Load(c.f.Dir(), LoadOptions{Formats: Formats{DType: AsStored}}); err == nil || !strings.Contains(err.Error(), "no stored formats") {
		t.Errorf("a checkpoint folder loaded as stored: %v", err)
	}
}

// TestGGUFThreads: the repacked weights do not depend on the thread count
// (1, 2, and more than the CPUs), in both repack modes.
func TestGGUFThreads(t *testing.T) {
	_, _, quantized := ggufFiles(t)
	for _, mode := range []quant.GGMLRepack{quant.RepackFast, quant.RepackExact} {
		var want [][]byte
		for _, th := range []int{1, 2, 7} {
			m := mustLoadGGUF(t, quantized[0], LoadOptions{Conversion: Conversion{GGUFRepack: mode}, Runtime: Runtime{Threads: th}})
			for i, p := range m.matrices() {
				if want == nil || len(want) <= i {
					want = append(want, slices.Clone((*p).Data))
				} else if !bytes.Equal((*p).Data, want[i]) {
					t.Fatalf("%s: matrix %d differs at %d threads", mode, i, th)
				}
			}
		}
	}
}

// splitGGUF writes the GGUF file at path into dir as two parts
// (m-00001-of-00002.gguf, m-00002-of-00002.gguf), as llama-gguf-split
// does: the metadata in the first, the tensors shared out, split.* keys in
// both. It returns the parts' paths.
func splitGGUF(t *testing.T, path, dir string) []string {
	t.Helper()
	var kv []gguf.KV
	var ts []gguf.WriteTensor
	rewriteGGUF(t, path, t.TempDir(), func(k []gguf.KV, w []gguf.WriteTensor) ([]gguf.KV, []gguf.WriteTensor) {
		kv, ts = k, w
		return k, w
	})
	split := func(no int) []gguf.KV {
		return []gguf.KV{{Key: gguf.KeySplitNo, Value: gguf.MustValue(uint16(no))},
			{Key: gguf.KeySplitCount, Value: gguf.MustValue(uint16(2))},
			{Key: gguf.KeySplitTensorsCount, Value: gguf.MustValue(int32(len(ts)))}}
	}
	half := len(ts) / 2
	var paths []string
	for no, part := range [][]gguf.WriteTensor{ts[:half], ts[half:]} {
		meta := split(no)
		if no == 0 {
			meta = append(slices.Clone(kv), meta...)
		}
		var b bytes.Buffer
		if err := gguf.Write(&b, meta, part); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("m-%05d-of-00002.gguf", no+1))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestCheckFileSplit: a split GGUF model mapped from its parts; the second
// part rewritten in place makes CheckFile a FaultError naming that part
// (only the first part was compared once).
func TestCheckFileSplit(t *testing.T) {
	t.Setenv(PreloadEnv, "0")
	_, f32, _ := ggufFiles(t)
	parts := splitGGUF(t, f32, t.TempDir())
	m := mustLoadGGUF(t, parts[0], LoadOptions{Runtime: Runtime{Threads: 1}, Files: Files{Weights: WeightsMap}})
	if err := m.CheckFile(); err != nil {
		t.Fatalf("intact parts: %v", err)
	}
	f, err := os.OpenFile(parts[1], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := f.WriteAt(make([]byte, 64), st.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	later := st.ModTime().Add(time.Second) // a coarse clock may not move
	os.Chtimes(parts[1], later, later)
	var fe *FaultError
	if err := m.CheckFile(); !errors.As(err, &fe) || fe.Path != parts[1] || !strings.Contains(err.Error(), "changed in place") {
		t.Errorf("second part rewritten: %v, want a FaultError naming %s", err, parts[1])
	}
}
