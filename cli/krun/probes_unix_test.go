//go:build unix

package krun

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ktune/ktune/cli/clitest"
)

// TestKrunProbesSpecialFiles: a model path that is a named pipe or a
// device is refused at once (opening a pipe to map it waited for a writer
// forever: info, generate and bench hung), naming what it is.
func TestKrunProbesSpecialFiles(t *testing.T) {
	fifo := func(t testing.TB, dir string) {
		if err := syscall.Mkfifo(filepath.Join(dir, "p.kt"), 0o644); err != nil {
			t.Skip(err)
		}
	}
	const pipe = "p.kt: is a named pipe, not a model file"
	clitest.Run(t, Main, []clitest.Probe{
		{Name: "info/fifo", Setup: fifo, Args: []string{"info", "{dir}/p.kt"}, Code: 2, Err: pipe},
		{Name: "info/fifo-gguf", Setup: func(t testing.TB, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "p.gguf"), 0o644); err != nil {
				t.Skip(err)
			}
		}, Args: []string{"info", "{dir}/p.gguf"}, Code: 2, Err: "p.gguf: is a named pipe, not a model file"},
		{Name: "generate/fifo", Setup: fifo, Args: []string{"generate", "{dir}/p.kt", "--ids", "1", "-n", "1"}, Code: 2, Err: pipe},
		{Name: "bench/fifo", Setup: fifo, Args: []string{"bench", "{dir}/p.kt", "-p", "4", "-n", "1", "-r", "1"}, Code: 2, Err: pipe},
		{Name: "info/device", Args: []string{"info", "/dev/null"}, Code: 2, Err: "/dev/null: is a device, not a model file"},
	})
}
