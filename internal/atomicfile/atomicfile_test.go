package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
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
