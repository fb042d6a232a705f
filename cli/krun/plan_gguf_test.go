package krun

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/model"
)

// goldenGGUFFiles are every GGUF file of the golden folder (gguf/ and
// gguf-community/).
func goldenGGUFFiles(t testing.TB) []string {
	t.Helper()
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, sub := range []string{"gguf", "gguf-community"} {
		p, _ := filepath.Glob(filepath.Join(dir, sub, "*.gguf"))
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		t.Skipf("no GGUF files in %s", dir)
	}
	return paths
}

// TestPlanGGUFFlags: --gguf and --disk-read reach the options, and a GGUF
// MODEL (by its name here: runF runs nothing) plans GGUF types unless
// --gguf=false.
func TestPlanGGUFFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		gguf bool
	}{
		{[]string{"--kimi48b", "--gguf", "--fit", "16G", "--disk-read", "2G"}, true},
		{[]string{"--kimi48b", "--fit", "16G"}, false},
		{[]string{"x.gguf", "--fit", "16G"}, true},
		{[]string{"x.GGUF"}, true},
		{[]string{"x.gguf", "--gguf=false", "--fit", "16G"}, false},
		{[]string{"./ckpt", "--gguf"}, true},
	} {
		var got *PlanOptions
		cmd := NewCmdPlan(&cli.Factory{}, func(o *PlanOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got.GGUF != c.gguf || c.args[0] == "--kimi48b" && c.gguf && got.DiskRead != "2G" {
			t.Errorf("%v: options %+v", c.args, got)
		}
	}
}

// TestPlanGGUFGolden: each golden GGUF file is reported as itself (its
// file type, "this file" in the table), runs from RAM in 1 GiB, and its
// size in the table is the file's.
func TestPlanGGUFGolden(t *testing.T) {
	for _, p := range goldenGGUFFiles(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := gguf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			id, err := f.Metadata.Uint("general.file_type")
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			name := model.GGUFFileTypeName(uint32(id))
			out, _, err := run(t, "plan", p, "--fit", "1G")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				fmt.Sprintf("GGUF %s (general.file_type %d), %s", name, id, cli.HumanBytes(st.Size())),
				"│ " + name + " (this file) ", "from RAM", "RAM ★", "a decoded token reads",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in\n%s", want, out)
				}
			}
		})
	}
}

// TestPlanGGUFPaged: on the tiny Q4_K_M file, a budget that holds its
// f32 copies and states but half its hot matrices (the smallest type's:
// none fits) reports every type paged, the file with part of its hot
// matrices on disk, and still recommends the smallest paged; one that
// holds all but a tenth of the experts reports the file paged with the
// share of experts in RAM and its bytes from disk per token.
func TestPlanGGUFPaged(t *testing.T) {
	var q string
	for _, p := range goldenGGUFFiles(t) {
		if strings.HasSuffix(p, "-Q4_K_M.gguf") {
			q = p
		}
	}
	if q == "" {
		t.Skip("no Q4_K_M golden file")
	}
	l, err := model.OpenGGUFLayout(q)
	if err != nil {
		t.Fatal(err)
	}
	all, err := model.GGUFTypeLayouts(l.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	opt := model.FitOptions{Reserve: -1, Context: 64}
	f, _ := l.Fit(1<<30, opt)
	states := f.KDAState + f.MLACache
	minHot := l.Hot
	for _, x := range all {
		minHot = min(minHot, x.Hot)
	}
	args := func(b int64) []string {
		return []string{"plan", q, "--fit", fmt.Sprint(b), "--reserve", "0", "--ctx", "64", "--disk-read", "1G"}
	}
	b := l.Heap + states + minHot/2
	out, _, err := run(t, args(b)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"paged", "of the hot matrices, no experts", "no type runs from RAM", "paged, hot on disk", "ms (≤ "} {
		if !strings.Contains(out, want) {
			t.Errorf("budget %d: no %q in\n%s", b, want, out)
		}
	}
	if strings.Contains(out, "RAM ★") {
		t.Errorf("budget %d: a type runs from RAM:\n%s", b, out)
	}
	b = l.Heap + states + l.Hot + l.Experts*9/10
	out, _, err = run(t, args(b)...)
	if err != nil {
		t.Fatal(err)
	}
	f, _ = l.Fit(b, opt)
	if f.Resident || !f.HotFits || f.ExpertShare < 0.85 || f.ExpertShare > 0.95 {
		t.Fatalf("fit %+v", f)
	}
	rec := out[strings.Index(out, "recommended:"):] // the file's paged run in its line
	for _, c := range []struct{ in, want string }{
		{out, fmt.Sprintf("hot matrices + %.0f%% of the experts", 100*f.ExpertShare)},
		{out, "≈ " + cli.HumanBytes(f.DiskPerToken)},
		{rec, "Q4_K_M (this file)"},
		{rec, fmt.Sprintf("runs paged with %.0f%% of its experts in RAM, ≈ %s per token from disk", 100*f.ExpertShare, cli.HumanBytes(f.DiskPerToken))},
	} {
		if !strings.Contains(c.in, c.want) {
			t.Errorf("budget %d: no %q in\n%s", b, c.want, out)
		}
	}
}

// TestPlanGGUFKimi48B: the built-in 48B config's table (every file type,
// text and md), one recommendation line per budget, and what each says:
// at 16 GiB nothing from RAM but the smallest paged, above it a type from
// RAM, never a worse one for more memory.
func TestPlanGGUFKimi48B(t *testing.T) {
	out, _, err := run(t, "plan", "--kimi48b", "--gguf", "--fit", "16G,24G,32G")
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range model.GGUFFileTypes {
		if !strings.Contains(out, "│ "+ft.Name+" ") {
			t.Errorf("no %s row in\n%s", ft.Name, out)
		}
	}
	if strings.Contains(out, "this file") {
		t.Errorf("a file without a file:\n%s", out)
	}
	ls, err := model.GGUFTypeLayouts(arch.Kimi48B())
	if err != nil {
		t.Fatal(err)
	}
	order := model.GGUFQualityOrder(ls)
	rank := map[string]int{}
	for r, i := range order {
		rank[model.GGUFFileTypes[i].Name] = r
	}
	last := len(order)
	for _, b := range []string{"16.0 GiB", "24.0 GiB", "32.0 GiB"} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  "+b+": ") {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("no recommendation for %s in\n%s", b, out)
		}
		if strings.Contains(line, "no type runs from RAM") {
			if !strings.Contains(line, "runs paged with") {
				t.Errorf("%s: %q", b, line)
			}
			continue
		}
		name := strings.Fields(strings.TrimPrefix(line, "  "+b+": "))[0]
		r, ok := rank[name]
		if !ok || r > last || !strings.Contains(line, "from RAM") {
			t.Errorf("%s: %q (rank %d, before %d)", b, line, r, last)
		}
		last = r
	}
	md, _, err := run(t, "plan", "--kimi48b", "--gguf", "--fit", "24G", "-o", "md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "| Q4_K_M ") || !strings.Contains(md, "|:--") {
		t.Errorf("md:\n%s", md)
	}
	// no budget: the table alone
	out, _, err = run(t, "plan", "--kimi48b", "--gguf")
	if err != nil || !strings.Contains(out, "│ Q2_K ") || strings.Contains(out, "recommended") {
		t.Errorf("no --fit: %v\n%s", err, out)
	}
}

// TestPlanGGUFProbes: bad inputs to plan --gguf give one line and exit 2;
// a GGUF file with --gguf=false plans krun's formats from its config; a
// checkpoint folder with --gguf, the table of its config.
func TestPlanGGUFProbes(t *testing.T) {
	paths := goldenGGUFFiles(t)
	q := paths[0]
	for _, p := range paths {
		if strings.HasSuffix(p, "-Q4_K_M.gguf") {
			q = p
		}
	}
	copyQ := func(t testing.TB, dir string) {
		b, err := os.ReadFile(q)
		if err != nil {
			t.Fatal(err)
		}
		clitest.WriteFile(t, dir, "m.gguf", string(b))
	}
	foreign := func(t testing.TB, dir string) {
		var b bytes.Buffer
		meta := []gguf.KV{{Key: "general.architecture", Value: gguf.MustValue("llama")}, {Key: "general.file_type", Value: gguf.MustValue(uint32(15))}}
		if err := gguf.Write(&b, meta, []gguf.WriteTensor{{Name: "a", Dims: []uint64{32, 1}, Type: gguf.TypeF32, Data: make([]byte, 128)}}); err != nil {
			t.Fatal(err)
		}
		clitest.WriteFile(t, dir, "m.gguf", b.String())
	}
	tiny := tinyDir(t)
	probes := []clitest.Probe{
		{Name: "gguf plan", Setup: copyQ, Args: []string{"plan", "{dir}/m.gguf", "--fit", "1G", "-o", "md"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "m.gguf: GGUF Q4_K_M") || !strings.Contains(stdout, "| Q4_K_M (this file)") {
					t.Errorf("stdout %q", stdout)
				}
			}},
		{Name: "gguf text named gguf", Setup: func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "m.gguf", "hello world") },
			Args: []string{"plan", "{dir}/m.gguf", "--fit", "1G"}, Code: 2, Err: "not a GGUF file"},
		{Name: "gguf missing", Args: []string{"plan", "{dir}/nope.gguf", "--fit", "1G"}, Code: 2, Err: "nope.gguf"},
		{Name: "gguf foreign architecture", Setup: foreign, Args: []string{"plan", "{dir}/m.gguf", "--fit", "1G"}, Code: 2, Err: "not a Kimi Linear file"},
		{Name: "gguf bad size", Setup: copyQ, Args: []string{"plan", "{dir}/m.gguf", "--fit", "16G,lots"}, Code: 2, Err: "--fit"},
		{Name: "gguf bad unit", Args: []string{"plan", "--kimi48b", "--gguf", "--fit", "24X"}, Code: 2, Err: "unknown unit"},
		{Name: "gguf zero size", Args: []string{"plan", "--kimi48b", "--gguf", "--fit", "0"}, Code: 2, Err: "want a size above 0"},
		{Name: "gguf bad disk read", Args: []string{"plan", "--kimi48b", "--gguf", "--fit", "16G", "--disk-read", "fast"}, Code: 2, Err: "--disk-read"},
		{Name: "gguf zero disk read", Args: []string{"plan", "--kimi48b", "--gguf", "--fit", "16G", "--disk-read", "0"}, Code: 2, Err: "want a rate above 0"},
		{Name: "gguf disk read without gguf", Args: []string{"plan", "--kimi48b", "--fit", "24G", "--disk-read", "1G"}, Code: 2, Err: "--disk-read is for --gguf"},
		{Name: "gguf preset", Setup: copyQ, Args: []string{"plan", "{dir}/m.gguf", "--preset", "q4"}, Code: 2, Err: "not with --gguf"},
		{Name: "gguf formats", Args: []string{"plan", "--kimi48b", "--gguf", "--fit", "24G", "--formats", "q8"}, Code: 2, Err: "not with --gguf"},
		{Name: "gguf bad cache", Args: []string{"plan", "--kimi48b", "--gguf", "--fit", "24G", "--cache-dtype", "q4"}, Code: 2, Err: "--cache-dtype"},
		{Name: "gguf bad output", Args: []string{"plan", "--kimi48b", "--gguf", "-o", "csv"}, Code: 2, Err: "-o"},
		{Name: "gguf split part missing", Setup: func(t testing.TB, dir string) {
			var b bytes.Buffer
			meta := []gguf.KV{{Key: "general.architecture", Value: gguf.MustValue("kimi-linear")},
				{Key: gguf.KeySplitNo, Value: gguf.MustValue(uint16(0))}, {Key: gguf.KeySplitCount, Value: gguf.MustValue(uint16(2))},
				{Key: gguf.KeySplitTensorsCount, Value: gguf.MustValue(int32(2))}}
			if err := gguf.Write(&b, meta, []gguf.WriteTensor{{Name: "a", Dims: []uint64{32, 1}, Type: gguf.TypeF32, Data: make([]byte, 128)}}); err != nil {
				t.Fatal(err)
			}
			clitest.WriteFile(t, dir, "m-00001-of-00002.gguf", b.String())
		}, Args: []string{"plan", "{dir}/m-00001-of-00002.gguf", "--fit", "1G"}, Code: 2, Err: "is missing"},
		{Name: "gguf off", Setup: copyQ, Args: []string{"plan", "{dir}/m.gguf", "--gguf=false", "--fit", "4M"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "m.gguf, fit 4.0 MiB") || strings.Contains(stdout, "GGUF file types") {
					t.Errorf("stdout %q", stdout)
				}
			}},
		{Name: "gguf checkpoint", Setup: func(t testing.TB, dir string) { copyTiny(t, tiny, dir, "m") }, Args: []string{"plan", "{dir}/m", "--gguf", "--fit", "1G"},
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if !strings.Contains(stdout, "GGUF file types of m") || !strings.Contains(stdout, "RAM ★") || strings.Contains(stdout, "this file") {
					t.Errorf("stdout %q", stdout)
				}
			}},
	}
	clitest.Run(t, Main, probes)
}
