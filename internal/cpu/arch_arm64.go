package cpu

import "github.com/klauspost/cpuid/v2"

func detectArch(i *Info) {
	if i.Hardware.Has(SVE) {
		vl, _ := cpuid.CPU.SveLengths()
		i.SVEBits = int(vl)
		if i.SVEBits == 0 {
			i.SVEBits = sveBitsOS()
		}
	}
	if hasSMEOS() {
		i.Hardware |= NewSet(SME)
	}
}
