package x86

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// assemble runs GNU as on Intel-syntax lines and returns the .text bytes.
func assemble(t *testing.T, lines []string) []byte {
	t.Helper()
	as, err := exec.LookPath("as")
	if err != nil {
		needBinutils(t, "GNU as not installed (apt-get install binutils)")
	}
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		needBinutils(t, "objcopy not installed (apt-get install binutils)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "x.s")
	obj := filepath.Join(dir, "x.o")
	bin := filepath.Join(dir, "x.bin")
	text := ".intel_syntax noprefix\n.text\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "--only-section=.text", obj, bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// check compares each encoding with GNU as, instruction by instruction.
func check(t *testing.T, lines []string, encs [][]byte) {
	t.Helper()
	got := assemble(t, lines)
	off := 0
	for i, e := range encs {
		if off+len(e) > len(got) || !bytes.Equal(got[off:off+len(e)], e) {
			end := min(off+len(e), len(got))
			t.Fatalf("%s: we encode % x, GNU as % x", lines[i], e, got[off:end])
		}
		off += len(e)
	}
	if off != len(got) {
		t.Fatalf("GNU as produced %d bytes, we %d", len(got), off)
	}
}

func TestVPDPBUSDVEX(t *testing.T) {
	var lines []string
	var encs [][]byte
	for d := 0; d < 16; d++ {
		for a := 0; a < 16; a++ {
			for b := 0; b < 16; b++ {
				lines = append(lines, fmt.Sprintf("{vex} vpdpbusd ymm%d, ymm%d, ymm%d", d, a, b))
				encs = append(encs, VPDPBUSDVEX(d, a, b))
			}
		}
	}
	check(t, lines, encs)
}

func TestVDPBF16PS(t *testing.T) {
	var lines []string
	var encs [][]byte
	for d := 0; d < 32; d++ {
		for a := 0; a < 32; a++ {
			for b := 0; b < 32; b++ {
				lines = append(lines, fmt.Sprintf("vdpbf16ps zmm%d, zmm%d, zmm%d", d, a, b))
				encs = append(encs, VDPBF16PS(d, a, b))
			}
		}
	}
	check(t, lines, encs)
}

func TestVCVTNE2PS2BF16(t *testing.T) {
	var lines []string
	var encs [][]byte
	for d := 0; d < 32; d++ {
		for a := 0; a < 32; a++ {
			for b := 0; b < 32; b++ {
				lines = append(lines, fmt.Sprintf("vcvtne2ps2bf16 zmm%d, zmm%d, zmm%d", d, a, b))
				encs = append(encs, VCVTNE2PS2BF16(d, a, b))
			}
		}
	}
	check(t, lines, encs)
}

// mems is a spread of memory operands: every base and index, the
// rbp/r13 and rsp/r12 special cases, all scales and displacement sizes.
func mems(withIndex bool) []Mem {
	var ms []Mem
	for b := 0; b < 16; b++ {
		for _, d := range []int32{0, 8, -128, 127, 128, 544, -4096} {
			ms = append(ms, Mem{Base: b, Index: -1, Disp: d})
			if !withIndex {
				continue
			}
			for i := 0; i < 16; i++ {
				if i == 4 {
					continue
				}
				for _, s := range []int{1, 2, 4, 8} {
					ms = append(ms, Mem{Base: b, Index: i, Scale: s, Disp: d})
				}
			}
		}
	}
	return ms
}

func TestAMX(t *testing.T) {
	var lines []string
	var encs [][]byte
	add := func(l string, e []byte) { lines, encs = append(lines, l), append(encs, e) }
	add("tilerelease", TILERELEASE())
	for _, m := range mems(false) {
		add("ldtilecfg "+m.String(), LDTILECFG(m))
	}
	for tm := 0; tm < 8; tm++ {
		add(fmt.Sprintf("tilezero tmm%d", tm), TILEZERO(tm))
		for _, m := range mems(true) {
			add(fmt.Sprintf("tileloadd tmm%d, %v", tm, m), TILELOADD(tm, m))
			add(fmt.Sprintf("tilestored %v, tmm%d", m, tm), TILESTORED(m, tm))
		}
		for a := 0; a < 8; a++ {
			for b := 0; b < 8; b++ {
				if tm == a || tm == b || a == b {
					continue
				}
				add(fmt.Sprintf("tdpbsud tmm%d, tmm%d, tmm%d", tm, a, b), TDPBSUD(tm, a, b))
				add(fmt.Sprintf("tdpbssd tmm%d, tmm%d, tmm%d", tm, a, b), TDPBSSD(tm, a, b))
			}
		}
	}
	check(t, lines, encs)
}

// needBinutils skips a test that needs GNU binutils, or fails it where
// KTUNE_REQUIRE_BINUTILS is set (CI installs them: a skip there would
// leave the encodings unchecked unnoticed).
func needBinutils(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("KTUNE_REQUIRE_BINUTILS") != "" {
		t.Fatalf("KTUNE_REQUIRE_BINUTILS is set but %s", why)
	}
	t.Skip(why)
}
