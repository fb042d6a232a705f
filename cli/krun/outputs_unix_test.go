//go:build unix

package krun

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/model"
)

// TestOutputTargetProbes: an output path that is an input (a checkpoint's
// shard or config for calibrate, the --imatrix file for convert) is
// refused before any work; one that names a named pipe, a socket or a
// dangling link is refused with exit 2 and left as it was; a symbolic link
// to a file keeps the link and replaces its target.
func TestOutputTargetProbes(t *testing.T) {
	tiny := tinyDir(t)
	ckpt := func(t testing.TB, dir string) { copyTiny(t, tiny, dir, "m") }
	ids := func(t testing.TB, dir string) { ckpt(t, dir); clitest.WriteFile(t, dir, "p", "1,2,3\n") }
	calib := func(out string, args ...string) []string {
		return append([]string{"calibrate", "{dir}/m", "--prompts", "{dir}/p", "--ids", "-o", out}, args...)
	}
	calibrated := tinyImatrix(t, tiny)
	withImatrix := func(t testing.TB, dir string) {
		ckpt(t, dir)
		if err := model.WriteImatrix(filepath.Join(dir, "x.imatrix"), calibrated); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(name string) func(t testing.TB, dir string) {
		return func(t testing.TB, dir string) {
			ids(t, dir)
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
				t.Skip(err)
			}
		}
	}
	fast := 10 * time.Second
	probes := []clitest.Probe{
		{Name: "calibrate/out-is-shard", Setup: ids, Args: calib("{dir}/m/model.safetensors"), Code: 2, Err: "is the input", Timeout: fast},
		{Name: "calibrate/out-is-config", Setup: ids, Args: calib("{dir}/m/config.json"), Code: 2, Err: "is the input", Timeout: fast},
		{Name: "convert/out-is-imatrix", Setup: withImatrix,
			Args: []string{"convert", "{dir}/m", "-o", "{dir}/x.imatrix", "--imatrix", "{dir}/x.imatrix"}, Code: 2, Err: "is the input file", Timeout: fast},
		{Name: "convert/out-is-fifo", Setup: fifo("o.kt"), Args: []string{"convert", "{dir}/m", "-o", "{dir}/o.kt"}, Code: 2, Err: "is a named pipe", Timeout: fast},
		{Name: "calibrate/out-dangling-link", Setup: func(t testing.TB, dir string) {
			ids(t, dir)
			if err := os.Symlink("missing.imatrix", filepath.Join(dir, "o.imatrix")); err != nil {
				t.Skip(err)
			}
		}, Args: calib("{dir}/o.imatrix"), Code: 2, Err: "a symbolic link to a missing file", Timeout: fast},
		{Name: "calibrate/out-socket", Setup: func(t testing.TB, dir string) {
			ids(t, dir)
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Skip(err)
			}
			defer syscall.Close(fd)
			if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(dir, "o.imatrix")}); err != nil {
				t.Skip(err)
			}
		}, Args: calib("{dir}/o.imatrix"), Code: 2, Err: "is a socket", Timeout: fast},
		{Name: "calibrate/out-link-to-file", Setup: func(t testing.TB, dir string) {
			ids(t, dir)
			clitest.WriteFile(t, dir, "real.imatrix", "old")
			if err := os.Symlink("real.imatrix", filepath.Join(dir, "o.imatrix")); err != nil {
				t.Skip(err)
			}
		}, Args: calib("{dir}/o.imatrix", "-t", "1"), Code: 0, Creates: []string{"real.imatrix", "o.imatrix"}, // the link reads as its target
			Check: func(t testing.TB, dir, stdout, stderr string) {
				if st, err := os.Lstat(filepath.Join(dir, "o.imatrix")); err != nil || st.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the link was replaced (%v)", err)
				}
				if _, err := model.ReadImatrix(filepath.Join(dir, "real.imatrix")); err != nil {
					t.Errorf("the link's target: %v", err)
				}
			}},
	}
	clitest.Run(t, Main, probes)
}
