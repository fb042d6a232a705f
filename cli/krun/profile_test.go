package krun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/internal/testexec"
)

// TestProfileReachesModel: the tuning profile named by --profile is what
// the loaded model's kernels follow (it travels in LoadOptions.Chooser, not
// through the process): with KTUNE_DEBUG=1 (read at start, so in a child
// process) generate's RMSNorm calls report the profile's choice; with
// --profile off, none does.
func TestProfileReachesModel(t *testing.T) {
	if args := os.Getenv("KTUNE_TEST_PROFILE_CHILD"); args != "" {
		_, stderr, err := run(t, append([]string{"generate", tinyDir(t), "--ids", "5,77,300", "-n", "2", "--ignore-eos", "-t", "1"}, strings.Fields(args)...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		return
	}
	cfg, err := arch.Load(filepath.Join(tinyDir(t), "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := profile.NewProfile("test", kernel.DefaultClasses)
	s := kernel.MakeShape([]string{"m", "n"}, 1, cfg.HiddenSize)
	p.Entries = []profile.Entry{{Op: "norm.rmsnorm", DType: kernel.F32, Class: kernel.ClassF32, Shape: s, Threads: 1,
		Best: profile.Result{Variant: "generic", Params: kernel.Values{}, Threads: 1, Median: 1e-6}}}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	child := func(args string) string {
		cmd := testexec.Self("-test.run=^TestProfileReachesModel$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "KTUNE_DEBUG=1", "KTUNE_TEST_PROFILE_CHILD="+args)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("krun generate %s: %v\n%s", args, err, out)
		}
		return string(out)
	}
	const mark = "chose generic for norm.rmsnorm"
	if out := child("--profile " + path); !strings.Contains(out, mark) || !strings.Contains(out, "(the profile's)") {
		t.Errorf("with --profile %s the model's norms did not follow it:\n%s", path, out)
	}
	if out := child("--profile off"); strings.Contains(out, "(the profile's)") {
		t.Errorf("with --profile off a choice came from a profile:\n%s", out)
	}
}
