package krun

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
)

// goldenGGUF returns the golden folder's F32 and one quantized GGUF copy
// of the tiny model (gguf/*.gguf; the F32 one holds only f32 tensors).
func goldenGGUF(t testing.TB) (f32, quantized string) {
	t.Helper()
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "gguf", "*.gguf"))
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
		switch {
		case all && f32 == "":
			f32 = p
		case !all && quantized == "":
			quantized = p
		}
	}
	if f32 == "" || quantized == "" {
		t.Skipf("no F32 and quantized GGUF files in %s/gguf", dir)
	}
	return f32, quantized
}

// tinyModelCase is the golden case of the model the golden GGUF files
// hold (tiny_model: the others are variants of its config).
func tinyModelCase(t testing.TB) *golden.File {
	t.Helper()
	for _, f := range golden.Load(t, golden.TinyModel) {
		if filepath.Base(f.Dir()) == "tiny_model" {
			return f
		}
	}
	t.Skip("no tiny_model golden case")
	return nil
}

// TestKrunGGUF: generate, bench, info and convert run a GGUF file
// directly; the F32 copy of the tiny model gives the golden greedy ids.
func TestKrunGGUF(t *testing.T) {
	f32, q := goldenGGUF(t)
	c := tinyModelCase(t)
	T, n := c.Dims(t, "input_ids")[1], c.Dims(t, "generated_ids")[1]
	in, gen := c.I64(t, "input_ids")[:T], c.I64(t, "generated_ids")[:n]
	join := func(v []int64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ",")
	}
	copyIn := func(src, name string) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			clitest.WriteFile(t, dir, name, string(b))
		}
	}
	edited := func(src, name string, edit func(b []byte) []byte) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			clitest.WriteFile(t, dir, name, string(edit(b)))
		}
	}
	truncated := edited(q, "m.gguf", func(b []byte) []byte { return b[:len(b)-1000] })
	foreign := edited(q, "m.gguf", func(b []byte) []byte {
		return bytes.Replace(b, []byte("kimi-linear"), []byte("kimi-lineax"), 1)
	})
	splitPart := func(t testing.TB, dir string) { // the first of two parts, alone
		var b bytes.Buffer
		meta := []gguf.KV{{Key: "general.architecture", Value: gguf.MustValue("kimi-linear")},
			{Key: gguf.KeySplitNo, Value: gguf.MustValue(uint16(0))}, {Key: gguf.KeySplitCount, Value: gguf.MustValue(uint16(2))},
			{Key: gguf.KeySplitTensorsCount, Value: gguf.MustValue(int32(2))}}
		if err := gguf.Write(&b, meta, []gguf.WriteTensor{{Name: "a", Dims: []uint64{32, 1}, Type: gguf.TypeF32, Data: make([]byte, 128)}}); err != nil {
			t.Fatal(err)
		}
		clitest.WriteFile(t, dir, "m-00001-of-00002.gguf", b.String())
	}
	nan := edited(q, "m.gguf", func(b []byte) []byte { // a NaN in output_norm (f32)
		f, err := gguf.FromBytes("m.gguf", b)
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.TensorData("output_norm.weight")
		if err != nil {
			t.Fatal(err)
		}
		copy(data[4:], []byte{0, 0, 0xc0, 0x7f}) // data is a slice of b
		return b
	})
	oldOutput := func(setup func(t testing.TB, dir string)) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			setup(t, dir)
			clitest.WriteFile(t, dir, "out/o.kt", "an older conversion")
		}
	}
	probes := []clitest.Probe{
		{Name: "generate/golden-ids", Setup: copyIn(f32, "m.gguf"), Args: []string{"generate", "{dir}/m.gguf", "--ids", join(in), "-n", fmt.Sprint(n), "--ignore-eos"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if got := strings.TrimSpace(stdout); got != join(gen) {
					t.Errorf("greedy ids %s, want the golden %s", got, join(gen))
				}
			}},
		{Name: "generate/quantized", Setup: copyIn(q, "m.gguf"), Args: []string{"generate", "{dir}/m.gguf", "--ids", join(in), "-n", "2"}},
		{Name: "generate/quantized-exact-preset", Setup: copyIn(q, "m.gguf"), Args: []string{"generate", "{dir}/m.gguf", "--ids", join(in), "-n", "2", "--dtype", "q8", "--gguf-repack", "exact"}},
		{Name: "generate/bad-repack", Setup: copyIn(q, "m.gguf"), Args: []string{"generate", "{dir}/m.gguf", "--ids", "1,2", "--gguf-repack", "slow"}, Code: 2, Err: "--gguf-repack"},
		{Name: "generate/placeholder-vocabulary", Setup: copyIn(q, "m.gguf"), Args: []string{"generate", "{dir}/m.gguf", "--prompt", "hi"}, Code: 2, Err: "tokenizer.ggml.tokens"},
		{Name: "generate/truncated", Setup: truncated, Args: []string{"generate", "{dir}/m.gguf", "--ids", "1,2"}, Code: 2, Err: "m.gguf"},
		{Name: "generate/foreign-architecture", Setup: foreign, Args: []string{"generate", "{dir}/m.gguf", "--ids", "1,2"}, Code: 2, Err: "not a Kimi Linear file"},
		{Name: "bench/gguf", Setup: copyIn(q, "m.gguf"), Args: []string{"bench", "{dir}/m.gguf", "-p", "8", "-n", "4", "-r", "1", "-t", "1"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "| gguf ") || !strings.Contains(stdout, "tg4") {
					t.Errorf("bench table lacks the gguf row:\n%s", stdout)
				}
			}},
		{Name: "bench/gguf-repack", Setup: copyIn(q, "m.gguf"), Args: []string{"bench", "{dir}/m.gguf", "-p", "8", "-n", "4", "-r", "1", "-t", "1", "--load", "repack"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "gguf/repack-fast") {
					t.Errorf("bench table lacks the repacked gguf row:\n%s", stdout)
				}
			}},
		{Name: "bench/truncated", Setup: truncated, Args: []string{"bench", "{dir}/m.gguf", "-p", "8", "-n", "4", "-r", "1"}, Code: 2, Err: "m.gguf"},
		{Name: "info/gguf", Setup: copyIn(q, "m.gguf"), Args: []string{"info", "{dir}/m.gguf", "--verify"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "GGUF v3") || !strings.Contains(stdout, "routed experts") || !strings.Contains(stdout, "verified") {
					t.Errorf("info output:\n%s", stdout)
				}
			}},
		{Name: "info/truncated", Setup: truncated, Args: []string{"info", "{dir}/m.gguf"}, Code: 2, Err: "m.gguf"},
		{Name: "convert/gguf", Setup: copyIn(q, "m.gguf"), Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/o.kt", "--preset", "q8"}, Creates: []string{"o.kt"}},
		{Name: "convert/gguf-stored", Setup: copyIn(q, "m.gguf"), Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/o.kt"}, Creates: []string{"o.kt"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "stored (the GGUF's types") {
					t.Errorf("convert output: %s", stdout)
				}
			}},
		{Name: "convert/gguf-bad-repack", Setup: copyIn(q, "m.gguf"), Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/o.kt", "--gguf-repack", "lossy"}, Code: 2, Err: "--gguf-repack"},
		{Name: "convert/gguf-onto-itself", Setup: copyIn(q, "m.gguf"), Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/m.gguf"}, Code: 2, Err: "is the input file"},
		{Name: "convert/gguf-truncated", Setup: truncated, Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/o.kt"}, Code: 2, Err: "m.gguf"},
		{Name: "generate/split-part-missing", Setup: splitPart, Args: []string{"generate", "{dir}/m-00001-of-00002.gguf", "--ids", "1,2"}, Code: 2, Err: "m-00002-of-00002.gguf) is missing"},
		{Name: "info/split-part-missing", Setup: splitPart, Args: []string{"info", "{dir}/m-00001-of-00002.gguf"}, Code: 2, Err: "is missing"},
		{Name: "convert/split-part-missing", Setup: splitPart, Args: []string{"convert", "{dir}/m-00001-of-00002.gguf", "-o", "{dir}/o.kt"}, Code: 2, Err: "is missing"},
		{Name: "generate/empty-gguf", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "m.gguf", "") },
			Args: []string{"generate", "{dir}/m.gguf", "--ids", "1,2"}, Code: 2, Err: "m.gguf"},
		{Name: "generate/folder-named-gguf", Setup: func(t testing.TB, dir string) { os.Mkdir(filepath.Join(dir, "m.gguf"), 0o755) },
			Args: []string{"generate", "{dir}/m.gguf", "--ids", "1,2"}, Code: 2, Err: "m.gguf"},
		{Name: "convert/gguf-over-previous-output", Setup: func(t testing.TB, dir string) {
			copyIn(q, "m.gguf")(t, dir)
			clitest.WriteFile(t, dir, "o.kt", "an earlier output")
		}, Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/o.kt"}, Creates: []string{"o.kt"}},
		{Name: "generate/text-named-gguf", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "m.gguf", "hello world") },
			Args: []string{"generate", "{dir}/m.gguf", "--ids", "1"}, Code: 2, Err: "not a GGUF file"},
		{Name: "info/nan-names-gguf-tensor", Setup: nan, Args: []string{"info", "{dir}/m.gguf", "--verify"}, Code: 2, Err: "GGUF tensor \"output_norm.weight\""},
		{Name: "bench/past-max-length", Setup: copyIn(q, "m.gguf"), Args: []string{"bench", "{dir}/m.gguf", "-p", "99999999", "-n", "1"}, Code: 2, Err: "past the model's maximum length"},
		{Name: "bench/nothing-to-measure", Setup: copyIn(q, "m.gguf"), Args: []string{"bench", "{dir}/m.gguf", "-p", "0", "-n", "0"}, Code: 2, Err: "nothing to measure"},
		{Name: "generate/nan", Setup: nan, Args: []string{"generate", "{dir}/m.gguf", "--ids", "1,2"}, Code: 2, Err: "non-finite"},
		{Name: "info/verify-nan", Setup: nan, Args: []string{"info", "{dir}/m.gguf", "--verify"}, Code: 2, Err: "non-finite"},
		{Name: "convert/nan-keeps-old-output", Setup: oldOutput(nan), Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/out/o.kt"}, Code: 2, Err: "non-finite"},
		{Name: "convert/foreign-keeps-old-output", Setup: oldOutput(foreign), Args: []string{"convert", "{dir}/m.gguf", "-o", "{dir}/out/o.kt"}, Code: 2, Err: "not a Kimi Linear file"},
		{Name: "bench/bad-repack", Setup: copyIn(q, "m.gguf"), Args: []string{"bench", "{dir}/m.gguf", "--gguf-repack", "slow"}, Code: 2, Err: "--gguf-repack"},
		{Name: "bench/foreign-architecture", Setup: foreign, Args: []string{"bench", "{dir}/m.gguf", "-p", "8", "-n", "4", "-r", "1"}, Code: 2, Err: "not a Kimi Linear file"},
	}
	clitest.Run(t, Main, probes)
}
