package cpu

func detectArch(i *Info) {
	if i.Hardware.Intersect(AMX) != 0 {
		i.AMXPermission = requestAMX()
		if !i.AMXPermission {
			i.Warnings = append(i.Warnings, "the CPU has AMX but the OS did not grant the tile-data permission; AMX variants are off")
		}
	}
}
