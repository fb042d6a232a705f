// Package atomicfile writes files atomically: to a temporary file in the
// target's folder, synced, then renamed over the target, so a reader (or a
// run interrupted at any moment) sees either the old file or the new one.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates path's folder if needed and writes path through write.
func Write(path string, write func(w io.Writer) error) error {
	return WriteFile(path, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// WriteFile is Write for writers that need the file itself (to seek, or to
// write a header last with WriteAt): write gets the temporary file, which
// is then synced and renamed over path.
func WriteFile(path string, write func(f *os.File) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create temporary file: %v", path, err)
	}
	fail := func(what string, err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %s: %v", path, what, err)
	}
	if err := write(tmp); err != nil {
		return fail("cannot write", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail("cannot set permissions", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("cannot sync", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: cannot close temporary file: %v", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: cannot rename into place: %v", path, err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error { _, err := w.Write(data); return err })
}
