package kprofile

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/atomicfile"
)

// checkOutput checks an output file flag before any work: "" and "-" (standard
// output) pass; otherwise the path must not be a folder, its folder must
// exist, and it must not be one of the inputs (export -o PROFILE would
// replace the full profile by its cut). Errors are UsageErrors (exit 2).
func checkOutput(flag, path string, inputs ...string) error {
	if path == "" || path == "-" {
		return nil
	}
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		return cli.Usagef("%s %s: is a folder; want a file name", flag, path)
	}
	if _, _, err := atomicfile.Target(path); err != nil { // a socket, a dangling link
		return cli.Usagef("%s %v", flag, err)
	}
	dir := filepath.Dir(path)
	if dst, err := os.Stat(dir); err != nil || !dst.IsDir() {
		return cli.Usagef("%s %s: folder %s does not exist", flag, path, dir)
	}
	if st == nil || st.Mode().IsRegular() { // the file goes in as a temporary renamed over it: the folder must take one
		f, err := os.CreateTemp(dir, ".kprofile-check-*")
		if err != nil {
			return cli.Usagef("%s %s: cannot write in folder %s: %v", flag, path, dir, errors.Unwrap(err))
		}
		f.Close()
		os.Remove(f.Name())
	}
	if st == nil {
		return nil
	}
	for _, in := range inputs {
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			return cli.Usagef("%s %s: is the input %s; refusing to write over it", flag, path, in)
		}
	}
	return nil
}
