package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/_asm/internal/armenc"
)

// TestEncodings checks every WORD line of the repository's arm64 assembly
// against GNU as.
func TestEncodings(t *testing.T) {
	if _, err := armenc.Assemble([]string{"nop"}); err != nil {
		needBinutils(t, err)
	}
	var files []string
	filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "_arm64.s") && !strings.Contains(p, "/_asm/") {
			files = append(files, p)
		}
		return nil
	})
	total := 0
	for _, f := range files {
		bad, n, err := Process(f, false)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		for _, b := range bad {
			t.Errorf("%s:%d: %s: WORD %#08x, GNU as %#08x", f, b.Line, b.Insn, b.Have, b.Want)
		}
	}
	t.Logf("%d files, %d WORD lines checked", len(files), total)
}

func TestAssembleKnown(t *testing.T) {
	w, err := armenc.Assemble([]string{"sdot v2.4s, v0.16b, v1.16b", "whilelo p1.s, x5, x6"})
	if err != nil {
		needBinutils(t, err)
	}
	if w[0] != 0x4e819402 || w[1] != 0x25a61ca1 {
		t.Fatalf("got %#x", w)
	}
}

// needBinutils skips a test that needs GNU as for aarch64, or fails it
// where KTUNE_REQUIRE_BINUTILS is set (CI installs binutils: a skip there
// would leave the encodings unchecked unnoticed).
func needBinutils(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("KTUNE_REQUIRE_BINUTILS") != "" {
		t.Fatalf("KTUNE_REQUIRE_BINUTILS is set but: %v", err)
	}
	t.Skip(err)
}
