//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTargets: what an output path names decides how it is written. A
// symbolic link stays and its target gets the new file; a named pipe
// gets the bytes streamed (and stays a pipe), or, with no reader, an error
// at once; a character device is streamed to; "-" is standard output; a
// folder, a socket and a dangling link are refused with a NotFileError
// and left as they were.
func TestTargets(t *testing.T) {
	dir := t.TempDir()

	// a link to a regular file: the target replaced, the link kept
	real := filepath.Join(dir, "real.bin")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.bin")
	if err := os.Symlink("real.bin", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q, want %q", b, "new")
	}

	// a named pipe with a reader: streamed
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	// with no reader: an error, at once
	done := make(chan error, 1)
	go func() { done <- WriteBytes(fifo, []byte("x")) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no reader") {
			t.Errorf("a pipe with no reader: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writing a pipe with no reader waits")
	}
	// a reader (opened read-write, so that it neither waits for a writer
	// nor sees the end before the write): the bytes come through
	rd, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	msg := "through the pipe"
	if err := WriteBytes(fifo, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(rd, buf); err != nil || string(buf) != msg {
		t.Errorf("the pipe's reader got %q, %v", buf, err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", st.Mode(), err)
	}

	// a character device streams (classified only: a broken writer must
	// not be able to replace /dev/null)
	if where, stream, err := Target(os.DevNull); err != nil || !stream || where != os.DevNull {
		t.Errorf("Target(%s) = %q, %v, %v; want a stream", os.DevNull, where, stream, err)
	}

	// "-": standard output
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = WriteBytes("-", []byte("to stdout"))
	os.Stdout = stdout
	w.Close()
	b, _ := io.ReadAll(r)
	if err != nil || string(b) != "to stdout" {
		t.Errorf(`WriteBytes("-"): %v, stdout got %q`, err, b)
	}

	// refused, unchanged
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("missing", dangling); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "folder")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sub, sock, dangling} {
		before, _ := os.Lstat(p)
		err := WriteBytes(p, []byte("x"))
		var nf *NotFileError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want a NotFileError naming it", p, err)
		}
		after, _ := os.Lstat(p)
		if before.Mode() != after.Mode() {
			t.Errorf("%s changed: %v → %v", p, before.Mode(), after.Mode())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("writing a dangling link created its target")
	}
}
