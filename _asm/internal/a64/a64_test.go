package a64

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHandWritten: every assembly file of the repository is generated
// (avo for amd64, _asm/arm64 for arm64): a hand-written one fails it.
func TestHandWritten(t *testing.T) {
	root := "../../.."
	var found []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "_asm" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".s") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if !generated.MatchString(string(b)) {
			rel, _ := filepath.Rel(root, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: hand-written assembly; generate it (avo under _asm for amd64, _asm/arm64 for arm64)", f)
	}
	if n == 0 {
		t.Fatal("no assembly file found: the walk missed the tree")
	}
	t.Logf("%d assembly files, all generated", n)
}

// generated matches the header Go's convention asks of generated files
// (https://go.dev/s/generatedcode).
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
