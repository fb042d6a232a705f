// Package testexec re-runs the current test binary in a child process
// (for tests of process-wide state such as environment masks). Under an
// emulator the child must go through the emulator too: set KTUNE_TEST_EXEC
// to the same wrapper go test's -exec uses, e.g.
// "qemu-aarch64-static -cpu max".
package testexec

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Self returns a command running this test binary with args.
func Self(args ...string) *exec.Cmd {
	if wrap := strings.Fields(os.Getenv("KTUNE_TEST_EXEC")); len(wrap) > 0 {
		return exec.Command(wrap[0], append(append(wrap[1:], os.Args[0]), args...)...)
	}
	return exec.Command(os.Args[0], args...)
}

// Pinned returns a command running this test binary with args under
// `taskset -c cpu` (one CPU of the process's own mask); the test is skipped
// where taskset is missing.
func Pinned(t testing.TB, cpu int, args ...string) *exec.Cmd {
	t.Helper()
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset on this machine")
	}
	self := Self(args...)
	return exec.Command(taskset, append([]string{"-c", strconv.Itoa(cpu)}, self.Args...)...)
}
