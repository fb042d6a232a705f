package krun

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
)

// TestPlanFlags: plan's flags reach its options (runF captures them).
func TestPlanFlags(t *testing.T) {
	var got *PlanOptions
	cmd := NewCmdPlan(&cli.Factory{}, func(o *PlanOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--kimi48b", "--fit", "24G,32G", "--ctx", "4096", "--seqs", "2", "--cache-dtype", "q8", "--reserve", "2G", "--formats", "q8,q4", "-o", "md"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Kimi48B || got.Fit != "24G,32G" || got.Ctx != 4096 || got.Seqs != 2 || got.CacheDType != "q8" || got.Reserve != "2G" || got.Formats != "q8,q4" || got.Format != "md" {
		t.Errorf("options %+v", got)
	}
	fo, err := got.FitFlags.options(io.Discard, nil, false)
	if err != nil || fo.Context != 4096 || fo.Seqs != 2 || fo.Reserve != 2<<30 || len(fo.Formats) != 2 {
		t.Errorf("fit options %+v, %v", fo, err)
	}
}

// TestPlanKimi48B: the 48B plans print their table and totals, a summary
// for several budgets, and refuse 16 GiB naming the least budget.
func TestPlanKimi48B(t *testing.T) {
	out, _, err := run(t, "plan", "--kimi48b", "--fit", "24G")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"attention", "experts.1", "lm_head", "KDA state", "MLA cache", "total resident", "fits: ", "rms"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	out, _, err = run(t, "plan", "--synthetic", "--fit", "16G,24G,32G,64G", "--preset", "q8,q4,q4-all,q3", "-o", "md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"summary:", "| fit 16.0 GiB  | no", "| fit 24.0 GiB  | yes", "preset q4-all", "needs "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestConvertFit converts the tiny model under --fit: the plan line, the
// per-tensor formats of the mixed groups, and a model that generates.
func TestConvertFit(t *testing.T) {
	tiny := tinyDir(t)
	out := filepath.Join(t.TempDir(), "fit.kt")
	stdout, stderr, err := run(t, "convert", tiny, "-o", out, "--fit", "1800K", "--reserve", "0", "--ctx", "64", "--formats", "bf16,q8,q4,q3")
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "plan for 1.8 MiB: experts") || !strings.Contains(stdout, "preset fit 1.8 MiB") {
		t.Errorf("stdout %q", stdout)
	}
	f, err := kfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("meta %v", f.Header.Table.Meta)
	if m := f.Header.Table.Meta; m["fit"] == "" || m[model.MetaExpertDType] != string(model.AsStored) {
		t.Errorf("meta %v: want a fit entry and the routed experts stored per tensor (mixed formats)", m)
	}
	f.Close()
	if stdout, stderr, err := run(t, "generate", out, "--ids", "1,5,9", "-n", "3", "--ignore-eos"); err != nil || len(strings.Split(strings.TrimSpace(stdout), ",")) != 3 {
		t.Errorf("generate: %q, %v\n%s", stdout, err, stderr)
	}
}

// TestPlanProbes: bad sizes, budgets too small, conflicting flags: one
// line, exit 2, nothing written.
func TestPlanProbes(t *testing.T) {
	tiny := tinyDir(t)
	setup := func(t testing.TB, dir string) { copyTiny(t, tiny, dir, "m") }
	probes := []clitest.Probe{
		{Name: "plan bad size", Args: []string{"plan", "--kimi48b", "--fit", "24X"}, Code: 2, Err: "unknown unit"},
		{Name: "plan zero size", Args: []string{"plan", "--kimi48b", "--fit", "0"}, Code: 2, Err: "want a size above 0"},
		{Name: "plan negative size", Args: []string{"plan", "--kimi48b", "--fit", "-3G"}, Code: 2, Err: "is not a size"},
		{Name: "plan too small", Args: []string{"plan", "--kimi48b", "--fit", "16G"}, Code: 2, Err: "does not fit in 16.00 GiB: even every matrix q2 needs 14.63 GiB"},
		{Name: "plan no model", Args: []string{"plan", "--fit", "24G"}, Code: 2, Err: "give a MODEL"},
		{Name: "plan model and kimi48b", Setup: setup, Args: []string{"plan", "{dir}/m", "--kimi48b", "--fit", "24G"}, Code: 2, Err: "not both"},
		{Name: "plan no fit", Args: []string{"plan", "--kimi48b"}, Code: 2, Err: "--fit SIZE"},
		{Name: "plan bad ctx", Args: []string{"plan", "--kimi48b", "--fit", "24G", "--ctx", "0"}, Code: 2, Err: "--ctx 0"},
		{Name: "plan absurd seqs", Args: []string{"plan", "--kimi48b", "--fit", "24G", "--seqs", "999999999999"}, Code: 2, Err: "--seqs 999999999999: want 1 to 65536"},
		{Name: "plan absurd ctx", Args: []string{"plan", "--kimi48b", "--fit", "24G", "--ctx", "99999999999"}, Code: 2, Err: "--ctx 99999999999: want 1 to 16777216 tokens"},
		{Name: "plan ctx past the model", Args: []string{"plan", "--kimi48b", "--fit", "64G", "--ctx", "2000000"}, Code: 0,
			Err: "warning: --ctx 2000000: the model's maximum length is 1048576 tokens; budgeting 1048576"},
		{Name: "plan an exabyte", Args: []string{"plan", "--kimi48b", "--fit", "1048576T"}, Code: 0,
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "3.0 GiB reserved for the OS") || strings.Contains(stdout, "unknown") {
					t.Errorf("the reserve of a 1 EiB budget: %s", stdout)
				}
			}},
		{Name: "plan bad format", Args: []string{"plan", "--kimi48b", "--fit", "24G", "--formats", "q8,q7"}, Code: 2, Err: `"q7" is not one of`},
		{Name: "plan bad cache", Args: []string{"plan", "--kimi48b", "--fit", "24G", "--cache-dtype", "q4"}, Code: 2, Err: "--cache-dtype"},
		{Name: "plan bad preset", Args: []string{"plan", "--kimi48b", "--preset", "q7"}, Code: 2, Err: "unknown preset"},
		{Name: "plan missing model", Args: []string{"plan", "{dir}/nope", "--fit", "24G"}, Code: 2, Err: "nope"},
		{Name: "plan tiny checkpoint", Setup: setup, Args: []string{"plan", "{dir}/m", "--fit", "4M"}, Code: 0,
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "m, fit 4.0 MiB") || !strings.Contains(stdout, "experts.1") {
					t.Errorf("stdout %q", stdout)
				}
			}},
		{Name: "convert fit too small", Setup: setup, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--fit", "100K"}, Code: 2, Err: "does not fit in"},
		{Name: "convert fit bad size", Setup: setup, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--fit", "lots"}, Code: 2, Err: "--fit"},
		{Name: "convert fit and preset", Setup: setup, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--fit", "4M", "--preset", "q4"}, Code: 2, Err: "without --preset"},
		{Name: "convert fit and experts", Setup: setup, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--fit", "4M", "--experts", "q4"}, Code: 2, Err: "without --preset"},
		{Name: "convert ctx without fit", Setup: setup, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--ctx", "4096"}, Code: 2, Err: "--ctx is a --fit assumption"},
		{Name: "convert fit two sizes", Setup: setup, Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt", "--fit", "4M,8M"}, Code: 2, Err: "give one size"},
	}
	clitest.Run(t, Main, probes)
}

// TestFitFormatsListed: the formats plan offers are the loader's (q6 among
// them once the engine serves it).
func TestFitFormatsListed(t *testing.T) {
	names := fitFormatNames()
	for _, f := range model.FitFormats {
		p := model.LoadOptions{Formats: model.Formats{DType: f.DType}, Memory: model.Memory{AvailableMemory: -1}}
		_, err := model.EstimateMemory(toyCfg(t), p, 2)
		if (err == nil) != contains(names, string(f.DType)) {
			t.Errorf("%s: loader says %v, plan lists %v", f.DType, err, names)
		}
	}
}

func toyCfg(t *testing.T) *arch.Config {
	t.Helper()
	cfg, err := peekConfig(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
