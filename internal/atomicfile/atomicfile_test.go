package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/testexec"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.json")
	if err := WriteBytes(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	// a failing writer leaves the old content and no temporary file behind
	err := Write(p, func(w io.Writer) error { w.Write([]byte("partial")); return errors.New("boom") })
	if err == nil {
		t.Fatal("want an error")
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Errorf("content %q after a failed write, want %q", b, "one")
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("%d entries in the folder, want 1 (temporary file left behind?)", len(ents))
	}
	if err := WriteBytes(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q, want %q", b, "two")
	}
}

// TestRemoveStale: a temporary file nobody holds (left by a killed run) is
// removed; one being written (locked) and files of other names are kept.
func TestRemoveStale(t *testing.T) {
	if !lockSupported {
		t.Skip("no advisory locks here")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "m.kt")
	for _, n := range []string{".m.kt.tmp-123", ".m.kt.tmp-x1", ".other.kt.tmp-5", "m.kt"} {
		os.WriteFile(filepath.Join(dir, n), []byte("old"), 0o644)
	}
	removed := 0
	err := WriteFile(out, func(f *os.File) error {
		// while this write holds its temporary file, a stale scan must spare it
		st, err := RemoveStale(out)
		removed = len(st)
		if len(st) != 1 || filepath.Base(st[0].Path) != ".m.kt.tmp-123" || st[0].Size != 3 {
			t.Errorf("removed %v, want .m.kt.tmp-123 (3 bytes) only", st)
		}
		_, err = f.Write([]byte("new"))
		return err
	})
	if err != nil || removed != 1 {
		t.Fatal(err, removed)
	}
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := ".m.kt.tmp-x1 .other.kt.tmp-5 m.kt"; strings.Join(names, " ") != want {
		t.Errorf("left %v, want %s", names, want)
	}
}

// TestSignalRemovesTemp: SIGTERM during a write removes the temporary file
// and the process exits 143 (in a child process).
func TestSignalRemovesTemp(t *testing.T) {
	if os.Getenv("ATOMICFILE_CHILD") != "" {
		stop := CleanupOnSignal(func(sig os.Signal, removed []string) {
			fmt.Println("removed", len(removed))
			os.Exit(SignalExitCode(sig))
		})
		defer stop()
		WriteFile(os.Getenv("ATOMICFILE_CHILD"), func(f *os.File) error {
			fmt.Println("ready")
			time.Sleep(time.Minute)
			return nil
		})
		os.Exit(0)
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	dir := t.TempDir()
	cmd := testexec.Self("-test.run=^TestSignalRemovesTemp$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD="+filepath.Join(dir, "out.bin"))
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if line, _ := r.ReadString('\n'); line != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(r)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Errorf("child exit %v, want status 143", err)
	}
	if !strings.Contains(string(rest), "removed 1") {
		t.Errorf("child output %q", rest)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left: %v", len(ents), ents[0].Name())
	}
}

// TestFree: a temporary folder has room (or the OS does not say), and so
// does a path under folders still to be made.
func TestFree(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "x.kt"), filepath.Join(dir, "a", "b", "x.kt")} {
		n, err := Free(p)
		if err != nil || n == 0 || n < -1 {
			t.Errorf("Free(%s) = %d, %v", p, n, err)
		}
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Free(filepath.Join(f, "x.kt")); err == nil {
		t.Errorf("Free under a file: no error")
	}
}
