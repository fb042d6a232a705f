package cpu

// archProbe asks Linux for the AMX tile permission where the CPU has AMX.
func archProbe(f *CPUIDFacts, hw *Set) {
	if hw.Intersect(AMX) != 0 {
		f.AMXPermission = requestAMX()
	}
}
