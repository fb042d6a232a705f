package krun

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/model"
)

// benchJSON runs bench with args (the read ceiling shrunk) and decodes
// its json rows.
func benchJSON(t *testing.T, synth func(int) (*arch.Config, error), args ...string) ([]BenchRow, string) {
	t.Helper()
	var o, e bytes.Buffer
	var opts *BenchOptions
	cmd := NewCmdBench(&cli.Factory{Out: &o, Err: &e}, func(x *BenchOptions) error { opts = x; return nil })
	cmd.SetArgs(append(args, "-o", "json"))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	opts.CeilingBytes, opts.DiskCeilingBytes = 1<<20, 8<<20
	if synth != nil {
		opts.synthConfig = synth
	}
	if err := runBench(opts); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	var res struct{ Results []BenchRow }
	if err := json.Unmarshal(o.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res.Results, e.String()
}

// TestBenchPageIns: every row reports its page-ins; a synthetic (heap)
// model has none and no prefetch; a model file prefetches unless
// --no-prefetch, and its rows carry the counters this OS gives.
func TestBenchPageIns(t *testing.T) {
	cfg, err := arch.Load(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	unix := runtime.GOOS != "windows" && runtime.GOOS != "plan9"
	rows, _ := benchJSON(t, func(int) (*arch.Config, error) { return cfg, nil }, "--synthetic", "--dtype", "q8", "-p", "4", "-n", "2", "-t", "1", "-r", "1")
	for _, r := range rows {
		if unix && (r.PageInsTok == nil || *r.PageInsTok != 0) {
			t.Errorf("heap model %s: page-ins %v, want 0", r.Test, r.PageInsTok)
		}
		if runtime.GOOS == "linux" && (r.DiskBytesTok == nil || r.DiskGBs == nil) {
			t.Errorf("heap model %s: no disk read figures on Linux", r.Test)
		}
		if r.Prefetch || r.PagedBoundFrac != 0 {
			t.Errorf("heap model %s: prefetch %v, paged bound %v", r.Test, r.Prefetch, r.PagedBoundFrac)
		}
	}

	out := filepath.Join(t.TempDir(), "tiny.kt")
	if _, _, err := run(t, "convert", tinyDir(t), "-o", out, "--preset", "q8"); err != nil {
		t.Fatal(err)
	}
	for _, off := range []bool{false, true} {
		args := []string{out, "--load", "map", "-p", "4", "-n", "2", "-t", "1", "-r", "1"}
		if off {
			args = append(args, "--no-prefetch")
		}
		rows, stderr := benchJSON(t, nil, args...)
		want := model.PrefetchSupported && !off
		if !strings.Contains(stderr, "expert prefetch "+map[bool]string{false: "off", true: "on"}[want]) {
			t.Errorf("--no-prefetch=%v: stderr says %q", off, stderr)
		}
		if model.PrefetchSupported && !strings.Contains(stderr, "of the weights into memory") {
			t.Errorf("--load map: no preload before measuring: %q", stderr)
		}
		for _, r := range rows {
			if r.Prefetch != want {
				t.Errorf("--no-prefetch=%v %s: prefetch %v", off, r.Test, r.Prefetch)
			}
			if unix && r.PageInsTok == nil || runtime.GOOS == "linux" && r.DiskGBs == nil {
				t.Errorf("%s: page-in fields missing: %+v", r.Test, r)
			}
		}
	}

	// the expert cache (forced; Linux on a file system that takes O_DIRECT)
	// is the prefetch's hooks: --no-prefetch leaves it unused, and says so
	t.Run("expert cache", func(t *testing.T) {
		t.Setenv(model.ExpertCacheEnv, "1")
		for _, off := range []bool{false, true} {
			args := []string{out, "--load", "map", "-p", "0", "-n", "2", "-t", "1", "-r", "1"}
			if off {
				args = append(args, "--no-prefetch")
			}
			_, stderr := benchJSON(t, nil, args...)
			if !strings.Contains(stderr, "expert cache of") {
				t.Skipf("no expert cache here: %s", stderr)
			}
			if unused := strings.Contains(stderr, "unused (--no-prefetch)"); unused != off {
				t.Errorf("--no-prefetch=%v: stderr says %q", off, stderr)
			}
		}
	})

	// copied into memory: no prefetch, said so; a bad --load is a usage error
	if _, stderr := benchJSON(t, nil, out, "--load", "copy", "-p", "4", "-n", "0", "-t", "1", "-r", "1"); !strings.Contains(stderr, "weights copied into memory") || !strings.Contains(stderr, "expert prefetch off") || strings.Contains(stderr, "preloaded") {
		t.Errorf("--load copy: stderr says %q", stderr)
	}
	if _, _, err := run(t, "bench", out, "--load", "heap", "-p", "4", "-n", "0"); cli.ExitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "--load") {
		t.Errorf("--load heap: %v (exit %d), want a usage error naming --load", err, cli.ExitCode(err))
	}

	// csv: the old columns, then the new ones
	var o, e bytes.Buffer
	f := &cli.Factory{Out: &o, Err: &e}
	var opts *BenchOptions
	cmd := NewCmdBench(f, func(x *BenchOptions) error { opts = x; return nil })
	cmd.SetArgs([]string{out, "-p", "0", "-n", "2", "-t", "1", "-r", "1", "-o", "csv"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	opts.CeilingBytes = 1 << 20
	if err := runBench(opts); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(o.String())).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("csv %q: %v", o.String(), err)
	}
	head := strings.Join(recs[0], ",")
	if !strings.HasPrefix(head, "model,dtype,params,threads,test,n_prompt,n_gen,n_depth,avg_ts,stddev_ts,weight_bytes_per_token,read_ceiling_gbs,bound_frac,") ||
		!strings.HasSuffix(head, ",page_ins_per_token,disk_read_bytes_per_token,disk_read_gbs,prefetch,disk_ceiling_gbs,paged_bound_frac") {
		t.Errorf("csv header %s", head)
	}
	// md: the model file's table has the page-in columns
	o.Reset()
	opts.Format = "md"
	if err := runBench(opts); err != nil {
		t.Fatal(err)
	}
	if s := o.String(); !strings.Contains(s, "page-ins/tok") || !strings.Contains(s, "of paged bound") {
		t.Errorf("md:\n%s", s)
	}
}

// TestBenchPageInProbes: the new flags refuse bad values with exit 2
// before anything is measured.
func TestBenchPageInProbes(t *testing.T) {
	measured := ceilingRuns.Load()
	fast := 10 * time.Second
	clitest.Run(t, Main, []clitest.Probe{
		{Name: "bench/lock-hot-negative", Args: []string{"bench", "--synthetic", "--lock-hot", "-1"}, Code: 2, Err: "--lock-hot -1", Timeout: fast},
		{Name: "bench/lock-hot-word", Args: []string{"bench", "--synthetic", "--lock-hot", "many"}, Code: 2, Err: "--lock-hot", Timeout: fast},
		{Name: "bench/no-prefetch-value", Args: []string{"bench", "--synthetic", "--no-prefetch=maybe"}, Code: 2, Err: "no-prefetch", Timeout: fast},
	})
	if n := ceilingRuns.Load(); n != measured {
		t.Errorf("the read ceiling was measured (%d runs) before a refusal", n-measured)
	}
}

// TestBoundPct: a row above its bound says so; one at or below it does not.
func TestBoundPct(t *testing.T) {
	for f, want := range map[float64]string{0.9: "90%", 1.0: "100%", 1.05: "105%"} {
		if got := boundPct(f); got != want {
			t.Errorf("boundPct(%v) = %q, want %q", f, got, want)
		}
	}
	if got := boundPct(2.38); !strings.HasPrefix(got, "238% (above the bound") {
		t.Errorf("boundPct(2.38) = %q, want it marked above the bound", got)
	}
}
