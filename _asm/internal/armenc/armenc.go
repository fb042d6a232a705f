// Package armenc encodes arm64 instructions the Go assembler does not
// know (SVE, SDOT, vector FADD, FMUL, SCVTF, ...) with GNU as
// (aarch64-linux-gnu-as, Debian binutils-aarch64-linux-gnu), for the WORD
// lines of the arm64 assembly: armwords checks the hand-written files with
// it, the arm64 generators (_asm/internal/a64) write theirs.
package armenc

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// March enables every extension the kernels use.
const March = "-march=armv8.6-a+sve2+i8mm+bf16+dotprod+fp16"

// Mnemonic strips a trailing explanation in parentheses from a comment.
func Mnemonic(comment string) string {
	if i := strings.Index(comment, "  ("); i >= 0 {
		comment = comment[:i]
	}
	return strings.TrimSpace(comment)
}

// Assemble returns the 32-bit encodings of the instructions, in order.
func Assemble(insns []string) ([]uint32, error) {
	as, err := exec.LookPath("aarch64-linux-gnu-as")
	if err != nil {
		return nil, fmt.Errorf("aarch64-linux-gnu-as not installed (apt-get install binutils-aarch64-linux-gnu)")
	}
	objcopy, err := exec.LookPath("aarch64-linux-gnu-objcopy")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "armwords")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src, obj, bin := filepath.Join(dir, "x.s"), filepath.Join(dir, "x.o"), filepath.Join(dir, "x.bin")
	if err := os.WriteFile(src, []byte(".text\n"+strings.Join(insns, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command(as, March, "-o", obj, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "--only-section=.text", obj, bin).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("objcopy: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*len(insns) {
		return nil, fmt.Errorf("as produced %d bytes for %d instructions", len(b), len(insns))
	}
	w := make([]uint32, len(insns))
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w, nil
}
