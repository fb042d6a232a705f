package clitest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// recorder stands in for a test so a probe that must fail can be run:
// it records Errorf/Fatalf instead of failing the real test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	runtime.Goexit()
}

// failures runs one probe against main on a recorder and returns what it reported.
func failures(t *testing.T, main MainFunc, p Probe) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); RunOne(r, main, p) }()
	<-done
	return strings.Join(r.msgs, "\n")
}

func exitWith(code int, msg string) MainFunc {
	return func(args []string, _, stderr io.Writer) int {
		if msg != "" {
			fmt.Fprintln(stderr, msg)
		}
		return code
	}
}

func TestProbePasses(t *testing.T) {
	p := Probe{Name: "ok", Args: []string{"x"}, Code: 2, Err: "bad flag"}
	if got := failures(t, exitWith(2, "krun: bad flag --x"), p); got != "" {
		t.Fatalf("a correct run failed the probe: %s", got)
	}
}

// Each planted defect must fail the probe: a check that cannot fail is a defect.
func TestProbeCatchesDefects(t *testing.T) {
	input := func(t testing.TB, dir string) { WriteFile(t, dir, "in.txt", "data") }
	cases := []struct {
		name string
		main MainFunc
		p    Probe
		want string
	}{
		{"wrong code", exitWith(1, "bad"), Probe{Args: []string{"x"}, Code: 2, Err: "bad"}, "exit code 1, want 2"},
		{"missing text", exitWith(2, "something else"), Probe{Args: []string{"x"}, Code: 2, Err: "bad"}, "stderr lacks"},
		{"two lines", exitWith(2, "bad\nmore"), Probe{Args: []string{"x"}, Code: 2, Err: "bad"}, "want one error line"},
		{"silent", exitWith(2, ""), Probe{Args: []string{"x"}, Code: 2}, "want one error line"},
		{"temp file left", func(args []string, _, _ io.Writer) int {
			os.WriteFile(filepath.Join(args[0], ".out.tmp-1"), nil, 0o644)
			return 2
		}, Probe{Args: []string{"{dir}"}, Code: 2}, ".out.tmp-1 created"},
		{"input changed", func(args []string, _, _ io.Writer) int {
			os.WriteFile(filepath.Join(args[0], "in.txt"), []byte("other"), 0o644)
			return 0
		}, Probe{Setup: input, Args: []string{"{dir}"}}, "in.txt changed"},
		{"input removed", func(args []string, _, _ io.Writer) int {
			os.Remove(filepath.Join(args[0], "in.txt"))
			return 0
		}, Probe{Setup: input, Args: []string{"{dir}"}}, "in.txt removed"},
		{"hang", func(args []string, _, _ io.Writer) int {
			time.Sleep(time.Hour)
			return 0
		}, Probe{Args: []string{"x"}, Timeout: 50 * time.Millisecond}, "hang"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := failures(t, c.main, c.p)
			if !strings.Contains(got, c.want) {
				t.Fatalf("planted defect %q not caught: want %q in %q", c.name, c.want, got)
			}
		})
	}
	// an allowed output is not a failure
	p := Probe{Args: []string{"{dir}"}, Creates: []string{"out.txt"}}
	if got := failures(t, func(args []string, _, _ io.Writer) int {
		os.WriteFile(filepath.Join(args[0], "out.txt"), nil, 0o644)
		return 0
	}, p); got != "" {
		t.Fatalf("an allowed output failed the probe: %s", got)
	}
}

// A command whose help lacks the exit codes fails ExitCodesDocumented.
func TestExitCodesDocumentedCatches(t *testing.T) {
	const codes = "\nExit status: 0 success; 2 a usage error; 1 another failure."
	root := &cobra.Command{Use: "prog", Long: "a program" + codes}
	root.AddCommand(&cobra.Command{Use: "good", Long: "good" + codes, Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "bad", Long: "says nothing of exit codes", Run: func(*cobra.Command, []string) {}})
	r := &recorder{TB: t}
	ExitCodesDocumented(r, root)
	if len(r.msgs) != 1 || !strings.Contains(r.msgs[0], "prog bad") {
		t.Fatalf("want one failure naming prog bad, got %q", r.msgs)
	}
}
