package krun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/kernels/mla"
	"github.com/ktune/ktune/model"
)

func TestMain(m *testing.M) {
	os.Setenv("KTUNE_PROFILE", "off") // no machine profile in tests
	if _, ok := os.LookupEnv(model.VerifyEnv); !ok {
		os.Setenv(model.VerifyEnv, "off") // no records of verified GGUF files in the user's cache
	}
	os.Exit(m.Run())
}

// run executes krun in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	f := &cli.Factory{Out: &out, Err: &errb}
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func joinIDs(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// TestConvertGenerateGolden is the end-to-end test: convert each golden
// tiny model with --preset f32, then generate --ids greedily; the ids are
// the golden greedy ids.
func TestConvertGenerateGolden(t *testing.T) {
	for _, g := range golden.Load(t, golden.TinyModel) {
		t.Run(g.Name(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tiny.kt")
			if _, stderr, err := run(t, "convert", g.Dir(), "-o", out, "--preset", "f32"); err != nil {
				t.Fatalf("convert: %v\n%s", err, stderr)
			}
			in, gen := g.I64(t, "input_ids"), g.I64(t, "generated_ids")
			B, T, n := g.Dims(t, "input_ids")[0], g.Dims(t, "input_ids")[1], g.Dims(t, "generated_ids")[1]
			for b := 0; b < B; b++ {
				stdout, stderr, err := run(t, "generate", out, "--ids", joinIDs(in[b*T:(b+1)*T]), "-n", fmt.Sprint(n), "--ignore-eos", "-t", "2")
				if err != nil {
					t.Fatalf("generate: %v\n%s", err, stderr)
				}
				if got, want := strings.TrimSpace(stdout), joinIDs(gen[b*n:(b+1)*n]); got != want {
					t.Errorf("row %d: generated %s, golden greedy ids %s", b, got, want)
				}
				if !strings.Contains(stderr, "prefill") || !strings.Contains(stderr, "tokens/s") {
					t.Errorf("no speed report on stderr: %q", stderr)
				}
			}
			// every MLA cache format gives the golden greedy ids (bf16, the
			// default, ran above)
			for _, cd := range []string{"f32", "q8"} {
				stdout, stderr, err := run(t, "generate", out, "--ids", joinIDs(in[:T]), "-n", fmt.Sprint(n), "--ignore-eos", "--cache-dtype", cd)
				if err != nil || strings.TrimSpace(stdout) != joinIDs(gen[:n]) {
					t.Errorf("--cache-dtype %s: %q, %v\n%s", cd, stdout, err, stderr)
				}
			}
			// the folder, converted on the fly, agrees
			stdout, _, err := run(t, "generate", g.Dir(), "--ids", joinIDs(in[:T]), "-n", fmt.Sprint(n), "--ignore-eos", "--dtype", "f32")
			if err != nil || strings.TrimSpace(stdout) != joinIDs(gen[:n]) {
				t.Errorf("generate from the folder: %q, %v", stdout, err)
			}
			// info reads the file
			info, _, err := run(t, "info", out, "--verify")
			if err != nil || !strings.Contains(info, "routed experts") || !strings.Contains(info, "verified") {
				t.Errorf("info: %v\n%s", err, info)
			}
		})
	}
}

func tinyDir(t *testing.T) string { return golden.Load(t, golden.TinyModel)[0].Dir() }

func TestGenerateErrors(t *testing.T) {
	dir := tinyDir(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", dir}, "exactly one of"},
		{[]string{"generate", dir, "--ids", "1", "--prompt", "x"}, "exactly one of"},
		{[]string{"generate", dir, "--ids", "1,99999"}, "outside"},
		{[]string{"generate", dir, "--ids", "1,-3"}, "outside"},
		{[]string{"generate", dir, "--ids", "1,x"}, "not a token id"},
		{[]string{"generate", dir, "--ids", "1", "-n", "0"}, "-n 0"},
		{[]string{"generate", dir, "--ids", "1", "--top-p", "-1"}, "top-p"},
		{[]string{"generate", dir, "--prompt", "hello"}, "--tokenizer"},
		{[]string{"generate", dir, "--ids", "1", "--dtype", "q7"}, "unknown preset"},
		{[]string{"convert", dir}, "-o OUT.kt"},
		{[]string{"convert", dir, "-o", filepath.Join(t.TempDir(), "x.kt"), "--experts", "q7"}, "--experts"},
		{[]string{"bench"}, "MODEL or --synthetic"},
		{[]string{"bench", "--synthetic", "-o", "xml"}, "-o"},
		{[]string{"info", dir}, "folder"},
		{[]string{"generate", dir, "--ids", "1", "--cache-dtype", "f16"}, "--cache-dtype"},
		{[]string{"bench", "--synthetic", "--cache-dtype", "q4"}, "--cache-dtype"},
		{[]string{"bench", "--synthetic", "--cpuprofile", filepath.Join(dir, "config.json", "p.pprof")}, "not writable"},
	} {
		_, _, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
}

// TestConvertFlags: presets and group overrides reach the load options.
func TestConvertFlags(t *testing.T) {
	var got *ConvertOptions
	cmd := NewCmdConvert(&cli.Factory{}, func(o *ConvertOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"in", "-o", "out.kt", "--preset", "q4", "--head", "bf16", "--gates", "q8", "--search"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	opt, err := got.loadOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := model.LoadOptions{Formats: model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q4, HeadDType: kernel.BF16, GateDType: kernel.Q8}, Conversion: model.Conversion{QuantSearch: true}}
	if fmt.Sprint(opt) != fmt.Sprint(want) || got.Dir != "in" || got.Output != "out.kt" {
		t.Errorf("options %+v, want %+v", opt, want)
	}
}

// TestBenchTiny runs bench on a tiny synthetic config (the golden model's
// widths) in every output format; no timing is asserted.
func TestBenchTiny(t *testing.T) {
	cfg, err := arch.Load(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "md", "csv"} {
		var out, errb bytes.Buffer
		f := &cli.Factory{Out: &out, Err: &errb}
		var opts *BenchOptions
		cmd := NewCmdBench(f, func(o *BenchOptions) error { opts = o; return nil })
		prof := filepath.Join(t.TempDir(), "cpu.pprof")
		cmd.SetArgs([]string{"--synthetic", "--dtype", "q8,q4", "-p", "8", "-n", "3", "-t", "1,2", "-r", "2", "-d", "0,4", "--ops", "-o", format, "--cpuprofile", prof})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		opts.CeilingBytes = 1 << 20
		opts.synthConfig = func(int) (*arch.Config, error) { return cfg, nil }
		if err := runBench(opts); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, errb.String())
		}
		switch format {
		case "json":
			var res struct {
				Results []BenchRow
				Ops     []OpRow
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			// 2 dtypes × 2 threads × 2 depths × (pp, tg)
			if len(res.Results) != 16 {
				t.Errorf("%d rows, want 16", len(res.Results))
			}
			for _, r := range res.Results {
				// every row has its bound: tg the decode token's weights, pp the
				// weights its pass read (the experts its tokens touched)
				if r.Mean <= 0 || len(r.Samples) != 2 || !(r.BoundFrac > 0) || r.BytesTok <= 0 {
					t.Errorf("row %+v", r)
				}
			}
			ops := map[string]bool{}
			tests := map[string]bool{}
			for _, r := range res.Ops {
				ops[r.Op] = true
				tests[r.Test] = true
				if r.MsPerTok <= 0 || r.Share <= 0 || r.Share > 1 {
					t.Errorf("op row %+v", r)
				}
			}
			if !tests["pp8"] || !tests["tg3"] {
				t.Errorf("breakdowns of %v, want pp8 and tg3", tests)
			}
			// one CPU profile per preset, with the preset in its name
			for _, dt := range []string{"q8", "q4"} {
				if st, err := os.Stat(strings.TrimSuffix(prof, ".pprof") + "." + dt + ".pprof"); err != nil || st.Size() == 0 {
					t.Errorf("--cpuprofile for %s: %v", dt, err)
				}
			}
			for _, op := range []string{model.OpKDA, model.OpMLA, model.OpMoE, model.OpMLP, model.OpLMHead, model.OpNorm} {
				if !ops[op] {
					t.Errorf("no %s in the op breakdown %v", op, ops)
				}
			}
		default:
			if !strings.Contains(out.String(), "tg3 @ d4") || !strings.Contains(out.String(), "lm_head") {
				t.Errorf("%s output:\n%s", format, out.String())
			}
		}
	}
}

// TestBenchFile: bench on a model file.
func TestBenchFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny.kt")
	if _, _, err := run(t, "convert", tinyDir(t), "-o", out, "--preset", "q4"); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	f := &cli.Factory{Out: &o, Err: &e}
	var opts *BenchOptions
	cmd := NewCmdBench(f, func(x *BenchOptions) error { opts = x; return nil })
	cmd.SetArgs([]string{out, "-p", "4", "-n", "2", "-t", "1", "-r", "1"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	opts.CeilingBytes = 1 << 20
	if err := runBench(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.String(), "q8 (experts q4)") {
		t.Errorf("output:\n%s", o.String())
	}
}

// TestCacheSpillFlag: generate and bench with --cache-spill give the
// golden greedy ids and leave the folder empty.
func TestCacheSpillFlag(t *testing.T) {
	if !mla.FileAllocatorSupported {
		t.Skip("no file-backed cache pages on this OS")
	}
	g := golden.Load(t, golden.TinyModel)[0]
	in, gen := g.I64(t, "input_ids"), g.I64(t, "generated_ids")
	T, n := g.Dims(t, "input_ids")[1], g.Dims(t, "generated_ids")[1]
	spill := t.TempDir()
	stdout, stderr, err := run(t, "generate", g.Dir(), "--ids", joinIDs(in[:T]), "-n", fmt.Sprint(n), "--ignore-eos", "--cache-spill", spill)
	if err != nil {
		t.Fatalf("generate --cache-spill: %v\n%s", err, stderr)
	}
	if got, want := strings.TrimSpace(stdout), joinIDs(gen[:n]); got != want {
		t.Errorf("generated %s, golden greedy ids %s", got, want)
	}
	if !strings.Contains(stderr, "file-backed in "+spill) {
		t.Errorf("no file-backed report on stderr: %q", stderr)
	}
	if _, stderr, err := run(t, "bench", g.Dir(), "--dtype", "f32", "-p", "4", "-n", "2", "-t", "1", "-r", "1", "-o", "csv", "--cache-spill", spill); err != nil {
		t.Fatalf("bench --cache-spill: %v\n%s", err, stderr)
	}
	if ents, _ := os.ReadDir(spill); len(ents) != 0 {
		t.Errorf("spill folder holds %v", ents)
	}
	if _, _, err := run(t, "generate", g.Dir(), "--ids", "1", "--cache-spill", filepath.Join(spill, "missing")); err == nil || !strings.Contains(err.Error(), "spill") {
		t.Errorf("missing spill folder: %v", err)
	}
}

// TestParseDType: the weight-format flags (--experts, --head, --attn …)
// take every format the loader serves, q5 included, in any case, and
// refuse the rest naming the flag.
func TestParseDType(t *testing.T) {
	for _, s := range []string{"f32", "bf16", "q8", "q6", "q5", "Q5", "q4", "q3", "q2", "q3k", "q4k", "Q5K", "q6k", " q4k "} {
		if dt, err := parseDType("experts", s); err != nil || string(dt) != strings.ToLower(strings.TrimSpace(s)) {
			t.Errorf("parseDType(%q) = %q, %v", s, dt, err)
		}
	}
	for _, s := range []string{"q7", "f16", "q4_0", "q2k", "q4_k", ""} {
		if _, err := parseDType("head", s); err == nil || !strings.Contains(err.Error(), "--head") {
			t.Errorf("parseDType(%q): %v", s, err)
		}
	}
}

// TestPresetNames: a preset is found in any case and with spaces around
// it, as the format flags take their formats; a misspelt one is refused
// naming the list.
func TestPresetNames(t *testing.T) {
	for _, s := range []string{"q4k-m", "Q4K-M", " q3k", "Q8"} {
		if _, err := presetOptions(s); err != nil {
			t.Errorf("presetOptions(%q): %v", s, err)
		}
	}
	for _, s := range []string{"q4km", "q4k_m", "q2k", ""} {
		if _, err := presetOptions(s); err == nil || !strings.Contains(err.Error(), "q4k-m") {
			t.Errorf("presetOptions(%q): %v", s, err)
		}
	}
}
