package krun

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/model"
)

// TestSynthFlags: synth's flags as parsed, and the usage errors (exit 2)
// with their messages.
func TestSynthFlags(t *testing.T) {
	var got *SynthOptions
	cmd := NewCmdSynth(&cli.Factory{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, func(o *SynthOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-o", "x.gguf", "--type", "q4_k_m", "--layers", "2", "--seed", "9", "--threads", "3"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Output != "x.gguf" || got.fileType.Name != "Q4_K_M" || got.fileType.ID != 15 || got.Layers != 2 || got.Seed != 9 || got.Threads != 3 {
		t.Errorf("options %+v", got)
	}
	dir := t.TempDir()
	tinySynth(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--type", "Q8_0"}, "-o FILE.gguf is required"},
		{[]string{"-o", "x.gguf"}, "--type is required (F32, F16, BF16, Q8_0"},
		{[]string{"-o", "x.gguf", "--type", "Q1_0"}, `--type "Q1_0": want one of F32, F16, BF16, Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS, IQ4_NL, Q3_K_M, Q3_K_S, Q2_K, MXFP4_MOE`},
		{[]string{"-o", "x.gguf", "--type", "Q8_0", "--layers", "0"}, "--layers 0; the model has 1 to 27 layers"},
		{[]string{"-o", "x.gguf", "--type", "Q8_0", "--layers", "28"}, "--layers 28"},
		{[]string{"-o", "x.gguf", "--type", "Q8_0", "--threads", "-1"}, "--threads -1"},
		{[]string{"-o", "x.gguf", "--type", "Q8_0", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"-o", "x.gguf", "--type", "Q8_0", "extra"}, `unknown command "extra"`},
		{[]string{"-o", dir, "--type", "Q8_0"}, "synth: -o " + dir + " is a folder; give a file name (e.g. " + filepath.Join(dir, "model.gguf") + ")"},
	} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"synth"}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	// no room: both sizes named, nothing written
	old := diskFree
	diskFree = func(string) (int64, error) { return 1000, nil }
	defer func() { diskFree = old }()
	var out, errb bytes.Buffer
	p := filepath.Join(dir, "full.gguf")
	if code := Main([]string{"synth", "-o", p, "--type", "Q8_0"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "the file needs 3.0 MiB (3162848 bytes)") || !strings.Contains(errb.String(), "has 1000 B free") {
		t.Errorf("no room: exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("no room, but the file was written")
	}
}

// TestSynthRun: synth (at the tiny model's widths) writes a file the GGUF
// loader reads, says what it wrote, and writes the same bytes at 1 and 3
// threads.
func TestSynthRun(t *testing.T) {
	tinySynth(t)
	dir := t.TempDir()
	var files [][]byte
	for _, threads := range []string{"1", "3"} {
		p := filepath.Join(dir, "t"+threads+".gguf")
		var out, errb bytes.Buffer
		if code := Main([]string{"synth", "-o", p, "--type", "Q4_K_M", "--seed", "4", "--threads", threads}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		for _, w := range []string{"writing " + p + ": ", "as GGUF Q4_K_M, 89 tensors", "wrote " + p + ": ", "(kimi-linear GGUF Q4_K_M, 27 layers, seed 4); tensors: 34 f32, 10 q5_0, 1 q5_1, 10 q8_0, 30 q4_K, 3 q5_K, 1 q6_K"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("stdout %q lacks %q", out.String(), w)
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := model.ConfigFromGGUF(f)
		if err == nil {
			_, err = model.NewGGUFSource(f, cfg, 1)
		}
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("1 and 3 threads wrote other bytes")
	}
}
