package kprofile

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/chromiumtest"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/roofline"
	"github.com/ktune/ktune/tuner"
)

// testCeilings are made-up ceilings: f32 FMA and int8 VNNI peaks and a
// DRAM read plateau at 1 and 2 threads, scaled.
func testCeilings(fp string, scale float64, vnni bool) json.RawMessage {
	c := roofline.Ceilings{Schema: roofline.Schema, Fingerprint: fp, CPU: "test", Arch: "amd64", ClockGHz: 2.6, Threads: []int{1, 2}}
	for _, t := range []int{1, 2} {
		ft := float64(t)
		c.Compute = append(c.Compute, roofline.ComputeCeiling{Name: "fma_f32", DType: "f32", ISA: "fma", Threads: t, GFLOPS: 80 * ft * scale})
		if vnni {
			c.Compute = append(c.Compute, roofline.ComputeCeiling{Name: "vnni_int8", DType: "int8", ISA: "avx512_vnni", Threads: t, GFLOPS: 300 * ft * scale})
		}
		c.Sweeps = append(c.Sweeps, roofline.BandwidthSweep{Kind: roofline.KindRead, Threads: t,
			Points:   []roofline.BWPoint{{Bytes: 1 << 20, GBs: 100 * ft}, {Bytes: 1 << 30, GBs: 12 * ft}},
			Plateaus: []roofline.Plateau{{Level: "L2", GBs: 100 * ft, Points: 1}, {Level: "DRAM", GBs: 12 * ft, Points: 1}}})
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}

// genProfile writes a profile in the shape ktune writes, for the model's
// quick workloads at 1 and 2 threads in every class with candidates here:
// variants taken in turn from the candidates (so thread budgets differ),
// their default parameters, and figures from a made-up machine whose speed
// is scale. fp "" is this machine's fingerprint (the profile then passes
// profile.Load).
func genProfile(t *testing.T, dir, fp, mask string, scale float64, drop func(e *profile.Entry) bool) string {
	t.Helper()
	p := profile.NewProfile("Kimi-Linear-48B-A3B", kernel.DefaultClasses)
	if fp != "" {
		p.Fingerprint = fp
	}
	p.CPU.Mask = mask
	p.Created = time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)
	p.Ceilings = testCeilings(p.Fingerprint, scale, mask == "")
	turn := 0
	for _, w := range tuner.Workloads(arch.Kimi48B(), tuner.QuickClasses, true) {
		for _, class := range p.Classes {
			cands := kernel.Candidates(w.Op, w.DType, []kernel.Class{class})
			for _, threads := range []int{1, 2} {
				if len(cands) == 0 {
					continue
				}
				v := cands[turn%len(cands)]
				turn++
				cfg := v.DefaultConfig(w.Shape, threads)
				if v.Validate(w.Shape, cfg) != nil {
					continue
				}
				cost := v.CostAt(w.Shape, w.DType, cfg)
				sec := math.Max(cost.FLOPs/(40e9*float64(cfg.Threads)*scale), cost.Bytes/(10e9*scale))
				if class == kernel.ClassInt8Act {
					sec *= 0.8
				}
				best := profile.Result{Variant: v.Name, Params: cfg.Params, Threads: cfg.Threads, Median: sec, Lo: sec * 0.98, Hi: sec * 1.03, N: 6, FLOPs: cost.FLOPs, Bytes: cost.Bytes}
				// the default: another candidate, 1.25× slower (the choice
				// itself as its default would read 1.00×)
				def := best
				def.Variant = "untuned"
				def.Median *= 1.25
				e := profile.Entry{Op: w.Op, DType: w.DType, Class: class, ShapeClass: w.ShapeClass, Label: w.Label, Shape: w.Shape,
					Threads: threads, Best: best, Default: &def, Space: 4, Measured: 3}
				if w.Cold {
					e.Mem = "dram"
				}
				if drop != nil && drop(&e) {
					continue
				}
				p.Put(e)
			}
		}
	}
	p.Sort()
	path := filepath.Join(dir, profile.FileName(p.Fingerprint))
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlags(t *testing.T) {
	f := &cli.Factory{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	var show *ShowOptions
	c := NewCmdShow(f, func(o *ShowOptions) error { show = o; return nil })
	c.SetArgs([]string{"-o", "md", "p.json"})
	if err := c.Execute(); err != nil || *show != (ShowOptions{Profile: "p.json", Format: "md"}) {
		t.Errorf("show: %v %+v", err, show)
	}
	var cmp *CompareOptions
	c = NewCmdCompare(f, func(o *CompareOptions) error { cmp = o; return nil })
	c.SetArgs([]string{"--html", "r.html", "a.json", "b.json", "c.json"})
	if err := c.Execute(); err != nil || cmp.HTML != "r.html" || cmp.Format != "text" || !slices.Equal(cmp.Profiles, []string{"a.json", "b.json", "c.json"}) {
		t.Errorf("compare: %v %+v", err, cmp)
	}
	var exp *ExportOptions
	c = NewCmdExport(f, func(o *ExportOptions) error { exp = o; return nil })
	c.SetArgs([]string{"p.json", "--threads", "8", "--config", "config.json", "-o", "out.json"})
	if err := c.Execute(); err != nil || *exp != (ExportOptions{Profile: "p.json", Threads: 8, Config: "config.json", Out: "out.json"}) {
		t.Errorf("export: %v %+v", err, exp)
	}
	var bo *BenchOptions
	c = NewCmdBench(f, func(o *BenchOptions) error { bo = o; return nil })
	c.SetArgs([]string{"--count", "10", "--ops", "gemm.gemv,kda"})
	if err := c.Execute(); err != nil || *bo != (BenchOptions{Count: 10, Ops: "gemm.gemv,kda", BenchTime: 100 * time.Millisecond}) {
		t.Errorf("bench: %v %+v", err, bo)
	}
	for _, bad := range [][]string{{"compare", "a.json"}, {"export", "p.json"}, {"show"}, {"bench", "--count", "0"}, {"bench", "a", "b"}} {
		if _, _, code := runKprofile(bad...); code == 0 {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestShow(t *testing.T) {
	path := genProfile(t, t.TempDir(), "", "", 1, nil)
	out, errs, code := runKprofile("show", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{cpu.Fingerprint(), "fma_f32", "vnni_int8", "read DRAM", "gemm.gemv", "decode-1", "1.25×", "% of roof"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`\b\d+%`).MatchString(out) {
		t.Errorf("no %% of roof figures:\n%s", out)
	}
	if !strings.Contains(out, "quiet") || strings.Contains(errs, "noisy") {
		t.Errorf("a quiet profile not said quiet:\n%s\n%s", out, errs)
	}
	// a profile a busy run marked noisy says so, in the table and on stderr
	p, err := profile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// an entry given twice is an error of that entry
	dup := *p
	dup.Entries = append(slices.Clone(p.Entries), p.Entries[0])
	if whole, errs := dup.Validate(); whole != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "a second entry") {
		t.Errorf("a profile with an entry twice: %v, %v", whole, errs)
	}
	p.Noisy = []string{"other processes used 1.00 CPUs on average"}
	noisy := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := p.Write(noisy); err != nil {
		t.Fatal(err)
	}
	out, errs, _ = runKprofile("show", noisy)
	if !strings.Contains(out, "NOISY: 1 reason") || !strings.Contains(errs, "noisy machine (other processes used 1.00 CPUs") {
		t.Errorf("a noisy profile not said noisy:\n%s\n%s", out, errs)
	}
	out, _, code = runKprofile("show", "-o", "md", path)
	if code != 0 || !strings.Contains(out, "### Choices") || !strings.Contains(out, "| gemm.gemv") {
		t.Errorf("md: exit %d\n%s", code, out)
	}
	// without ceilings: a ceilings.json beside the profile, for its fingerprint, is used
	p, _ = profile.Read(path)
	raw := p.Ceilings
	p.Ceilings = nil
	p.Write(path)
	out, _, _ = runKprofile("show", path)
	if !strings.Contains(out, "% of roof not shown") {
		t.Errorf("no ceilings not said:\n%s", out)
	}
	os.WriteFile(filepath.Join(filepath.Dir(path), "ceilings.json"), raw, 0o644)
	out, _, _ = runKprofile("show", path)
	if !strings.Contains(out, "ceilings.json") || !strings.Contains(out, "fma_f32") {
		t.Errorf("ceilings.json beside the profile not used:\n%s", out)
	}
	if _, errs, code := runKprofile("show", filepath.Join(t.TempDir(), "nope.json")); code == 0 || errs == "" {
		t.Errorf("missing profile: exit %d %q", code, errs)
	}
}

func TestRoofFraction(t *testing.T) {
	c, err := roofline.ParseCeilings(testCeilings("x", 1, true))
	if err != nil {
		t.Fatal(err)
	}
	e := &profile.Entry{Class: kernel.ClassF32, Best: profile.Result{Threads: 2, Median: 1, FLOPs: 80e9, Bytes: 1e9}}
	// AI 80: compute-bound, f32 peak 160 at 2 threads; 80 GFLOP/s is 50%
	if got := roofFraction(c, e); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("f32: %v, want 0.5", got)
	}
	e.Class = kernel.ClassInt8Act // against the VNNI peak (600 at 2 threads)
	if got := roofFraction(c, e); math.Abs(got-80.0/600) > 1e-12 {
		t.Errorf("int8act: %v, want %v", got, 80.0/600)
	}
	e.Best.Bytes = 20e9 // AI 4: DRAM-bound at 24 GB/s × 4 = 96
	if got := roofFraction(c, e); math.Abs(got-80.0/96) > 1e-12 {
		t.Errorf("memory-bound: %v, want %v", got, 80.0/96)
	}
	noVNNI, _ := roofline.ParseCeilings(testCeilings("x", 1, false))
	e.Best.Bytes = 1e9 // int8act without VNNI: the f32 peak
	if got := roofFraction(noVNNI, e); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("int8act without VNNI: %v, want 0.5", got)
	}
	// warm, and the bytes fit the L2 (2 MiB at 2 threads): held to the L2
	// plateau (200 GB/s × AI 4 = 800 > the f32 peak 160), not DRAM
	for i := range c.Sweeps {
		for j := range c.Sweeps[i].Plateaus {
			if c.Sweeps[i].Plateaus[j].Level == "L2" {
				c.Sweeps[i].Plateaus[j].CacheBytes = 2 << 20
			}
		}
	}
	e.Class, e.Best = kernel.ClassF32, profile.Result{Threads: 2, Median: 1e-3, FLOPs: 4e6, Bytes: 1e6} // 4 GFLOP/s
	if got := roofFraction(c, e); math.Abs(got-4.0/160) > 1e-12 {
		t.Errorf("warm in L2: %v, want %v", got, 4.0/160)
	}
	e.Mem = "dram" // cold: DRAM, 24 GB/s × 4 = 96
	if got := roofFraction(c, e); math.Abs(got-4.0/96) > 1e-12 {
		t.Errorf("cold: %v, want %v", got, 4.0/96)
	}
	if !math.IsNaN(roofFraction(nil, e)) {
		t.Error("no ceilings: want NaN")
	}
	if got := reports.RoofCellOrDash(c, e); got != "4% DRAM" {
		t.Errorf("cell %q, want 4%% DRAM", got)
	}
	// a figure past 105% of its roof is not claimed as a percentage
	e.Best.Median = 1e-5 // 400 GFLOP/s against 96
	if got := reports.RoofCellOrDash(c, e); !strings.HasPrefix(got, "above roof (417% of DRAM") {
		t.Errorf("cell %q, want above roof", got)
	}
	e.Best.Median = 4e6 / (1.04 * 96e9) // 104%: still a percentage
	if got := reports.RoofCellOrDash(c, e); got != "104% DRAM" {
		t.Errorf("cell %q, want 104%% DRAM", got)
	}
	// a state read and written once: its footprint, not its traffic, must
	// fit the level (2 MiB of traffic, 1 MiB held: L2 at 2 threads)
	e.Mem, e.Best = "", profile.Result{Threads: 2, Median: 1e-3, FLOPs: 4e6, Bytes: 3 << 20, Footprint: 3 << 19}
	if _, lv := reports.Roof(c, e); lv != "compute" && lv != "L2" {
		t.Errorf("footprint 1.5 MiB held to %s, want L2 (or compute)", lv)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	a := genProfile(t, filepath.Join(dir, "a"), "test-a-0001", "", 1, nil)
	// B: half as fast, masked, and without the MLA entries
	b := genProfile(t, filepath.Join(dir, "b"), "test-b-0002", "max-isa=avx2", 0.5, func(e *profile.Entry) bool { return strings.HasPrefix(e.Op, "mla.") })
	// B's end-to-end check lost: compare and show say so
	pb, err := profile.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	pb.EndToEnd = &profile.EndToEnd{Model: "synthetic", Rounds: 2, Rows: []profile.EndToEndRow{{Test: "tg16", Threads: 1, With: 9, Without: 10, Ratios: []float64{0.9, 0.9}}}}
	pb.EndToEnd.Judge()
	if err := pb.Write(b); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := runKprofile("show", b); code != 0 || !strings.Contains(out, "End to end") || !strings.Contains(out, "0.900 (0.900–0.900)") || !strings.Contains(out, "end to end 0.90× (0.90–0.90×) over 1 rows, 2 rounds: loss") {
		t.Errorf("show: exit %d %s\n%s", code, errs, out)
	}
	html := filepath.Join(dir, "compare.html")
	out, errs, code := runKprofile("compare", "-o", "md", "--html", html, a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"- A = " + a, "[max-isa=avx2]", "B / A", "A chosen", "A % roof", "0.50×", "geomean (", "wrote " + html, "end to end 0.90×"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	// MLA rows are A's only: no figure, no ratio; the geomean ratio is exactly 0.5
	var geo string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "| mla.decode") && !strings.Contains(line, "| — ") {
			t.Errorf("mla row without a missing cell: %s", line)
		}
		if strings.Contains(line, "geomean") {
			geo = line
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(geo), "0.50× |") {
		t.Errorf("geomean row %q, want a 0.50× ratio", geo)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if n := strings.Count(s, "<svg"); n < 3 {
		t.Errorf("%d inline SVGs, want the roofline and per-op bar charts", n)
	}
	for _, bad := range []string{"<script", "src=", "<link"} {
		if strings.Contains(s, bad) {
			t.Errorf("report holds %q: not self-contained", bad)
		}
	}
	if !strings.Contains(s, "Rooflines") || !strings.Contains(s, "gemm.gemv q4") {
		t.Error("report lacks the roofline or the gemv bar chart")
	}

	// text output, three machines
	out, _, code = runKprofile("compare", a, b, a)
	if code != 0 || !strings.Contains(out, "C / A") {
		t.Errorf("three machines: exit %d\n%s", code, out)
	}
	t.Run("chromium", func(t *testing.T) {
		bin := chromiumtest.Find(t)
		chromiumtest.Check(t, bin, html, "compare")
	})
}

func TestExport(t *testing.T) {
	dir := t.TempDir()
	src := genProfile(t, dir, "", "", 1, nil)
	full, warns := profile.Load(src)
	if full == nil || len(warns) > 0 {
		t.Fatalf("generated profile does not load: %v", warns)
	}
	ws := tuner.Workloads(arch.Kimi48B(), tuner.FullClasses, false)
	for _, n := range []int{1, 2, 3} {
		out := filepath.Join(dir, "deploy.json")
		if _, errs, code := runKprofile("export", src, "--threads", strconvI(n), "-o", out); code != 0 {
			t.Fatalf("threads %d: exit %d: %s", n, code, errs)
		}
		x, warns := profile.Load(out)
		if x == nil || len(warns) > 0 {
			t.Fatalf("threads %d: export does not load: %v", n, warns)
		}
		want := min(n, 2)
		for _, e := range x.Entries {
			if e.Threads != want {
				t.Errorf("threads %d: kept an entry at budget %d, want %d", n, e.Threads, want)
			}
		}
		if len(x.Entries) >= len(full.Entries) || len(x.Entries) == 0 {
			t.Errorf("threads %d: %d of %d entries kept", n, len(x.Entries), len(full.Entries))
		}
		// the engine's choices at n threads are the same
		for _, w := range ws {
			for _, classes := range [][]kernel.Class{kernel.DefaultClasses, {kernel.ClassF32}} {
				a, okA := full.Choose(w.Op, w.DType, w.Shape, n, classes)
				b, okB := x.Choose(w.Op, w.DType, w.Shape, n, classes)
				if okA != okB || (okA && (a.Variant != b.Variant || a.Config.Threads != b.Config.Threads || a.Config.Params.String() != b.Config.Params.String())) {
					t.Errorf("threads %d %s %s %s %v: full chose %v, export %v", n, w.Op, w.DType, w.Shape, classes, desc(a, okA), desc(b, okB))
				}
			}
		}
	}
	// stdout, and the model's ops only: the same schema
	out, _, code := runKprofile("export", src, "--threads", "2")
	var p profile.Profile
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Schema != profile.SchemaVersion || p.Fingerprint != cpu.Fingerprint() || len(p.Ceilings) == 0 {
		t.Errorf("stdout export: exit %d, %.200s", code, out)
	}
	// a model without MLA layers drops the MLA entries
	cfg := arch.Kimi48B()
	noMLA := cfg.Shapes()
	if noMLA.NumMLALayers == 0 {
		t.Skip("no MLA layers in the built-in config")
	}
	pr, _ := profile.Read(src)
	x, err := Export(pr, withoutMLA(t, cfg), "test", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range x.Entries {
		if strings.HasPrefix(e.Op, "mla.") {
			t.Fatalf("model without MLA: kept %s", e.Op)
		}
	}
}

func desc(c kernel.Choice, ok bool) string {
	if !ok {
		return "none"
	}
	return c.Variant.ID() + " " + c.Config.Params.String() + " t=" + strconvI(c.Config.Threads)
}

func strconvI(n int) string { b, _ := json.Marshal(n); return string(b) }

// withoutMLA turns every layer of cfg into a KDA layer.
func withoutMLA(t *testing.T, cfg *arch.Config) *arch.Config {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	la, ok := m["linear_attn_config"].(map[string]any)
	if !ok {
		t.Skip("config has no linear_attn_config")
	}
	var all []int
	for i := 1; i <= cfg.NumHiddenLayers; i++ {
		all = append(all, i)
	}
	la["kda_layers"] = all
	la["full_attn_layers"] = []int{}
	b, _ = json.Marshal(m)
	c, err := arch.Parse(b, "no-mla")
	if err != nil {
		t.Skipf("cannot build a config without MLA layers: %v", err)
	}
	if c.Shapes().NumMLALayers != 0 {
		t.Skip("config still has MLA layers")
	}
	return c
}

func TestBench(t *testing.T) {
	dir := t.TempDir()
	src := genProfile(t, dir, "", "", 1, nil)
	out := filepath.Join(dir, "bench.txt")
	_, errs, code := runKprofile("bench", src, "--ops", "norm", "--count", "4", "--benchtime", "2ms", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	bf, err := reports.ReadBenchFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(bf.Warnings) > 0 {
		t.Errorf("benchfmt warnings: %v", bf.Warnings)
	}
	names := bf.Benchmarks()
	if len(names) == 0 {
		t.Fatal("no benchmarks")
	}
	re := regexp.MustCompile(`^Norm/op=rmsnorm/dtype=f32/variant=[a-z0-9_]+/m=\d+/n=2304/threads=\d+(-\d+)?$`)
	for _, n := range names {
		if !re.MatchString(n) {
			t.Errorf("benchmark name %q does not follow the naming scheme", n)
		}
		for _, unit := range []string{"sec/op", "GFLOP/s", "GB/s"} {
			if v := bf.Values(n, unit); len(v) != 4 {
				t.Errorf("%s: %d %s values, want 4 (one per round)", n, len(v), unit)
			}
		}
	}
	if reports.Better("GFLOP/s", bf.Units) != 1 {
		t.Error("GFLOP/s direction not declared")
	}
	b, _ := os.ReadFile(out)
	for _, want := range []string{"goos: ", "goarch: ", "cpu: ", "fingerprint: " + cpu.Fingerprint(), "ktune-version: ", "go-version: ", "profile: " + src} {
		if !strings.Contains(string(b), "\n"+want) && !strings.HasPrefix(string(b), want) {
			t.Errorf("no %q configuration line:\n%s", want, b)
		}
	}
	// interleaved: rounds alternate the benchmarks
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Benchmark") {
			order = append(order, strings.Fields(line)[0])
		}
	}
	if len(names) > 1 && order[0] == order[1] {
		t.Errorf("not interleaved: %v", order)
	}
	// kprofile regress reads it
	if o, e, code := runKprofile("regress", out, out); code != 0 {
		t.Errorf("regress of a file with itself: exit %d\n%s%s", code, o, e)
	}
	// a foreign profile: its shapes with the defaults, and a warning
	foreign := genProfile(t, t.TempDir(), "other-machine", "", 1, nil)
	o, e, code := runKprofile("bench", foreign, "--ops", "norm.rmsnorm", "--benchtime", "1ms")
	if code != 0 || !strings.Contains(e, "other-machine") || !strings.Contains(o, "choices: defaults") {
		t.Errorf("foreign profile: exit %d\n%s%s", code, o, e)
	}
	if _, e, code := runKprofile("bench", src, "--ops", "nosuch"); code == 0 || !strings.Contains(e, "nosuch") {
		t.Errorf("unknown op: exit %d %s", code, e)
	}
}
