package ktune

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/internal/testexec"
	"github.com/ktune/ktune/roofline"
	"github.com/ktune/ktune/tuner/endtoend"
)

// TestDetectFlags: flags reach the options without running anything.
func TestDetectFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want DetectOptions
	}{
		{[]string{}, DetectOptions{Format: "text"}},
		{[]string{"--json"}, DetectOptions{JSON: true, Format: "text"}},
		{[]string{"-o", "md"}, DetectOptions{Format: "md"}},
	} {
		var got *DetectOptions
		cmd := NewCmdDetect(&cli.Factory{}, func(o *DetectOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.JSON != tc.want.JSON || got.Format != tc.want.Format {
			t.Errorf("%v: got %+v", tc.args, got)
		}
	}
	cmd := NewCmdDetect(&cli.Factory{}, func(*DetectOptions) error { return nil })
	cmd.SetArgs([]string{"extra"})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil {
		t.Error("positional argument accepted")
	}
}

func runMain(t *testing.T, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestDetectJSON(t *testing.T) {
	out, errs, code := runMain(t, "detect", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r DetectReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Fingerprint == "" || len(r.Features) == 0 || r.LogicalCores < 1 {
		t.Errorf("incomplete report: %+v", r)
	}
	for _, f := range []string{"avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile", "asimd", "sve"} {
		if _, ok := r.Features[f]; !ok {
			t.Errorf("feature %s missing from the report", f)
		}
	}
}

func TestDefaultRunAndTables(t *testing.T) {
	// the main job end to end on the cheapest op, with small ceilings
	defer func(f func(context.Context, roofline.Options) (*roofline.Ceilings, error)) { measureCeilings = f }(measureCeilings)
	measureCeilings = func(ctx context.Context, o roofline.Options) (*roofline.Ceilings, error) {
		o.MaxWorkingSet, o.MinTime, o.Reps = 1<<20, time.Millisecond, 1
		return roofline.Measure(ctx, o)
	}
	// the end-to-end check on the tiny model, short
	defer func(f func(context.Context, *profile.Profile, endtoend.Options) (*profile.EndToEnd, error)) {
		runEndToEnd = f
	}(runEndToEnd)
	tiny, err := arch.Load(golden.Load(t, golden.TinyModel)[0].Dir())
	if err != nil {
		t.Fatal(err)
	}
	runEndToEnd = func(ctx context.Context, p *profile.Profile, o endtoend.Options) (*profile.EndToEnd, error) {
		o.Config, o.Rounds, o.Prompts, o.Gen, o.MinTime = tiny, 2, []int{8}, 4, 5*time.Millisecond
		return endtoend.Run(ctx, p, o)
	}
	dir := t.TempDir()
	out, errs, code := runMain(t, "--quick", "--only", "norm", "--threads", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"fingerprint", "norm.rmsnorm", "profile: " + dir, "vs default", "roofline.svg", "roofline-t1.png", "%",
		"end-to-end check (synthetic", " pp8 ", " tg4 ", "end to end "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "ktune-profile-*.json")); len(m) != 1 {
		t.Errorf("profile files %v, want one", m)
	} else if p, err := profile.Read(m[0]); err != nil || p.EndToEnd == nil || len(p.EndToEnd.Rows) != 2 {
		t.Errorf("the end-to-end check is not in the profile: %v", err)
	}
	out, _, _ = runMain(t, "variants", "-o", "md", "--op", "norm.rmsnorm")
	if !strings.Contains(out, "| norm.rmsnorm") {
		t.Errorf("markdown table expected:\n%s", out)
	}
	if _, errs, code := runMain(t, "variants", "-o", "xml"); code == 0 || !strings.Contains(errs, "xml") {
		t.Errorf("bad format accepted (exit %d): %s", code, errs)
	}
	if _, errs, code := runMain(t, "--disable-isa", "avx9", "detect"); code == 0 || !strings.Contains(errs, "avx9") {
		t.Errorf("bad feature accepted (exit %d): %s", code, errs)
	}
}

func TestRootFlags(t *testing.T) {
	var got *TuneOptions
	cmd := newCmdRoot(&cli.Factory{}, func(o *TuneOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--quick", "--budget", "90s", "--only", "kda", "--allow", "bf16act", "--threads", "1,2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	opt, err := got.tunerOptions()
	if err != nil {
		t.Fatal(err)
	}
	if !opt.Quick || opt.Budget != 90*time.Second || opt.Only != "kda" || len(opt.Classes) != 3 || len(opt.Threads) != 2 {
		t.Errorf("options %+v", opt)
	}
	got.Threads = "0"
	if _, err := got.tunerOptions(); err == nil {
		t.Error("--threads 0 accepted")
	}
}

// TestMaskedDetect runs the binary again with a mask: the mask applies for
// the rest of a process, so it gets its own.
func TestMaskedDetect(t *testing.T) {
	if os.Getenv("KTUNE_CLI_CHILD") != "" {
		os.Exit(Main(strings.Fields(os.Getenv("KTUNE_CLI_CHILD")), os.Stdout, os.Stderr))
	}
	run := func(args string, env ...string) DetectReport {
		cmd := testexec.Self("-test.run=^TestMaskedDetect$")
		cmd.Env = append(os.Environ(), append(env, "KTUNE_CLI_CHILD="+args)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", args, env, err, out)
		}
		var r DetectReport
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return r
	}
	full := run("detect --json")
	for name, r := range map[string]DetectReport{
		"env":  run("detect --json", "KTUNE_MAX_ISA=avx2"),
		"flag": run("--max-isa avx2 detect --json"),
	} {
		for _, f := range []string{"avx512f", "avx512_vnni", "avx_vnni", "amx_tile"} {
			if r.Features[f] {
				t.Errorf("%s: %s still effective under max-isa avx2", name, f)
			}
			if full.Features[f] && !contains(r.Masked.Names(), f) {
				t.Errorf("%s: %s not listed as masked: %v", name, f, r.Masked.Names())
			}
		}
		if r.Masked != 0 && r.Fingerprint == full.Fingerprint {
			t.Errorf("%s: masked run has the unmasked fingerprint", name)
		}
	}
	r := run("--disable-isa avx512_vnni,amx_tile detect --json")
	if r.Features["avx512_vnni"] || r.Features["amx_tile"] {
		t.Errorf("--disable-isa ignored: %v", r.Features)
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// TestNoisyRun: a run whose re-measured ceilings moved, or during which
// other processes took CPU time, warns and marks the profile noisy; a
// quiet one does neither.
func TestNoisyRun(t *testing.T) {
	defer func(m func(context.Context, roofline.Options) (*roofline.Ceilings, error), r func(context.Context, *roofline.Ceilings) (roofline.Drift, error), l func() (cpu.Load, error)) {
		measureCeilings, recheckCeilings, sampleLoad = m, r, l
	}(measureCeilings, recheckCeilings, sampleLoad)
	measureCeilings = func(ctx context.Context, o roofline.Options) (*roofline.Ceilings, error) {
		o.MaxWorkingSet, o.MinTime, o.Reps, o.Kinds = 1<<20, time.Millisecond, 1, []string{roofline.KindRead}
		return roofline.Measure(ctx, o)
	}
	defer func() { dramSampling = true }()
	dramSampling = false // the verdicts here come from the fakes below only
	var drift roofline.Drift
	recheckCeilings = func(context.Context, *roofline.Ceilings) (roofline.Drift, error) { return drift, nil }
	var loads []cpu.Load
	sampleLoad = func() (cpu.Load, error) {
		l := loads[0]
		if len(loads) > 1 {
			loads = loads[1:]
		}
		return l, nil
	}
	quiet := []cpu.Load{{Wall: time.Unix(0, 0)}, {Wall: time.Unix(10, 0), Busy: 5 * time.Second, Self: 5 * time.Second}}
	busy := []cpu.Load{{Wall: time.Unix(0, 0)}, {Wall: time.Unix(10, 0), Busy: 15 * time.Second, Self: 5 * time.Second}}
	for _, tc := range []struct {
		name  string
		drift roofline.Drift
		loads []cpu.Load
		noisy string
	}{
		{"quiet", roofline.Drift{ClockStart: 3, ClockEnd: 3.1, ReadStart: 30, ReadEnd: 29}, quiet, ""},
		{"clock moved", roofline.Drift{ClockStart: 3, ClockEnd: 3.6, ReadStart: 30, ReadEnd: 30}, quiet, "the clock moved +20%"},
		{"bandwidth moved", roofline.Drift{Threads: 1, ClockStart: 3, ClockEnd: 3, ReadStart: 30, ReadEnd: 20}, quiet, "DRAM read bandwidth (1 thread) moved -33%"},
		{"competitor", roofline.Drift{}, busy, "other processes used 1.00 CPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drift, loads = tc.drift, append([]cpu.Load(nil), tc.loads...)
			dir := t.TempDir()
			_, errs, code := runMain(t, "--quick", "--only", "norm", "--threads", "1", "--out", dir, "--check=false")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			m, _ := filepath.Glob(filepath.Join(dir, "ktune-profile-*.json"))
			if len(m) != 1 {
				t.Fatalf("profiles %v", m)
			}
			b, _ := os.ReadFile(m[0])
			var p struct{ Noisy []string }
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if tc.noisy == "" {
				if len(p.Noisy) > 0 || strings.Contains(errs, "noisy") {
					t.Errorf("quiet run marked noisy: %v\n%s", p.Noisy, errs)
				}
				return
			}
			if !strings.Contains(strings.Join(p.Noisy, ";"), tc.noisy) || !strings.Contains(errs, tc.noisy) || !strings.Contains(errs, "marked noisy") {
				t.Errorf("want %q in the profile and the warnings: %v\n%s", tc.noisy, p.Noisy, errs)
			}
		})
	}
}

// TestEndToEndLoss: a profile the end-to-end check finds slower is kept,
// recorded as a loss, and said so (krun then does not use it unless named:
// tuner.TestInstallNoisy's sibling in package profile).
func TestEndToEndLoss(t *testing.T) {
	defer func(m func(context.Context, roofline.Options) (*roofline.Ceilings, error), f func(context.Context, *profile.Profile, endtoend.Options) (*profile.EndToEnd, error)) {
		measureCeilings, runEndToEnd = m, f
	}(measureCeilings, runEndToEnd)
	measureCeilings = func(ctx context.Context, o roofline.Options) (*roofline.Ceilings, error) {
		o.MaxWorkingSet, o.MinTime, o.Reps, o.Kinds = 1<<20, time.Millisecond, 1, []string{roofline.KindRead}
		return roofline.Measure(ctx, o)
	}
	var threads []int
	runEndToEnd = func(ctx context.Context, p *profile.Profile, o endtoend.Options) (*profile.EndToEnd, error) {
		threads = o.Threads
		e := &profile.EndToEnd{Model: "fake", Rounds: 2, Rows: []profile.EndToEndRow{{Test: "tg16", Threads: 1, With: 8, Without: 10, Ratios: []float64{0.8, 0.8}}}}
		e.Judge()
		return e, nil
	}
	dir := t.TempDir()
	out, errs, code := runMain(t, "--quick", "--only", "norm", "--threads", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning: the engine ran slower with the new profile than without it (tg16 at 1 threads 0.80×)") || !strings.Contains(out, ": loss") {
		t.Errorf("no loss said:\n%s\n%s", out, errs)
	}
	if !slices.Equal(threads, []int{1}) {
		t.Errorf("checked at threads %v, want the one tuned: [1]", threads)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "ktune-profile-*.json"))
	if p, err := profile.Read(m[0]); err != nil || p.EndToEnd == nil || p.EndToEnd.Verdict != profile.VerdictLoss {
		t.Errorf("profile record: %v", err)
	}
}

// TestInterruptedRecheck: Ctrl-C during the end-of-run re-check is not
// swallowed: the run fails with a message and exit 130, and the profile is
// marked noisy.
func TestInterruptedRecheck(t *testing.T) {
	defer func(m func(context.Context, roofline.Options) (*roofline.Ceilings, error), r func(context.Context, *roofline.Ceilings) (roofline.Drift, error)) {
		measureCeilings, recheckCeilings = m, r
	}(measureCeilings, recheckCeilings)
	measureCeilings = func(ctx context.Context, o roofline.Options) (*roofline.Ceilings, error) {
		o.MaxWorkingSet, o.MinTime, o.Reps, o.Kinds = 1<<20, time.Millisecond, 1, []string{roofline.KindRead}
		return roofline.Measure(ctx, o)
	}
	recheckCeilings = func(ctx context.Context, _ *roofline.Ceilings) (roofline.Drift, error) {
		p, _ := os.FindProcess(os.Getpid())
		if err := p.Signal(os.Interrupt); err != nil {
			t.Skip("cannot signal this process:", err)
		}
		<-ctx.Done()
		return roofline.Drift{}, ctx.Err()
	}
	dir := t.TempDir()
	_, errs, code := runMain(t, "--quick", "--only", "norm", "--threads", "1", "--out", dir)
	if code != 130 || !strings.Contains(errs, "interrupted during the end-of-run re-check") {
		t.Fatalf("exit %d (want 130, as SIGINT, like krun convert): %s", code, errs)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "ktune-profile-*.json"))
	if len(m) != 1 {
		t.Fatalf("profiles %v", m)
	}
	b, _ := os.ReadFile(m[0])
	if !strings.Contains(string(b), "re-check was interrupted") {
		t.Errorf("profile not marked:\n%.400s", b)
	}
}

// TestUsageErrorsExit2: bad flags, arguments and masks exit 2 with one
// message, at once (before any measuring), and write nothing.
func TestUsageErrorsExit2(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, args := range [][]string{
		{"extra"},
		{"detect", "extra"},
		{"detect", "-o", "xml"},
		{"detect", "--capture="},
		{"--max-isa", "garbage", "detect"},
		{"--max-isa", "neon", "detect"}, // an arm64 level on amd64, or the reverse
		{"--budget", "-1s", "--out", t.TempDir()},
		{"--only", "nonsense", "--out", t.TempDir()},
		{"-o", "xml", "--out", t.TempDir()},
		{"--allow", "nonsense", "--out", t.TempDir()},
		{"--out", file},
		{"--threads", "1,9223372036854775807", "--out", t.TempDir()},
		{"roofline", "--threads", "0"},
		{"roofline", "-o", "xml"},
	} {
		if len(args) > 1 && args[1] == "neon" && runtime.GOARCH == "arm64" {
			args[1] = "avx2"
		}
		start := time.Now()
		_, errs, code := runMain(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") > 0 && !strings.Contains(errs, "Usage:") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%v: took %v before refusing", args, d)
		}
	}
}

// TestBadMaskEnvExit2: a bad KTUNE_MAX_ISA or KTUNE_DISABLE is refused
// (the user believes the mask applies), not ignored.
func TestBadMaskEnvExit2(t *testing.T) {
	for _, env := range []string{"KTUNE_MAX_ISA=garbage", "KTUNE_DISABLE=bogus"} {
		cmd := testexec.Self("-test.run=^TestMaskedDetect$")
		cmd.Env = append(os.Environ(), env, "KTUNE_CLI_CHILD=detect")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), strings.SplitN(env, "=", 2)[0]) {
			t.Errorf("%s: %v\n%s", env, err, out)
		}
	}
}

// TestSummaryTable: a run with more choices than a terminal shows prints
// one row per op (choices, thread budgets, the median and range of the
// speedups over the default) and writes the whole table beside the
// profile; a small one prints the whole table.
func TestSummaryTable(t *testing.T) {
	p := &profile.Profile{}
	for i := 0; i < 2*summaryRows; i++ {
		op := []string{"gemm.gemv", "norm.rmsnorm"}[i%2]
		p.Entries = append(p.Entries, profile.Entry{Op: op, DType: kernel.F32, Class: kernel.ClassF32, ShapeClass: "decode-1",
			Shape: kernel.Shape{{Key: "n", Value: 16 + i}}, Threads: 1 + i%4/2,
			Best: profile.Result{Variant: "generic", Median: 1e-3, FLOPs: 1e6, Bytes: 1e6}, Default: &profile.Result{Median: float64(1+i%3) * 1e-3}})
	}
	full := filepath.Join(t.TempDir(), "choices.md")
	var b strings.Builder
	if err := summaryTable(&b, "text", p, nil, full); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n > summaryRows || !strings.Contains(out, "gemm.gemv") || !strings.Contains(out, "(1.00–3.00×)") || !strings.Contains(out, full) {
		t.Errorf("%d lines:\n%s", n, out)
	}
	raw, err := os.ReadFile(full)
	if err != nil || strings.Count(string(raw), "| gemm.gemv") != summaryRows {
		t.Errorf("the full table: %v\n%.300s", err, raw)
	}
	b.Reset()
	p.Entries = p.Entries[:4]
	if err := summaryTable(&b, "text", p, nil, full+".small"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "vs default") || strings.Contains(b.String(), "choices in all") {
		t.Errorf("a small run's table:\n%s", b.String())
	}
}
