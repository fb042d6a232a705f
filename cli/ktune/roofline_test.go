package ktune

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/roofline"
)

func TestRooflineFlags(t *testing.T) {
	var got *RooflineOptions
	cmd := NewCmdRoofline(&cli.Factory{}, func(o *RooflineOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--quick", "--threads", "1,2", "--out", "/x", "--points=false", "-o", "md"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Quick || got.Threads != "1,2" || got.OutDir != "/x" || got.Points || got.Format != "md" {
		t.Errorf("options %+v", got)
	}
}

// TestRooflineRun runs the command end to end with the measurement made
// tiny through the options hook: the files are written, the JSON parses,
// the table has a line per ceiling and plateau.
func TestRooflineRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "out")
	var out, errb bytes.Buffer
	opts := &RooflineOptions{Factory: &cli.Factory{Out: &out, Err: &errb}, Quick: true, Threads: "1", OutDir: dir, Points: true, Format: "text"}
	opts.tune = func(mo *roofline.Options, po *roofline.PointOptions, specs *[]roofline.PointSpec) {
		mo.MaxWorkingSet, mo.MinTime, mo.Reps = 256<<10, time.Millisecond, 1
		po.MinTime, po.Reps, po.FlushBytes = time.Millisecond, 1, 1<<20
		*specs = []roofline.PointSpec{{Label: "KDA decode", Op: "kda.decode", DType: kernel.F32, Cold: true,
			Shape: kernel.MakeShape([]string{"b", "h", "dk", "dv"}, 1, 2, 16, 16)}}
	}
	if err := runRoofline(t.Context(), opts); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, name := range []string{"ceilings.json", "points.json", "roofline.png", "roofline.svg", "roofline-t1.png", "roofline-t1.svg", "bandwidth.png", "bandwidth.svg"} {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.Contains(out.String(), p) {
			t.Errorf("path %s not printed", p)
		}
	}
	c, err := roofline.Load(filepath.Join(dir, "ceilings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Threads, []int{1}) || len(c.Compute) == 0 || len(c.Sweeps) != len(roofline.Kinds) {
		t.Errorf("ceilings: threads %v, %d compute, %d sweeps", c.Threads, len(c.Compute), len(c.Sweeps))
	}
	var pts []roofline.Point
	b, _ := os.ReadFile(filepath.Join(dir, "points.json"))
	if err := json.Unmarshal(b, &pts); err != nil || len(pts) != 1 || pts[0].Op != "kda.decode" || pts[0].AI() <= 0 {
		t.Errorf("points: %v %+v", err, pts)
	}
	for _, want := range []string{"go_f64", "read DRAM", "triad L1", "KDA decode", "% of roof"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "ceilings: ") {
		t.Errorf("no progress lines on a non-terminal:\n%s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".ceilings.json.tmp")); err == nil {
		t.Error("temporary file left")
	}
	opts.Threads = "1,100000" // a list naming more than the usable CPUs
	if err := runRoofline(t.Context(), opts); cli.ExitCode(err) != 2 {
		t.Errorf("too many threads: %v, want a usage error", err)
	}
}
