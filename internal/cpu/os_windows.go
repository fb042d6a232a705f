package cpu

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// kernel32 calls golang.org/x/sys/windows does not wrap.
var (
	kernel32                    = windows.NewLazySystemDLL("kernel32.dll")
	procGetLogicalProcessorInfo = kernel32.NewProc("GetLogicalProcessorInformationEx")
	procGetProcessAffinityMask  = kernel32.NewProc("GetProcessAffinityMask")
	procGetProcessGroupAffinity = kernel32.NewProc("GetProcessGroupAffinity")
	procGlobalMemoryStatusEx    = kernel32.NewProc("GlobalMemoryStatusEx")
)

// osProbe reads what only the live OS can answer: the
// GetLogicalProcessorInformationEx(RelationAll) buffer (src.GLPI) and the
// process affinity (src.Affinity). GOMAXPROCS is already in src.Env.
func osProbe(src *Source) {
	src.GLPI = readGLPI()
	src.Affinity = processAffinity()
	if ms, ok := memoryStatus(); ok {
		src.MemBytes = int64(ms.totalPhys)
	}
}

// readGLPI asks GetLogicalProcessorInformationEx for its buffer size, then
// for the buffer (again if processors came online in between); nil when
// the call is missing or fails.
func readGLPI() []byte {
	if procGetLogicalProcessorInfo.Find() != nil {
		return nil
	}
	var n uint32
	r, _, err := procGetLogicalProcessorInfo.Call(relationAll, 0, uintptr(unsafe.Pointer(&n)))
	for try := 0; try < 3 && r == 0 && err == windows.ERROR_INSUFFICIENT_BUFFER && n > 0; try++ {
		buf := make([]byte, n)
		r, _, err = procGetLogicalProcessorInfo.Call(relationAll, uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)))
		if r != 0 {
			return buf[:min(int(n), len(buf))]
		}
	}
	return nil
}

// processAffinity lists the CPUs GetProcessAffinityMask allows. The mask
// covers one processor group: GetProcessGroupAffinity says which when the
// process is confined to one (group*64 + bit, as windowsDetect numbers
// CPUs); a process spanning several groups (the default from Windows 11
// and Server 2022) has no single mask, and nil (every CPU) is returned, as
// it is when either call fails.
func processAffinity() []int {
	if procGetProcessAffinityMask.Find() != nil {
		return nil
	}
	var mask, system uintptr
	if r, _, _ := procGetProcessAffinityMask.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&mask)), uintptr(unsafe.Pointer(&system))); r == 0 || mask == 0 {
		return nil
	}
	group := 0
	if procGetProcessGroupAffinity.Find() == nil {
		groups := make([]uint16, maxGroups)
		count := uint16(len(groups))
		r, _, _ := procGetProcessGroupAffinity.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&count)), uintptr(unsafe.Pointer(&groups[0])))
		switch {
		case r == 0:
			return nil
		case count > 1:
			return nil
		case count == 1:
			group = int(groups[0])
		}
	}
	if group >= maxGroups {
		return nil
	}
	return maskCPUs(group, uint64(mask))
}

// memoryStatusEx is MEMORYSTATUSEX.
type memoryStatusEx struct {
	length               uint32
	memoryLoad           uint32
	totalPhys            uint64
	availPhys            uint64
	totalPageFile        uint64
	availPageFile        uint64
	totalVirtual         uint64
	availVirtual         uint64
	availExtendedVirtual uint64
}

// AvailableMemory returns the physical memory Windows says is available
// (GlobalMemoryStatusEx's ullAvailPhys: free and standby pages, the
// counterpart of Linux's MemAvailable), or 0 when unknown.
func AvailableMemory() int64 {
	ms, ok := memoryStatus()
	if !ok {
		return 0
	}
	return int64(ms.availPhys)
}

// memoryStatus calls GlobalMemoryStatusEx.
func memoryStatus() (memoryStatusEx, bool) {
	ms := memoryStatusEx{length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if procGlobalMemoryStatusEx.Find() != nil {
		return ms, false
	}
	if r, _, _ := procGlobalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&ms))); r == 0 {
		return ms, false
	}
	return ms, true
}
