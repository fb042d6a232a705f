package cpu

import "github.com/klauspost/cpuid/v2"

// archProbe reads the SVE vector length and SME (which cpuid lacks) from
// the kernel.
func archProbe(f *CPUIDFacts, hw *Set) {
	if hw.Has(SVE) {
		vl, _ := cpuid.CPU.SveLengths()
		f.SVEBits = int(vl)
		if f.SVEBits == 0 {
			f.SVEBits = sveBitsOS()
		}
	}
	if hasSMEOS() {
		*hw |= NewSet(SME)
	}
}
