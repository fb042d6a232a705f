package cpu

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// sveBitsOS asks the kernel for this thread's SVE vector length (PR_SVE_GET_VL).
func sveBitsOS() int {
	r, err := unix.PrctlRetInt(unix.PR_SVE_GET_VL, 0, 0, 0, 0)
	if err != nil || r < 0 {
		return 0
	}
	return (r & unix.PR_SVE_VL_LEN_MASK) * 8
}

// hasSMEOS reads HWCAP2 from the auxiliary vector (cpuid has no SME bit for arm64).
func hasSMEOS() bool {
	const atHWCAP2, hwcap2SME = 26, 1 << 23
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return false
	}
	for i := 0; i+16 <= len(b); i += 16 {
		tag, val := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		if tag == atHWCAP2 {
			return val&hwcap2SME != 0
		}
	}
	return false
}
