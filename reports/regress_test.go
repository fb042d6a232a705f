package reports

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genBench describes one generated benchmark: its true ns/op and,
// optionally, a throughput metric reported beside it.
type genBench struct {
	name   string
	nsop   float64
	metric string  // e.g. "GFLOP/s" ("" for none)
	value  float64 // the metric's true value
}

// genFile writes count runs of each benchmark in Go benchmark format, with
// deterministic uniform noise of ±noise (0.03 = ±3%), interleaved as
// -count runs are. header is written first (configuration, Unit lines).
func genFile(count int, seed uint64, noise float64, header string, benches []genBench) string {
	r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	jitter := func(v float64) float64 { return v * (1 + noise*(2*r.Float64()-1)) }
	var b strings.Builder
	b.WriteString(header)
	for i := 0; i < count; i++ {
		for _, g := range benches {
			fmt.Fprintf(&b, "%s-2\t%d\t%.1f ns/op", g.name, 1000, jitter(g.nsop))
			if g.metric != "" {
				fmt.Fprintf(&b, "\t%.3f %s", jitter(g.value), g.metric)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("PASS\n")
	return b.String()
}

const goHeader = "goos: linux\ngoarch: amd64\npkg: github.com/ktune/ktune/kernels/gemm\ncpu: AMD EPYC\n"

func parse(t *testing.T, name, text string) *BenchFile {
	t.Helper()
	bf, err := ParseBench(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return bf
}

var base = []genBench{
	{name: "BenchmarkGEMM/op=gemv/dtype=q4/variant=avx512_vnni/m=1/n=4096/k=2304/mem=dram/threads=1", nsop: 200e3, metric: "GFLOP/s", value: 94},
	{name: "BenchmarkGEMM/op=gemm/dtype=f32/variant=avx512/m=512/n=4096/k=2304/mem=l3/threads=2", nsop: 95e6, metric: "GFLOP/s", value: 203},
	{name: "BenchmarkKDA/op=decode/dtype=f32/variant=avx512/h=32/k=128/v=128/threads=1", nsop: 150e3},
}

func scaled(bs []genBench, which int, nsop, metric float64) []genBench {
	out := append([]genBench(nil), bs...)
	out[which].nsop *= nsop
	out[which].value *= metric
	return out
}

func verdicts(rep *RegressReport) map[string]Verdict {
	m := map[string]Verdict{}
	for _, d := range rep.Diffs {
		m[d.Name+" "+d.Unit] = d.Verdict
	}
	return m
}

func TestRegressPlantedSlowdown(t *testing.T) {
	old := parse(t, "old.txt", genFile(10, 1, 0.03, goHeader, base))
	slow := scaled(base, 2, 1.20, 1) // KDA decode 20% slower
	new := parse(t, "new.txt", genFile(10, 2, 0.03, goHeader, slow))
	rep := Regress(old, new, DefaultRegressOptions)
	reg := rep.Regressions()
	if len(reg) != 1 || reg[0].Name != bn(2) || reg[0].Unit != "sec/op" {
		t.Fatalf("want exactly the KDA sec/op regression, got %+v\n%v", reg, verdicts(rep))
	}
	if d := reg[0].Delta; d < 0.15 || d > 0.25 {
		t.Errorf("delta %.3f, want ≈ +0.20", d)
	}
	if reg[0].Cmp.P > 0.001 {
		t.Errorf("p = %v for a 20%% shift with ±3%% noise and n=10", reg[0].Cmp.P)
	}
}

func TestRegressSameDistribution(t *testing.T) {
	// several seed pairs, all drawn from the same distributions: nothing
	// may be flagged (±3% noise cannot move a median 5%)
	for seed := uint64(10); seed < 20; seed++ {
		old := parse(t, "old.txt", genFile(10, seed, 0.03, goHeader, base))
		new := parse(t, "new.txt", genFile(10, seed+100, 0.03, goHeader, base))
		rep := Regress(old, new, DefaultRegressOptions)
		if reg := rep.Regressions(); len(reg) != 0 {
			t.Errorf("seed %d: flagged %v", seed, reg)
		}
		for _, d := range rep.Diffs {
			if d.Verdict == OnlyOld || d.Verdict == OnlyNew || d.Verdict == TooFewSamples {
				t.Errorf("seed %d: %s %s: %v", seed, d.Name, d.Unit, d.Verdict)
			}
		}
	}
}

func TestRegressSpeedupNotFlagged(t *testing.T) {
	old := parse(t, "old.txt", genFile(10, 1, 0.03, goHeader, base))
	fast := scaled(base, 1, 0.8, 1.25) // GEMM 20% less time, 25% more GFLOP/s
	new := parse(t, "new.txt", genFile(10, 2, 0.03, goHeader, fast))
	rep := Regress(old, new, DefaultRegressOptions)
	if reg := rep.Regressions(); len(reg) != 0 {
		t.Fatalf("speedup flagged: %+v", reg)
	}
	v := verdicts(rep)
	for _, u := range []string{"sec/op", "GFLOP/s"} {
		if got := v[bn(1)+" "+u]; got != Improved {
			t.Errorf("%s: %v, want better", u, got)
		}
	}
}

func TestRegressTooFewSamples(t *testing.T) {
	old := parse(t, "old.txt", genFile(3, 1, 0.03, goHeader, base))
	new := parse(t, "new.txt", genFile(3, 2, 0.03, goHeader, scaled(base, 2, 1.2, 1)))
	rep := Regress(old, new, DefaultRegressOptions)
	if reg := rep.Regressions(); len(reg) != 0 {
		t.Fatalf("flagged with 3 samples: %+v", reg)
	}
	d := findDiff(t, rep, bn(2), "sec/op")
	if d.Verdict != TooFewSamples {
		t.Errorf("verdict %v, want too few samples", d.Verdict)
	}
	if len(d.Notes) == 0 || !strings.Contains(strings.Join(d.Notes, " "), "samples") {
		t.Errorf("benchmath's warning missing: %q", d.Notes)
	}
	_, rows := rep.Table()
	if !strings.Contains(fmt.Sprint(rows), "too few samples") {
		t.Errorf("table does not say so: %v", rows)
	}
	// 4 per side is the least that can reach α = 0.05 (benchmath's table)
	if p := uTestMinP(3, 3); math.Abs(p-0.1) > 1e-12 {
		t.Errorf("uTestMinP(3,3) = %v, want 0.1", p)
	}
	if p := uTestMinP(4, 4); math.Abs(p-0.02857142857142857) > 1e-12 {
		t.Errorf("uTestMinP(4,4) = %v", p)
	}
}

// bn is the name benchfmt reports for base[i]: without the "Benchmark"
// prefix, with the GOMAXPROCS suffix.
func bn(i int) string { return strings.TrimPrefix(base[i].name, "Benchmark") + "-2" }

func findDiff(t *testing.T, rep *RegressReport, name, unit string) BenchDiff {
	t.Helper()
	for _, d := range rep.Diffs {
		if d.Name == name && d.Unit == unit {
			return d
		}
	}
	t.Fatalf("no diff for %s %s", name, unit)
	return BenchDiff{}
}

func TestRegressThroughputDrop(t *testing.T) {
	// the metric drops 20% while the time per op holds: the drop alone
	// must be flagged, with and without a "Unit … better=higher" line
	for _, hdr := range []string{goHeader, goHeader + "Unit GFLOP/s Better=higher\n", goHeader + "Unit GFLOP/s better=higher\n"} {
		old := parse(t, "old.txt", genFile(10, 1, 0.03, hdr, base))
		new := parse(t, "new.txt", genFile(10, 2, 0.03, hdr, scaled(base, 0, 1, 0.8)))
		rep := Regress(old, new, DefaultRegressOptions)
		reg := rep.Regressions()
		if len(reg) != 1 || reg[0].Unit != "GFLOP/s" || reg[0].Name != bn(0) {
			t.Errorf("header %q: want the GFLOP/s drop, got %+v", hdr, reg)
		}
	}
	// MB/s (from b.SetBytes) is tidied to B/s and is higher-better too
	mk := func(seed uint64, mbs float64) string {
		return genFile(10, seed, 0.03, goHeader, []genBench{{name: "BenchmarkRead", nsop: 1e6, metric: "MB/s", value: mbs}})
	}
	rep := Regress(parse(t, "a", mk(1, 40000)), parse(t, "b", mk(2, 30000)), DefaultRegressOptions)
	if reg := rep.Regressions(); len(reg) != 1 || reg[0].Unit != "B/s" {
		t.Errorf("MB/s drop: %+v", reg)
	}
}

func TestRegressThreshold(t *testing.T) {
	// an 8% slowdown is significant: worse within a 10% threshold,
	// a regression at 5%
	old := parse(t, "old.txt", genFile(20, 1, 0.01, goHeader, base))
	new := parse(t, "new.txt", genFile(20, 2, 0.01, goHeader, scaled(base, 2, 1.08, 1)))
	opt := DefaultRegressOptions
	opt.Threshold = 0.10
	if d := findDiff(t, Regress(old, new, opt), bn(2), "sec/op"); d.Verdict != Worse {
		t.Errorf("10%%: %v", d.Verdict)
	}
	if d := findDiff(t, Regress(old, new, DefaultRegressOptions), bn(2), "sec/op"); d.Verdict != Regressed {
		t.Errorf("5%%: %v", d.Verdict)
	}
}

func TestRegressOnlyInOneFileAndConfig(t *testing.T) {
	oldText := "goos: linux\nktune-version: v0.1.0\ngo-version: go1.26.0\nfingerprint: aaaa\n" +
		"pkg: p/gemm\nBenchmarkX-2 10 100 ns/op\nBenchmarkX-2 10 101 ns/op\nBenchmarkGone-2 10 5 ns/op\n" +
		"pkg: p/kda\nBenchmarkX-2 10 900 ns/op\n"
	newText := "goos: linux\nktune-version: v0.2.0\ngo-version: go1.26.0\nfingerprint: bbbb\n" +
		"pkg: p/gemm\nBenchmarkX-2 10 100 ns/op\nBenchmarkNew-2 10 7 ns/op\n" +
		"pkg: p/kda\nBenchmarkX-2 10 905 ns/op\n"
	rep := Regress(parse(t, "old", oldText), parse(t, "new", newText), DefaultRegressOptions)
	v := map[string]Verdict{}
	for _, d := range rep.Diffs {
		v[d.Label()] = d.Verdict
	}
	want := map[string]Verdict{
		"pkg=p/gemm X-2":    TooFewSamples,
		"pkg=p/gemm Gone-2": OnlyOld,
		"pkg=p/gemm New-2":  OnlyNew,
		"pkg=p/kda X-2":     TooFewSamples,
	}
	if fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", v, want)
	}
	if m := rep.Missing(); len(m) != 1 || m[0].Label() != "pkg=p/gemm Gone-2" || rep.Compared() != 2 {
		t.Errorf("missing %v, compared %d; want Gone-2 and 2", m, rep.Compared())
	}
	if fmt.Sprint(rep.Common) != "[[go-version go1.26.0] [goos linux]]" {
		t.Errorf("common %v", rep.Common)
	}
	if fmt.Sprint(rep.Differ) != "[[fingerprint aaaa bbbb] [ktune-version v0.1.0 v0.2.0]]" {
		t.Errorf("differ %v", rep.Differ)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "different machines") {
		t.Errorf("no warning for different fingerprints: %v", rep.Warnings)
	}
	// sec/op against GFLOP/s only: nothing in common, everything missing
	rep = Regress(parse(t, "old", "BenchmarkX 1 5 ns/op\n"), parse(t, "new", "BenchmarkX 1 5 GFLOP/s\n"), DefaultRegressOptions)
	if rep.Compared() != 0 || len(rep.Missing()) != 1 {
		t.Errorf("units apart: compared %d, missing %v", rep.Compared(), rep.Missing())
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := ReadBenchFile(filepath.Join(t.TempDir(), "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: %v", err)
	}
	for name, text := range map[string]string{
		"empty":   "",
		"profile": `{"schema": 1, "entries": []}`,
		"broken":  "BenchmarkX-2 notanumber 12 ns/op\n",
	} {
		_, err := ParseBench(strings.NewReader(text), name)
		if err == nil || !strings.Contains(err.Error(), "no benchmark results") {
			t.Errorf("%s: %v", name, err)
		}
	}
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBenchFile(p); err == nil {
		t.Error("a 1 MiB line read as benchmarks")
	}
}

// TestParseBadValues: values no benchmark measures are refused with the
// file and line, before any statistics (NaN used to hang the Mann–Whitney
// test); zero bytes or allocations and units of unknown direction pass.
func TestParseBadValues(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"NaN ns/op", "new.txt:4: BenchmarkX-2: NaN ns/op: not a number"},
		{"nan GFLOP/s", "NaN GFLOP/s: not a number"},
		{"+Inf ns/op", "+Inf ns/op: infinite"},
		{"-Inf GB/s", "-Inf GB/s: infinite"},
		{"-104 ns/op", "-104 ns/op: negative"},
		{"-3 GFLOP/s", "-3 GFLOP/s: negative"},
		{"-1 allocs/op", "-1 allocs/op: negative"},
		{"0 ns/op", "0 ns/op: zero"},
		{"0 MB/s", "0 MB/s: zero"},
		{"12 ns/op 0 B/op 0 allocs/op -2 delta", ""},
	} {
		text := "goos: linux\n\nBenchmarkX-2 1 12 ns/op\nBenchmarkX-2 1 " + c.value + "\n"
		bf, err := ParseBench(strings.NewReader(text), "new.txt")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.value, err)
		case c.want == "":
			if got := bf.Values("X-2", "B/op"); len(got) != 1 || got[0] != 0 {
				t.Errorf("%q: B/op %v", c.value, got)
			}
		case err == nil || !strings.Contains(err.Error(), "new.txt:4: ") || !strings.Contains(err.Error(), c.want):
			t.Errorf("%q: error %v, want new.txt:4 and %q", c.value, err, c.want)
		}
	}
}

func TestBetter(t *testing.T) {
	for unit, want := range map[string]int{
		"sec/op": -1, "B/op": -1, "allocs/op": -1, "B/s": 1,
		"GFLOP/s": 1, "GB/s": 1, "tokens/s": 1, "tok/s": 1, "x": 0,
	} {
		if got := Better(unit); got != want {
			t.Errorf("Better(%q) = %d, want %d", unit, got, want)
		}
	}
	bf := parse(t, "f", "Unit misses better=higher\nUnit hits/s Better=lower\nBenchmarkX 1 1 misses\n")
	if Better("misses", bf.Units) != 1 || Better("hits/s", bf.Units) != -1 {
		t.Error("unit metadata ignored")
	}
}
