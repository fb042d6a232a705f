package kprofile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/tuner"
)

// TestProbes runs kprofile against generated bad inputs (issue 20): each
// probe's exit code and one-line error, no input changed, no file left,
// no hang. Rows 1-4 (regress) and 10 (profile validation) of the issue,
// and the cases that already answered well, so they stay so.
func TestProbes(t *testing.T) {
	clitest.Run(t, Main, kprofileProbes())
}

// benchText is count runs of each benchmark name with one value and unit
// (a ±1% deterministic wobble), after goos/goarch lines; bad, when set,
// replaces the value of the fourth run of the first benchmark (line 7 of
// a file of one benchmark, line 10 of two).
func benchText(count int, unit string, scale float64, bad string, names ...string) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\n\n")
	for i := 0; i < count; i++ {
		for j, n := range names {
			v := fmt.Sprint(scale * (1000 + float64((i*7+j*3)%10)))
			if i == 3 && j == 0 && bad != "" {
				v = bad
			}
			fmt.Fprintf(&b, "Benchmark%s-2\t1000\t%s %s\n", n, v, unit)
		}
	}
	return b.String()
}

// benchFiles writes base.txt and new.txt.
func benchFiles(base, new string) func(t testing.TB, dir string) {
	return func(t testing.TB, dir string) {
		clitest.WriteFile(t, dir, "base.txt", base)
		clitest.WriteFile(t, dir, "new.txt", new)
	}
}

// probeProfile is a small valid profile of this machine: the default
// variant of the first workloads at budgets 1 and 2; edit spoils it.
func probeProfile(t testing.TB, edit func(p *profile.Profile)) string {
	t.Helper()
	p := profile.NewProfile("Kimi-Linear-48B-A3B", kernel.DefaultClasses)
	p.Created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, w := range tuner.Workloads(arch.Kimi48B(), tuner.QuickClasses, true)[:3] {
		v := kernel.Default(w.Op, w.DType)
		if v == nil {
			t.Fatalf("%s %s: no default variant", w.Op, w.DType)
		}
		for _, threads := range []int{1, 2} {
			cfg := v.DefaultConfig(w.Shape, threads)
			cost := v.CostAt(w.Shape, w.DType, cfg)
			p.Put(profile.Entry{Op: w.Op, DType: w.DType, Class: v.Class, ShapeClass: w.ShapeClass, Label: w.Label, Shape: w.Shape, Threads: threads,
				Best: profile.Result{Variant: v.Name, Params: cfg.Params, Threads: cfg.Threads, Median: 1e-4, Lo: 0.9e-4, Hi: 1.1e-4, N: 6, FLOPs: cost.FLOPs, Bytes: cost.Bytes}})
		}
	}
	if edit != nil {
		edit(p)
	}
	var b bytes.Buffer
	if err := p.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// profileFile writes p.json (spoiled by edit) and, when the probe
// compares, a good q.json.
func profileFile(edit func(p *profile.Profile)) func(t testing.TB, dir string) {
	return func(t testing.TB, dir string) {
		clitest.WriteFile(t, dir, "p.json", probeProfile(t, edit))
		clitest.WriteFile(t, dir, "q.json", probeProfile(t, nil))
	}
}

func write(name, content string) func(t testing.TB, dir string) {
	return func(t testing.TB, dir string) { clitest.WriteFile(t, dir, name, content) }
}

// unreadable writes name with mode 000 (root reads it anyway: skipped).
func unreadable(name, content string) func(t testing.TB, dir string) {
	return func(t testing.TB, dir string) {
		if os.Geteuid() == 0 {
			t.Skip("root reads mode 000 files")
		}
		p := clitest.WriteFile(t, dir, name, content)
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o644) })
	}
}

// warnsOnce wants exactly one warning line on stderr, and a table shown.
func warnsOnce(t testing.TB, dir, stdout, stderr string) {
	if n := strings.Count(stderr, "warning: "); n != 1 {
		t.Errorf("%d warnings, want one per bad entry:\n%s", n, stderr)
	}
	if !strings.Contains(stdout, "Choices") && !strings.Contains(stdout, "geomean") {
		t.Errorf("nothing shown:\n%s", stdout)
	}
}

func quiet(t testing.TB, dir, stdout, stderr string) {
	if stderr != "" {
		t.Errorf("stderr of a good run: %s", stderr)
	}
}

// spoilers are the bad entries of row 10.
var spoilers = []struct {
	name, err string
	edit      func(p *profile.Profile)
}{
	{"schema-99", "profile schema 99, this build reads 1", func(p *profile.Profile) { p.Schema = 99 }},
	{"variant-avx1024", `stale variant: `, func(p *profile.Profile) { p.Entries[0].Best.Variant = "avx1024" }},
	{"param-mr-99", "stale parameters", func(p *profile.Profile) {
		for i := range p.Entries {
			if _, ok := p.Entries[i].Best.Params["mr"]; ok {
				p.Entries[i].Best.Params["mr"] = 99
				return
			}
		}
		p.Entries[0].Best.Params["mr"] = 99 // no variant with mr here: an unknown parameter
	}},
	{"threads-0", "thread budget 0: want 1 to 65536", func(p *profile.Profile) { p.Entries[0].Threads = 0 }},
	{"threads-1e6", "thread budget 1000000: want 1 to 65536", func(p *profile.Profile) { p.Entries[0].Threads = 1e6 }},
	{"median-negative", "best median -1 s", func(p *profile.Profile) { p.Entries[0].Best.Median = -1 }},
}

func kprofileProbes() []clitest.Probe {
	good := benchText(10, "ns/op", 1, "", "A", "B")
	nanosec := func(bad string) string { return benchText(10, "ns/op", 1, bad, "A", "B") }
	regress := func(extra ...string) []string {
		return append(append([]string{"regress"}, extra...), "{dir}/base.txt", "{dir}/new.txt")
	}
	probes := []clitest.Probe{
		// row 1: NaN used to hang with memory climbing; now an error naming the line, within a second
		{Name: "regress/nan-ns", Setup: benchFiles(good, nanosec("NaN")), Args: regress(), Code: 2,
			Err: "new.txt:10: BenchmarkA-2: NaN ns/op: not a number", Timeout: time.Second},
		{Name: "regress/nan-gflops", Setup: benchFiles(benchText(10, "GFLOP/s", 0.1, "", "A"), benchText(10, "GFLOP/s", 0.1, "NaN", "A")),
			Args: regress(), Code: 2, Err: "new.txt:7: BenchmarkA-2: NaN GFLOP/s: not a number", Timeout: time.Second},
		{Name: "regress/nan-in-base", Setup: benchFiles(nanosec("nan"), good), Args: regress(), Code: 2,
			Err: "base.txt:10: BenchmarkA-2: NaN ns/op", Timeout: time.Second},
		// row 2: a renamed benchmark must not switch the gate off
		{Name: "regress/nothing-in-common", Setup: benchFiles(good, benchText(10, "ns/op", 1, "", "C", "D")), Args: regress(), Code: 2,
			Err: "have no benchmark and unit in common (2 benchmark(s) in sec/op against 2 benchmark(s) in sec/op)"},
		{Name: "regress/secop-vs-gflops", Setup: benchFiles(good, benchText(10, "GFLOP/s", 1, "", "A", "B")), Args: regress(), Code: 2,
			Err: "in sec/op against 2 benchmark(s) in GFLOP/s"},
		{Name: "regress/missing-in-new", Setup: benchFiles(good, benchText(10, "ns/op", 1, "", "A")), Args: regress(), Code: 2,
			Err: "/base.txt missing from "},
		{Name: "regress/allow-missing", Setup: benchFiles(good, benchText(10, "ns/op", 1, "", "A")), Args: regress("--allow-missing"), Code: 0,
			Err: "warning: B-2 (sec/op) is missing from"},
		{Name: "regress/allow-nothing-in-common", Setup: benchFiles(good, benchText(10, "GFLOP/s", 1, "", "A", "B")), Args: regress("--allow-missing"), Code: 0,
			Err: "nothing was checked"},
		// row 3: usage errors exit 2, not 1 (the regression code)
		{Name: "regress/threshold-abc", Setup: benchFiles(good, good), Args: regress("--threshold", "abc"), Code: 2, Err: `--threshold "abc": want a percentage`},
		{Name: "regress/threshold-bare-5", Setup: benchFiles(good, good), Args: regress("--threshold", "5"), Code: 2, Err: "write 5% for a percentage"},
		{Name: "regress/threshold-negative", Setup: benchFiles(good, good), Args: regress("--threshold", "-5%"), Code: 2, Err: "must not be negative"},
		{Name: "regress/threshold-nan", Setup: benchFiles(good, good), Args: regress("--threshold", "NaN%"), Code: 2, Err: "want a percentage"},
		{Name: "regress/alpha-2", Setup: benchFiles(good, good), Args: regress("--alpha", "2"), Code: 2, Err: "--alpha 2: must be between 0 and 1"},
		{Name: "regress/alpha-word", Setup: benchFiles(good, good), Args: regress("--alpha", "high"), Code: 2, Err: `invalid argument "high" for "--alpha"`},
		{Name: "regress/one-argument", Setup: benchFiles(good, good), Args: []string{"regress", "{dir}/base.txt"}, Code: 2, Err: "accepts 2 arg(s), received 1"},
		{Name: "regress/three-arguments", Setup: benchFiles(good, good), Args: []string{"regress", "{dir}/base.txt", "{dir}/new.txt", "{dir}/new.txt"}, Code: 2, Err: "accepts 2 arg(s), received 3"},
		{Name: "regress/format-xml", Setup: benchFiles(good, good), Args: regress("-o", "xml"), Code: 2, Err: `unknown table format "xml"`},
		{Name: "regress/unknown-flag", Setup: benchFiles(good, good), Args: regress("--count", "3"), Code: 2, Err: "unknown flag: --count"},
		// row 4: values no benchmark measures
		{Name: "regress/plus-inf", Setup: benchFiles(good, nanosec("+Inf")), Args: regress(), Code: 2, Err: "new.txt:10: BenchmarkA-2: +Inf ns/op: infinite"},
		{Name: "regress/minus-inf-gbs", Setup: benchFiles(benchText(10, "GB/s", 1, "", "A"), benchText(10, "GB/s", 1, "-Inf", "A")), Args: regress(), Code: 2, Err: "-Inf GB/s: infinite"},
		{Name: "regress/negative", Setup: benchFiles(good, nanosec("-104.98")), Args: regress(), Code: 2, Err: "new.txt:10: BenchmarkA-2: -104.98 ns/op: negative"},
		{Name: "regress/zero", Setup: benchFiles(good, nanosec("0")), Args: regress(), Code: 2, Err: "new.txt:10: BenchmarkA-2: 0 ns/op: zero"},
		{Name: "regress/zero-rate", Setup: benchFiles(benchText(10, "MB/s", 1, "", "A"), benchText(10, "MB/s", 1, "0", "A")), Args: regress(), Code: 2, Err: "0 MB/s: zero"},
		// inputs that already answered well
		{Name: "regress/missing-file", Setup: write("base.txt", good), Args: regress(), Code: 2, Err: "new.txt: no such file or directory"},
		{Name: "regress/empty-file", Setup: benchFiles(good, ""), Args: regress(), Code: 2, Err: "new.txt: no benchmark results"},
		{Name: "regress/profile-given", Setup: benchFiles(good, `{"schema": 1, "fingerprint": "x", "entries": []}`), Args: regress(), Code: 2, Err: "no benchmark results"},
		{Name: "regress/binary", Setup: benchFiles(good, "\x7fELF\x02\x01\x01\x00\x00\x00"+strings.Repeat("\x00\xff", 512)), Args: regress(), Code: 2, Err: "no benchmark results"},
		{Name: "regress/folder", Setup: func(t testing.TB, dir string) {
			clitest.WriteFile(t, dir, "base.txt", good)
			os.Mkdir(filepath.Join(dir, "new.txt"), 0o755)
		}, Args: regress(), Code: 2, Err: "is a directory"},
		{Name: "regress/unreadable", Setup: func(t testing.TB, dir string) {
			clitest.WriteFile(t, dir, "base.txt", good)
			unreadable("new.txt", good)(t, dir)
		}, Args: regress(), Code: 2, Err: "permission denied"},
		{Name: "regress/no-regression", Setup: benchFiles(good, good), Args: regress(), Code: 0,
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "no regression beyond 5%") {
					t.Errorf("stdout:\n%s", stdout)
				}
			}},
		{Name: "regress/regression", Setup: benchFiles(good, benchText(10, "ns/op", 1.3, "", "A", "B")), Args: regress(), Code: 1, Err: "2 regression(s) beyond 5%"},

		// row 10: the engine's validation in show, compare and export
		{Name: "show/good", Setup: profileFile(nil), Args: []string{"show", "{dir}/p.json"}, Code: 0, Check: quiet},
		{Name: "compare/good-html", Setup: profileFile(nil), Args: []string{"compare", "--html", "{dir}/r.html", "{dir}/p.json", "{dir}/q.json"}, Code: 0,
			Creates: []string{"r.html"}, Check: quiet},
		{Name: "export/good", Setup: profileFile(nil), Args: []string{"export", "--threads", "2", "-o", "{dir}/out.json", "{dir}/p.json"}, Code: 0,
			Creates: []string{"out.json"}, Err: "/out.json: 3 of 6 entries (threads 2"},
		{Name: "show/missing", Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "p.json: no such file or directory"},
		{Name: "show/empty", Setup: write("p.json", ""), Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "not a ktune profile (corrupt JSON?)"},
		{Name: "show/truncated-json", Setup: func(t testing.TB, dir string) {
			s := probeProfile(t, nil)
			clitest.WriteFile(t, dir, "p.json", s[:len(s)/2])
		}, Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "unexpected end of JSON input"},
		{Name: "show/wrong-types", Setup: write("p.json", `{"schema": "one", "fingerprint": 3}`), Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "cannot unmarshal"},
		{Name: "show/no-schema", Setup: write("p.json", `{"fingerprint": "x", "entries": []}`), Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "no schema or fingerprint"},
		{Name: "show/benchmark-file", Setup: write("p.json", good), Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "not a ktune profile"},
		{Name: "show/folder", Args: []string{"show", "{dir}"}, Code: 2, Err: "is a directory"},
		{Name: "show/unreadable", Setup: unreadable("p.json", "{}"), Args: []string{"show", "{dir}/p.json"}, Code: 2, Err: "permission denied"},
		{Name: "show/format", Setup: profileFile(nil), Args: []string{"show", "-o", "json", "{dir}/p.json"}, Code: 2, Err: `unknown table format "json"`},
		{Name: "show/no-argument", Args: []string{"show"}, Code: 2, Err: "accepts 1 arg(s), received 0"},
		{Name: "compare/one-profile", Setup: profileFile(nil), Args: []string{"compare", "{dir}/p.json"}, Code: 2, Err: "requires at least 2 arg(s)"},
		{Name: "compare/missing", Setup: profileFile(nil), Args: []string{"compare", "{dir}/p.json", "{dir}/nope.json"}, Code: 2, Err: "nope.json: no such file"},
		{Name: "compare/html-no-folder", Setup: profileFile(nil), Args: []string{"compare", "--html", "{dir}/no/r.html", "{dir}/p.json", "{dir}/q.json"}, Code: 2,
			Err: "/no/r.html: folder "},
		{Name: "compare/html-over-input", Setup: profileFile(nil), Args: []string{"compare", "--html", "{dir}/q.json", "{dir}/p.json", "{dir}/q.json"}, Code: 2,
			Err: "refusing to write over it"},
		{Name: "export/threads-above-the-profile", Setup: profileFile(nil), Args: []string{"export", "--threads", "99", "-o", "{dir}/out.json", "{dir}/p.json"}, Code: 0,
			Creates: []string{"out.json"}, Err: "warning: --threads 99: "},
		{Name: "export/no-threads", Setup: profileFile(nil), Args: []string{"export", "{dir}/p.json"}, Code: 2, Err: "--threads N (1 to 65536) is required"},
		{Name: "export/flag-threads-1e6", Setup: profileFile(nil), Args: []string{"export", "--threads", "1000000", "{dir}/p.json"}, Code: 2, Err: "--threads N (1 to 65536)"},
		{Name: "export/over-input", Setup: profileFile(nil), Args: []string{"export", "--threads", "2", "-o", "{dir}/p.json", "{dir}/p.json"}, Code: 2,
			Err: "; refusing to write over it"},
		{Name: "export/out-no-folder", Setup: profileFile(nil), Args: []string{"export", "--threads", "2", "-o", "{dir}/no/out.json", "{dir}/p.json"}, Code: 2,
			Err: "/no does not exist"},
		{Name: "export/out-is-folder", Setup: profileFile(nil), Args: []string{"export", "--threads", "2", "-o", "{dir}", "{dir}/p.json"}, Code: 2, Err: "is a folder"},
		{Name: "export/bad-config", Setup: func(t testing.TB, dir string) {
			profileFile(nil)(t, dir)
			clitest.WriteFile(t, dir, "config.json", `{"hidden_size": "big"`)
		}, Args: []string{"export", "--threads", "2", "--config", "{dir}/config.json", "{dir}/p.json"}, Code: 2, Err: "config.json"},
		{Name: "export/corrupt", Setup: write("p.json", "{"), Args: []string{"export", "--threads", "2", "-o", "{dir}/out.json", "{dir}/p.json"}, Code: 2, Err: "corrupt JSON"},

		// bench: usage errors before anything runs
		{Name: "bench/count-0", Args: []string{"bench", "--count", "0"}, Code: 2, Err: "--count 0: must be at least 1"},
		{Name: "bench/benchtime-0", Args: []string{"bench", "--benchtime", "0s"}, Code: 2, Err: "--benchtime 0s: must be positive"},
		{Name: "bench/missing-profile", Args: []string{"bench", "{dir}/p.json"}, Code: 2, Err: "no such file"},
		{Name: "bench/unknown-op", Setup: profileFile(nil), Args: []string{"bench", "--ops", "gemm.nosuch", "{dir}/q.json"}, Code: 2, Err: `--ops: unknown op or family "gemm.nosuch"`},
		{Name: "bench/out-no-folder", Setup: profileFile(nil), Args: []string{"bench", "-o", "{dir}/no/b.txt", "{dir}/q.json"}, Code: 2, Err: "/no does not exist"},

		// the command itself
		{Name: "root/unknown-command", Args: []string{"sho", "{dir}/p.json"}, Code: 2, Err: `unknown command "sho" for "kprofile"; did you mean show`},
	}
	for _, s := range spoilers {
		probes = append(probes,
			clitest.Probe{Name: "show/" + s.name, Setup: profileFile(s.edit), Args: []string{"show", "{dir}/p.json"}, Code: 0, Err: s.err, Check: warnsOnce},
			clitest.Probe{Name: "compare/" + s.name, Setup: profileFile(s.edit), Args: []string{"compare", "{dir}/q.json", "{dir}/p.json"}, Code: 0, Err: "p.json: ", Check: warnsOnce},
			clitest.Probe{Name: "export/" + s.name, Setup: profileFile(s.edit), Args: []string{"export", "--threads", "2", "-o", "{dir}/out.json", "{dir}/p.json"}, Code: 2,
				Err: s.err},
			clitest.Probe{Name: "export-stdout/" + s.name, Setup: profileFile(s.edit), Args: []string{"export", "--threads", "2", "{dir}/p.json"}, Code: 2, Err: "not exported",
				Check: func(t testing.TB, dir, stdout, stderr string) {
					if stdout != "" {
						t.Errorf("an invalid profile exported to stdout:\n%.200s", stdout)
					}
				}},
		)
	}
	return probes
}
