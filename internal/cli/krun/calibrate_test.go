package krun

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ktune/ktune/internal/cli/clitest"
)

// TestCalibrateThreads: krun calibrate writes the same bytes at -t 1 and
// -t 3, with a tuning profile installed or not (calibrate uses none).
func TestCalibrateThreads(t *testing.T) {
	tiny := tinyDir(t)
	dir := t.TempDir()
	clitest.WriteFile(t, dir, "p", "1,2,3,4,5,6,7,8,9,10\n11,12,13\n400,300,200,100,50\n")
	var files [][]byte
	for _, th := range []string{"1", "3"} {
		out := filepath.Join(dir, "t"+th+".imatrix")
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"calibrate", tiny, "--prompts", filepath.Join(dir, "p"), "--ids", "-o", out, "-t", th}, &stdout, &stderr); code != 0 {
			t.Fatalf("-t %s: exit %d: %s", th, code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the imatrix files of -t 1 and -t 3 differ")
	}
}
