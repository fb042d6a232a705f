// Command armwords fills in and checks the WORD encodings of the
// hand-written arm64 assembly: every line
//
//	WORD $0x........ // mnemonic
//
// carries the GNU-syntax instruction in its comment (the Go assembler has
// no SVE and no SDOT, vector FADD, FMUL, SCVTF ...). armwords assembles
// the mnemonics with GNU as (aarch64-linux-gnu-as, Debian
// binutils-aarch64-linux-gnu) and, with -w, rewrites the hex words; without
// -w it reports every mismatch (the test in this package does that for all
// *_arm64.s files of the repository).
//
//	go run ./armwords -w ../kernels/gemm/gemm_neon_arm64.s
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"strings"

	"github.com/ktune/ktune/_asm/internal/armenc"
)

// wordLine matches a WORD line; group 1 is the indentation, 2 the hex
// word, 3 the mnemonic.
var wordLine = regexp.MustCompile(`^(\s*)WORD\s+\$0x([0-9a-fA-F]+)\s*//\s*(.+?)\s*$`)

// Mismatch is a WORD line whose hex differs from GNU as.
type Mismatch struct {
	Line       int
	Insn       string
	Have, Want uint32
}

// Process checks (and with write, fixes) one file's WORD lines.
func Process(path string, write bool) ([]Mismatch, int, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	lines := strings.Split(string(text), "\n")
	var idx []int
	var insns []string
	var have []uint32
	for i, l := range lines {
		m := wordLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var h uint32
		fmt.Sscanf(m[2], "%x", &h)
		idx, insns, have = append(idx, i), append(insns, armenc.Mnemonic(m[3])), append(have, h)
	}
	if len(insns) == 0 {
		return nil, 0, nil
	}
	want, err := armenc.Assemble(insns)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	var bad []Mismatch
	for j, i := range idx {
		if have[j] != want[j] {
			bad = append(bad, Mismatch{Line: i + 1, Insn: insns[j], Have: have[j], Want: want[j]})
			m := wordLine.FindStringSubmatch(lines[i])
			lines[i] = strings.Replace(lines[i], "$0x"+m[2], fmt.Sprintf("$0x%08x", want[j]), 1)
		}
	}
	if write && len(bad) > 0 {
		out := []byte(strings.Join(lines, "\n"))
		if !bytes.Equal(out, text) {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return nil, 0, err
			}
		}
	}
	return bad, len(insns), nil
}

func main() {
	write := flag.Bool("w", false, "rewrite the hex words")
	flag.Parse()
	fail := false
	for _, path := range flag.Args() {
		bad, n, err := Process(path, *write)
		if err != nil {
			log.Fatal(err)
		}
		if !*write {
			for _, b := range bad {
				fmt.Printf("%s:%d: %s: have %#08x, GNU as %#08x\n", path, b.Line, b.Insn, b.Have, b.Want)
			}
			fail = fail || len(bad) > 0
		}
		fmt.Printf("%s: %d WORD lines, %d rewritten\n", path, n, map[bool]int{true: len(bad)}[*write])
	}
	if fail {
		os.Exit(1)
	}
}
