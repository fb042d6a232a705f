package krun

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
)

// tinySynth makes convert --synthetic write the golden tiny model's
// config (whatever --layers) until the test ends.
func tinySynth(t testing.TB) {
	t.Helper()
	cfg, err := arch.Load(golden.Load(t, golden.TinyModel)[0].Dir())
	if err != nil {
		t.Fatal(err)
	}
	old := synthConfig
	synthConfig = func(int) (*arch.Config, error) { return cfg, nil }
	t.Cleanup(func() { synthConfig = old })
}

// convertSynth runs convert --synthetic with args on the golden tiny
// model's config (the synthConfig hook) and returns stdout and the file's
// bytes.
func convertSynth(t *testing.T, out string, args ...string) (string, []byte) {
	t.Helper()
	tinySynth(t)
	var o, e bytes.Buffer
	var opts *ConvertOptions
	cmd := NewCmdConvert(&cli.Factory{Out: &o, Err: &e}, func(x *ConvertOptions) error { opts = x; return nil })
	cmd.SetArgs(append([]string{"--synthetic", "-o", out}, args...))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if err := runConvert(opts); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return o.String(), b
}

// TestConvertSynthetic: convert --synthetic (at the tiny model's widths)
// in q4, q3 and --fit writes a file that says it is synthetic, the same
// bytes at 1 and 3 threads and other bytes for another seed; generate
// --ids and bench run it; generate without --ids says there is no
// tokenizer.
func TestConvertSynthetic(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string // in the header's meta
	}{
		{"q4", []string{"--preset", "q4"}, `"dtype.experts":"q4"`},
		{"q3", []string{"--preset", "q3", "--seed", "5"}, `"dtype.experts":"q3"`},
		{"fit", []string{"--fit", "6M", "--ctx", "64"}, `"dtype.experts":"stored"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "s.kt")
			stdout, b1 := convertSynth(t, out, append(c.args, "--threads", "1")...)
			for _, w := range []string{"writing " + out, "of random weights", "wrote " + out, "MB/s (synthetic"} {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout %q lacks %q", stdout, w)
				}
			}
			if c.name == "fit" && !strings.Contains(stdout, "plan for 6.0 MiB") {
				t.Errorf("no plan line: %q", stdout)
			}
			_, b3 := convertSynth(t, filepath.Join(dir, "s3.kt"), append(c.args, "--threads", "3")...)
			if !bytes.Equal(b1, b3) {
				t.Errorf("--threads 1 and 3 wrote different bytes")
			}
			_, other := convertSynth(t, filepath.Join(dir, "other.kt"), append(c.args, "--seed", "99")...)
			if bytes.Equal(b1, other) {
				t.Errorf("another --seed wrote the same bytes")
			}
			f, err := kfile.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			meta := f.Header.Table.Meta
			f.Close()
			if !strings.HasPrefix(meta[model.MetaSynthetic], "random weights (seed") || !strings.HasPrefix(meta["source"], "synthetic") {
				t.Errorf("meta %v does not say synthetic", meta)
			}
			if hdr := string(b1[:4096]); !strings.Contains(hdr, c.want) {
				t.Errorf("header lacks %s", c.want)
			}
			ids, stderr, err := run(t, "generate", out, "--ids", "5,77,300,12", "-n", "3", "--ignore-eos", "-t", "2")
			if err != nil || len(strings.Split(strings.TrimSpace(ids), ",")) != 3 {
				t.Errorf("generate: %q, %v\n%s", ids, err, stderr)
			}
			if _, _, err := run(t, "generate", out, "--prompt", "hello"); err == nil || !strings.Contains(err.Error(), "is a synthetic model") {
				t.Errorf("generate --prompt: %v", err)
			}
			rows, _ := benchJSON(t, nil, out, "-p", "4", "-n", "2", "-t", "1", "-r", "1")
			if len(rows) != 2 {
				t.Errorf("bench: %d rows, want pp and tg", len(rows))
			}
		})
	}
}

// TestConvertSyntheticFlags: --synthetic's flags and defaults through
// runF (27 layers, seed 1), and the flags it refuses.
func TestConvertSyntheticFlags(t *testing.T) {
	var got *ConvertOptions
	cmd := NewCmdConvert(&cli.Factory{}, func(o *ConvertOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--synthetic", "-o", "s.kt", "--preset", "q4"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Synthetic || got.Layers != 27 || got.Seed != 1 || got.Dir != "" {
		t.Errorf("options %+v", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "s.kt"}, "or --synthetic"},
		{[]string{"m", "--synthetic", "-o", "s.kt"}, "give no MODEL"},
		{[]string{"--synthetic", "--layers", "0", "-o", "s.kt"}, "--layers 0"},
		{[]string{"--synthetic", "--layers", "28", "-o", "s.kt"}, "1 to 27 layers"},
		{[]string{"--synthetic", "--search", "-o", "s.kt"}, "--search is for a checkpoint"},
		{[]string{"--synthetic", "--imatrix", "x", "-o", "s.kt"}, "--imatrix is for a checkpoint"},
		{[]string{"m", "--layers", "3", "-o", "s.kt"}, "--layers is for --synthetic"},
		{[]string{"m", "--seed", "3", "-o", "s.kt"}, "--seed is for --synthetic"},
		{[]string{"--synthetic"}, "-o OUT.kt is required"},
		{[]string{"--synthetic", "-o", "s.kt", "--fit", "24G", "--preset", "q4"}, "--fit chooses every group"},
	} {
		cmd := NewCmdConvert(&cli.Factory{}, func(*ConvertOptions) error { return nil })
		cmd.SetArgs(c.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
