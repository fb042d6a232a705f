package ktune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli/clitest"
)

// TestKtuneProbes runs ktune against bad inputs: each must be refused at
// once — before any measuring (a probe that started tuning would run past
// its timeout) — with exit 2 and one clear line, changing no input and
// leaving no file.
func TestKtuneProbes(t *testing.T) {
	file := func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "f", "x") }
	config := func(content string) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "cfg/config.json", content) }
	}
	capture := func(probe string) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) { clitest.WriteFile(t, dir, "cap/probe.json", probe) }
	}
	out := []string{"--out", "{dir}/out"}
	tune := func(args ...string) []string { return append(append([]string{}, args...), out...) }
	probes := []clitest.Probe{
		// ---- the main job: every flag and --out before measuring (row 15)
		{Name: "tune/out-is-a-file", Setup: file, Args: []string{"--quick", "--out", "{dir}/f"}, Code: 2, Err: "/f: not a directory"},
		{Name: "tune/out-under-a-file", Setup: file, Args: []string{"--quick", "--out", "{dir}/f/sub"}, Code: 2, Err: "not a directory"},
		{Name: "tune/budget-negative", Args: tune("--budget", "-1s"), Code: 2, Err: "--budget -1s"},
		{Name: "tune/budget-not-a-duration", Args: tune("--budget", "abc"), Code: 2, Err: `invalid argument "abc" for "--budget"`},
		{Name: "tune/only-unknown-op", Args: tune("--only", "nonsense"), Code: 2, Err: `--only: unknown op or family "nonsense"`},
		{Name: "tune/list-workloads-only-unknown", Args: []string{"--list-workloads", "--only", "nonsense"}, Code: 2, Err: `--only: unknown op or family "nonsense"`},
		{Name: "tune/list-workloads-format", Args: []string{"--list-workloads", "-o", "xml"}, Code: 2, Err: "xml"},
		{Name: "tune/list-workloads", Args: []string{"--list-workloads", "--only", "moe,kda.prefill", "-o", "md"}, Code: 0,
			Check: func(t testing.TB, dir, stdout, stderr string) {
				// the timed shape and the smaller verification shape MoE declares
				for _, want := range []string{"prefill-512", "n=512/e=256/k=8/c=2304/i=1024", "n=64/e=32/k=8/c=2304/i=1024", "| kda.prefill |"} {
					if !strings.Contains(stdout, want) {
						t.Errorf("--list-workloads lacks %q:\n%s", want, stdout)
					}
				}
				if strings.Contains(stdout, "gemm.") {
					t.Errorf("--only moe,kda.prefill listed gemm workloads")
				}
			}},
		{Name: "tune/bad-format", Args: tune("-o", "xml"), Code: 2, Err: `unknown table format "xml"`},
		{Name: "tune/allow-unknown-class", Args: tune("--allow", "nonsense"), Code: 2, Err: "--allow"},
		{Name: "tune/threads-0", Args: tune("--threads", "0"), Code: 2, Err: `bad thread count "0"`},
		{Name: "tune/threads-not-a-number", Args: tune("--threads", "x"), Code: 2, Err: `bad thread count "x"`},
		{Name: "tune/threads-huge", Args: tune("--threads", "1,9223372036854775807"), Code: 2, Err: "usable CPUs"},
		{Name: "tune/threads-bad-range", Args: tune("--threads", "4-2"), Code: 2, Err: `bad thread count "4-2"`},
		{Name: "tune/quick-not-a-bool", Args: tune("--quick=maybe"), Code: 2, Err: `invalid argument "maybe" for "--quick"`},
		{Name: "tune/config-missing", Args: tune("--config", "{dir}/none.json"), Code: 2, Err: "--config: load Kimi Linear config"},
		{Name: "tune/config-not-json", Setup: config("{ nope"), Args: tune("--config", "{dir}/cfg/config.json"), Code: 2, Err: "config.json"},
		{Name: "tune/config-empty", Setup: config(""), Args: tune("--config", "{dir}/cfg"), Code: 2, Err: "empty file"},
		{Name: "tune/config-no-hidden-size", Setup: config(`{"model_type":"kimi_linear","vocab_size":512}`), Args: tune("--config", "{dir}/cfg"), Code: 2, Err: "hidden_size: missing, null or 0; must be a positive integer; "},
		{Name: "tune/extra-argument", Args: tune("extra"), Code: 2, Err: `unknown command "extra"`},
		{Name: "tune/unknown-flag", Args: tune("--frobnicate"), Code: 2, Err: "unknown flag: --frobnicate"},
		{Name: "tune/bad-max-isa", Args: tune("--max-isa", "garbage"), Code: 2, Err: "garbage"},
		{Name: "tune/bad-disable-isa", Args: tune("--disable-isa", "bogus_feature"), Code: 2, Err: "bogus_feature"},
		// ---- roofline
		{Name: "roofline/threads-0", Args: []string{"roofline", "--threads", "0", "--out", "{dir}/out"}, Code: 2, Err: `bad thread count "0"`},
		{Name: "roofline/bad-format", Args: []string{"roofline", "-o", "xml", "--out", "{dir}/out"}, Code: 2, Err: `unknown table format "xml"`},
		{Name: "roofline/out-is-a-file", Setup: file, Args: []string{"roofline", "--quick", "--out", "{dir}/f"}, Code: 2, Err: "not a directory"},
		{Name: "roofline/extra-argument", Args: []string{"roofline", "extra"}, Code: 2, Err: `unknown command "extra"`},
		// ---- detect, variants, version
		{Name: "detect/extra-argument", Args: []string{"detect", "extra"}, Code: 2, Err: `unknown command "extra"`},
		{Name: "detect/bad-format", Args: []string{"detect", "-o", "xml"}, Code: 2, Err: "xml"},
		{Name: "detect/capture-empty", Args: []string{"detect", "--capture="}, Code: 2, Err: "--capture: a folder is required"},
		{Name: "detect/capture-under-a-file", Setup: file, Args: []string{"detect", "--capture", "{dir}/f/cap"}, Code: 2, Err: "not a directory"},
		{Name: "detect/from-missing", Args: []string{"detect", "--from", "{dir}/none"}, Code: 2, Err: "no such file"},
		{Name: "detect/from-no-probe", Setup: func(t testing.TB, dir string) { os.Mkdir(filepath.Join(dir, "cap"), 0o755) },
			Args: []string{"detect", "--from", "{dir}/cap"}, Code: 2, Err: "no probe.json"},
		{Name: "detect/from-truncated-probe", Setup: capture("{"), Args: []string{"detect", "--from", "{dir}/cap"}, Code: 2, Err: "probe.json: unexpected EOF"},
		{Name: "detect/from-unknown-field", Setup: capture(`{"x":1}`), Args: []string{"detect", "--from", "{dir}/cap"}, Code: 2, Err: `unknown field "x"`},
		{Name: "variants/bad-format", Args: []string{"variants", "-o", "xml"}, Code: 2, Err: `unknown table format "xml"`},
		{Name: "variants/unknown-op", Args: []string{"variants", "--op", "gemm.nope"}, Code: 2, Err: `--op "gemm.nope": no such op`},
		{Name: "version/extra-argument", Args: []string{"version", "extra"}, Code: 2, Err: `unknown command "extra"`},
	}
	if os.Geteuid() > 0 { // root writes into a read-only folder
		probes = append(probes, clitest.Probe{Name: "tune/out-read-only",
			Setup: func(t testing.TB, dir string) {
				ro := filepath.Join(dir, "ro")
				os.Mkdir(ro, 0o555)
				t.Cleanup(func() { os.Chmod(ro, 0o755) })
			}, Args: []string{"--quick", "--out", "{dir}/ro/sub"}, Code: 2, Err: "permission denied"})
	}
	for i := range probes {
		probes[i].Timeout = 3 * time.Second // measuring the ceilings alone takes longer
	}
	clitest.Run(t, Main, probes)
}

// TestExitCodesDocumented: every ktune command's help states the exit codes.
func TestExitCodesDocumented(t *testing.T) {
	clitest.ExitCodesDocumented(t, NewCmdRoot(nil))
}

// TestDefaultOutChecked: with no --out, the default profile folder is
// checked writable (creating nothing) before measuring.
func TestDefaultOutChecked(t *testing.T) {
	dir := t.TempDir()
	if err := writable(filepath.Join(dir, "a", "b")); err != nil {
		t.Errorf("a folder to be made under a writable one: %v", err)
	}
	clitest.WriteFile(t, dir, "f", "x")
	if err := writable(filepath.Join(dir, "f", "b")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a folder under a file: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("writable created files: %d entries", len(ents))
	}
}
