// Package clitest runs CLI probes: a command line against a generated
// (usually bad) input, with the exit code and the one-line error it must
// give, checking that nothing hangs, no input changes and no output or
// temporary file is left behind.
package clitest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// MainFunc is a program's entry point: its arguments, stdout and stderr in,
// its exit code out (krun.Main, ktune.Main, kprofile.Main).
type MainFunc func(args []string, stdout, stderr io.Writer) int

// Probe is one command line and what it must do.
type Probe struct {
	Name string
	// Setup writes the probe's inputs into dir (a fresh temporary folder,
	// also the working directory's stand-in: use it in Args as "{dir}").
	Setup func(t testing.TB, dir string)
	// Args is the command line; every "{dir}" is replaced by the folder.
	Args []string
	// Code is the exit code wanted (0 ok, 1 a problem found, 2 a usage or
	// input error).
	Code int
	// Err must appear in stderr (case-sensitive); empty checks nothing.
	// For Code 2 stderr must also be one line.
	Err string
	// Creates lists the files (relative to dir) the run may create or
	// change; everything else in dir must be left byte-identical, and
	// nothing else may appear (no temporary files).
	Creates []string
	// Timeout bounds the run (default 20 s): a probe that takes longer
	// fails as a hang.
	Timeout time.Duration
	// Check, when set, runs last with the outputs.
	Check func(t testing.TB, dir, stdout, stderr string)
}

// Run runs every probe as a subtest of t.
func Run(t *testing.T, main MainFunc, probes []Probe) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range probes {
		if seen[p.Name] {
			t.Fatalf("probe name %q used twice", p.Name)
		}
		seen[p.Name] = true
		t.Run(p.Name, func(t *testing.T) { RunOne(t, main, p) })
	}
}

// RunOne runs one probe.
func RunOne(t testing.TB, main MainFunc, p Probe) {
	t.Helper()
	dir := t.TempDir()
	if p.Setup != nil {
		p.Setup(t, dir)
	}
	before := Snapshot(t, dir)
	args := make([]string, len(p.Args))
	for i, a := range p.Args {
		args[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- main(args, &stdout, &stderr) }()
	var code int
	select {
	case code = <-done:
	case <-time.After(timeout):
		t.Fatalf("%v: no answer within %v (hang)", args, timeout)
	}
	errText := stderr.String()
	if code != p.Code {
		t.Errorf("%v: exit code %d, want %d\nstderr: %s", args, code, p.Code, errText)
	}
	if p.Err != "" && !strings.Contains(errText, p.Err) {
		t.Errorf("%v: stderr lacks %q:\n%s", args, p.Err, errText)
	}
	if p.Code == 2 {
		if lines := strings.Split(strings.TrimRight(errText, "\n"), "\n"); len(lines) != 1 || lines[0] == "" {
			t.Errorf("%v: want one error line, got %d:\n%s", args, len(lines), errText)
		}
	}
	after := Snapshot(t, dir)
	allowed := map[string]bool{}
	for _, c := range p.Creates {
		allowed[filepath.ToSlash(c)] = true
	}
	for _, d := range Diff(before, after) {
		if !allowed[d.Path] {
			t.Errorf("%v: %s %s", args, d.Path, d.What)
		}
	}
	if p.Check != nil {
		p.Check(t, dir, stdout.String(), errText)
	}
}

// Snapshot maps every file and folder under dir (relative, slash
// separated, hidden ones included) to its SHA-256 ("dir" for folders).
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			m[rel] = "dir"
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			m[rel] = "mode " + d.Type().String() // a named pipe: reading it would wait
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			// unreadable on purpose (a probe's chmod 000 input): its mode stands in
			info, ierr := d.Info()
			if ierr != nil {
				return ierr
			}
			m[rel] = "mode " + info.Mode().String()
			return nil
		}
		h := sha256.Sum256(b)
		m[rel] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return m
}

// Change is one difference between two snapshots.
type Change struct{ Path, What string }

// Diff lists what was created, changed or removed between two snapshots,
// sorted by path.
func Diff(before, after map[string]string) []Change {
	var out []Change
	for p, h := range after {
		switch b, ok := before[p]; {
		case !ok:
			out = append(out, Change{p, "created"})
		case b != h:
			out = append(out, Change{p, "changed"})
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, Change{p, "removed"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// ExitCodesDocumented checks that root's help and every command's below
// it state the exit codes (the paragraph each program appends to Long).
func ExitCodesDocumented(t testing.TB, root *cobra.Command) {
	t.Helper()
	for _, c := range append(root.Commands(), root) {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !strings.Contains(c.Long, "Exit status: 0") || !strings.Contains(c.Long, "2 a usage error") {
			t.Errorf("%s %s: help does not document the exit codes", root.Name(), c.Name())
		}
	}
}

// WriteFile writes a probe input under dir, making its folders.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
