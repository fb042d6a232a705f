package tuner

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
)

// TestValidate covers the checks kprofile and the engine share: every bad
// entry is named once, by Validate on any machine and by profile.Load here.
func TestValidate(t *testing.T) {
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	for _, c := range []struct {
		name, want string
		edit       func(p *profile.Profile)
		whole      bool // Validate refuses the whole profile
		foreignOK  bool // a profile of another architecture passes
	}{
		{"ok", "", nil, false, true},
		{"schema-99", "profile schema 99", func(p *profile.Profile) { p.Schema = 99 }, true, false},
		{"variant", "stale variant", func(p *profile.Profile) { p.Entries[0].Best.Variant = "avx1024" }, false, true},
		{"param-value", "stale parameters", func(p *profile.Profile) { p.Entries[0].Best.Params["tile"] = 99 }, false, true},
		{"param-name", "stale parameters", func(p *profile.Profile) { p.Entries[0].Best.Params["mr"] = 4 }, false, true},
		{"threads-0", "thread budget 0", func(p *profile.Profile) { p.Entries[0].Threads = 0 }, false, false},
		{"threads-1e6", "thread budget 1000000", func(p *profile.Profile) { p.Entries[0].Threads = 1e6; p.Entries[0].Best.Threads = 1e6 }, false, false},
		{"chosen-threads", "chosen threads 4", func(p *profile.Profile) { p.Entries[0].Best.Threads = 4 }, false, false},
		{"median-nan", "best median NaN", func(p *profile.Profile) { p.Entries[0].Best.Median = math.NaN() }, false, false},
		{"median-0", "best median 0", func(p *profile.Profile) { p.Entries[0].Best.Median = 0 }, false, false},
		{"flops-inf", "best counts", func(p *profile.Profile) { p.Entries[0].Best.FLOPs = math.Inf(1) }, false, false},
		{"default-neg", "default median -1", func(p *profile.Profile) { p.Entries[0].Default = &profile.Result{Median: -1} }, false, false},
		{"op", "stale op", func(p *profile.Profile) { p.Entries[0].Op = "tunetest.gone" }, false, false},
		{"shape", "want keys n", func(p *profile.Profile) { p.Entries[0].Shape[0].Key = "m" }, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var path string
			p := profile.NewProfile("test", kernel.DefaultClasses)
			p.Entries = []profile.Entry{{Op: workOp, DType: kernel.F32, Class: kernel.ClassF32, Shape: kernel.MakeShape([]string{"n"}, 64), Threads: 1,
				Best: profile.Result{Variant: "good", Params: kernel.Values{"tile": 4, "rounds": 1}, Threads: 1, Median: 1e-6}}}
			if c.edit != nil {
				c.edit(p)
			}
			// JSON has no NaN or Inf: those reach Validate only in memory
			if b, err := json.Marshal(p); err == nil {
				path = filepath.Join(t.TempDir(), "p.json")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			whole, entries := p.Validate()
			got := ""
			switch {
			case whole != nil:
				got = whole.Error()
			case len(entries) == 1:
				got = entries[0].Error()
			case len(entries) > 1:
				t.Fatalf("%d errors for one bad entry: %v", len(entries), entries)
			}
			if (whole != nil) != c.whole || !strings.Contains(got, c.want) || (c.want == "") != (got == "") {
				t.Errorf("Validate: whole %v, entries %v; want %q (whole %v)", whole, entries, c.want, c.whole)
			}
			if !c.whole && c.want != "" && !strings.Contains(got, "entry tunetest.") {
				t.Errorf("%q does not name the entry", got)
			}

			// the engine: the same problem, as a warning naming the file
			switch lp, warns := profile.Load(path); {
			case path == "":
			case c.want == "":
				if lp == nil || len(warns) != 0 || len(lp.Entries) != 1 {
					t.Errorf("Load of a good profile: %v %q", lp, warns)
				}
			case len(warns) != 1 || !strings.Contains(warns[0], c.want) || !strings.Contains(warns[0], path):
				t.Errorf("Load warnings %q, want one naming %s and %q", warns, path, c.want)
			case lp != nil && len(lp.Entries) != 0:
				t.Errorf("Load kept the bad entry")
			}

			// another architecture's profile: its variants are not in this
			// build, so only the architecture-free checks apply
			p.CPU.Arch = other
			whole, entries = p.Validate()
			if ok := whole == nil && len(entries) == 0; ok != c.foreignOK {
				t.Errorf("%s profile: whole %v, entries %v; want ok=%v", other, whole, entries, c.foreignOK)
			}
		})
	}
}
