package cpu

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// osProbe reads the sysctl values darwinDetect uses (darwinKeys, and
// hw.perflevelN.* for each performance level) into src.Sysctl, as decimal
// strings or text, the way `sysctl name...` prints them. Missing keys are
// left out (Intel Macs have no hw.perflevel*, Apple silicon no
// hw.l3cachesize or hw.cpufrequency). macOS has no affinity call, so
// src.Affinity stays nil.
func osProbe(src *Source) {
	src.Sysctl = map[string]string{}
	for _, k := range darwinKeys {
		readSysctl(src.Sysctl, k)
	}
	n, err := strconv.Atoi(src.Sysctl["hw.nperflevels"])
	if err != nil {
		return
	}
	for l := 0; l < min(n, maxPerfLevels); l++ {
		for _, k := range darwinLevelKeys {
			readSysctl(src.Sysctl, fmt.Sprintf("hw.perflevel%d.%s", l, k))
		}
	}
}

// readSysctl stores one sysctl value in m; integers are decoded by their
// width (the kernel declares some of these 32-bit, others 64-bit, and the
// width has changed between releases).
func readSysctl(m map[string]string, name string) {
	if darwinStringKey(name) {
		if v, err := unix.Sysctl(name); err == nil {
			m[name] = v
		}
		return
	}
	b, err := unix.SysctlRaw(name)
	if err != nil {
		return
	}
	switch len(b) {
	case 4:
		m[name] = strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(b))), 10)
	case 8:
		m[name] = strconv.FormatInt(int64(binary.LittleEndian.Uint64(b)), 10)
	}
}

// AvailableMemory is unknown (0) on macOS: the kernel's free page count
// (vm.page_free_count) leaves out the inactive and purgeable pages it
// hands back on demand, so it is often a small fraction of what a process
// can really use, and refusing a model on it would be wrong. 0 turns the
// memory check off.
func AvailableMemory() int64 { return 0 }
