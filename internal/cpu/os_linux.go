package cpu

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func detectOS(i *Info) {
	nodes, err := ReadNUMA("/sys")
	if err != nil {
		i.Warnings = append(i.Warnings, "NUMA: "+err.Error())
	}
	i.NUMA = nodes
	if total, _, err := readMeminfo("/proc/meminfo"); err == nil {
		i.MemBytes = total
	}
	if i.NominalHz == 0 {
		i.NominalHz = cpuinfoHz("/proc/cpuinfo")
	}
	if len(i.NUMA) == 0 {
		i.NUMA = []Node{{ID: 0, CPUs: seq(i.LogicalCores), MemBytes: i.MemBytes}}
	}
}

// ReadNUMA reads the NUMA nodes under a sysfs root ("/sys" on a live
// system; tests pass a fake tree): devices/system/node/node*/cpulist and
// meminfo. A system without the node folder has one node; it returns nil.
func ReadNUMA(sysRoot string) ([]Node, error) {
	dir := filepath.Join(sysRoot, "devices", "system", "node")
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "node") {
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(name, "node"))
		if err != nil {
			continue
		}
		n := Node{ID: id}
		b, err := os.ReadFile(filepath.Join(dir, name, "cpulist"))
		if err != nil {
			return nil, err
		}
		if n.CPUs, err = ParseCPUList(strings.TrimSpace(string(b))); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, name, "cpulist"), err)
		}
		if total, _, err := readMeminfo(filepath.Join(dir, name, "meminfo")); err == nil {
			n.MemBytes = total
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].ID < nodes[b].ID })
	return nodes, nil
}

// ParseCPUList parses the kernel's list format, e.g. "0-3,8,10-11".
func ParseCPUList(s string) ([]int, error) {
	cpus := []int{}
	if s == "" {
		return cpus, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad cpu list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad cpu list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// readMeminfo returns MemTotal and MemAvailable (bytes) from a meminfo file
// (/proc/meminfo, or a node's meminfo whose lines start with "Node N").
func readMeminfo(path string) (total, avail int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "Node" {
			fields = fields[2:]
		}
		if len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 2 && fields[2] == "kB" {
			v *= 1024
		}
		switch fields[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail = v
		}
	}
	if total == 0 {
		return 0, 0, fmt.Errorf("%s: no MemTotal", path)
	}
	return total, avail, sc.Err()
}

// AvailableMemory returns the memory the OS says can be allocated without
// swapping (MemAvailable), or 0 when unknown.
func AvailableMemory() int64 {
	_, avail, err := readMeminfo("/proc/meminfo")
	if err != nil {
		return 0
	}
	return avail
}

func cpuinfoHz(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int64(mhz * 1e6)
			}
		}
	}
	return 0
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
