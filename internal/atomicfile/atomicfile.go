// Package atomicfile writes files atomically: to a temporary file in the
// target's folder, synced, then renamed over the target, so a reader (or a
// run interrupted at any moment) sees either the old file or the new one.
//
// The temporary file is named ".NAME.tmp-DIGITS" beside NAME. While it is
// written the process holds an advisory lock on it (flock, on Unix), so
// that RemoveStale can tell a file left by a killed run from one another
// process is writing now. A signal handler (CleanupOnSignal) removes the
// temporary files being written when the process is interrupted.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// live are the temporary files this process is writing now.
var live = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// tempPrefix is the start of path's temporary files' names.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

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

// NotFileError is an output path that names something that is neither a
// file nor a stream: a folder, a socket, a block device, a dangling
// symbolic link. Nothing is written.
type NotFileError struct {
	Path, What string
}

func (e *NotFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a file to write", e.Path, e.What)
}

// Target is how path is written: a regular file (or none yet) is replaced
// atomically (Path: where, a symbolic link's target resolved, so that the
// link stays and its target gets the new file); a character device (such
// as /dev/null or a terminal), a named pipe, or "-" (standard output) is
// written straight through (Stream, true); anything else is a
// NotFileError. A named pipe with no reader is an error, not a wait.
func Target(path string) (where string, stream bool, err error) {
	if path == "-" {
		return path, true, nil
	}
	lst, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, false, nil
	case err != nil:
		return "", false, err
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		if st, err = os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", false, &NotFileError{path, "a symbolic link to a missing file"}
			}
			return "", false, err
		}
	}
	m := st.Mode()
	switch {
	case m.IsRegular():
		if st != lst { // the link's target, replaced in its own folder
			if path, err = filepath.EvalSymlinks(path); err != nil {
				return "", false, err
			}
		}
		return path, false, nil
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
		return path, true, nil
	case m.IsDir():
		return "", false, &NotFileError{path, "a folder"}
	case m&fs.ModeSocket != 0:
		return "", false, &NotFileError{path, "a socket"}
	case m&fs.ModeDevice != 0:
		return "", false, &NotFileError{path, "a block device"}
	}
	return "", false, &NotFileError{path, "not a regular file"}
}

// openStream opens a stream target for writing (standard output for "-",
// which is not to be closed: close false).
func openStream(path string) (f *os.File, close bool, err error) {
	if path == "-" {
		return os.Stdout, false, nil
	}
	f, err = openNoWait(path)
	return f, err == nil, err
}

// WriteFile is Write for writers that need the file itself (to seek, or to
// write a header last with WriteAt): write gets the temporary file, which
// is then synced and renamed over path. Errors wrap write's error (%w).
// What path names decides (Target): a symbolic link's target is replaced,
// a device, a named pipe or "-" is written straight through (a writer that
// seeks fails there), anything else is refused.
func WriteFile(path string, write func(f *os.File) error) error {
	where, stream, err := Target(path)
	if err != nil {
		return err
	}
	if stream {
		f, closeIt, err := openStream(where)
		if err != nil {
			return fmt.Errorf("%s: cannot open: %w", path, err)
		}
		err = write(f)
		if closeIt {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("%s: cannot write: %w", path, err)
		}
		return nil
	}
	path = where
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return fmt.Errorf("%s: cannot create temporary file: %w", path, err)
	}
	live.Lock()
	live.names[tmp.Name()] = true
	live.Unlock()
	defer func() {
		live.Lock()
		delete(live.names, tmp.Name())
		live.Unlock()
	}()
	lock(tmp) // advisory: RemoveStale leaves a locked file alone
	fail := func(what string, err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %s: %w", path, what, err)
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
		return fmt.Errorf("%s: cannot close temporary file: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: cannot rename into place: %w", path, err)
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

// Stale is a temporary file RemoveStale removed.
type Stale struct {
	Path string
	Size int64
}

// RemoveStale removes the temporary files of path (".NAME.tmp-DIGITS" in
// its folder) that no process is writing: those left by a run that was
// killed (SIGKILL, a crash, a power cut). A file another process holds
// locked is left alone. Where advisory locks are not supported (not
// Unix) nothing is removed.
func RemoveStale(path string) ([]Stale, error) {
	if !lockSupported {
		return nil, nil
	}
	if where, stream, err := Target(path); err == nil && !stream {
		path = where // a link's target: its temporary files are beside it
	}
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []Stale
	for _, e := range ents {
		name := e.Name()
		suffix, ok := strings.CutPrefix(name, prefix)
		if !ok || suffix == "" || strings.Trim(suffix, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		live.Lock()
		mine := live.names[p]
		live.Unlock()
		if mine {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if !tryLock(f) { // being written by another process
			f.Close()
			continue
		}
		st, _ := f.Stat()
		err = os.Remove(p)
		f.Close()
		if err != nil {
			return out, err
		}
		s := Stale{Path: p}
		if st != nil {
			s.Size = st.Size()
		}
		out = append(out, s)
	}
	return out, nil
}

// RemoveTemps removes every temporary file this process is writing now
// and returns their paths (for a signal handler: the writes then fail).
func RemoveTemps() []string {
	live.Lock()
	defer live.Unlock()
	var out []string
	for p := range live.names {
		if os.Remove(p) == nil {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// CleanupOnSignal handles SIGINT and SIGTERM until stop is called: on
// one, it removes the temporary files being written (RemoveTemps) and
// calls handle with the signal and what it removed; handle should exit
// the process (exit status 128+signal, as a shell reports it).
func CleanupOnSignal(handle func(sig os.Signal, removed []string)) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			handle(sig, RemoveTemps())
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}

// SignalExitCode is the exit status a shell reports for a process killed
// by sig: 128 + its number (130 for SIGINT, 143 for SIGTERM).
func SignalExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// Free is the room, in bytes, that writing path would find: the space an
// unprivileged process may still write on the filesystem of path's
// nearest existing folder (WriteFile creates the missing ones), or −1
// where this OS does not say. A writer of a large file checks it first,
// since its temporary file needs the whole size beside any old path.
func Free(path string) (int64, error) {
	dir := filepath.Dir(path)
	for {
		st, err := os.Stat(dir)
		switch {
		case err == nil && st.IsDir():
			return statfsFree(dir)
		case err == nil:
			return 0, fmt.Errorf("%s: %s is not a folder", path, dir)
		case filepath.Dir(dir) == dir:
			return 0, err
		}
		dir = filepath.Dir(dir)
	}
}
