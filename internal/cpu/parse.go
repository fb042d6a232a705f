package cpu

// Parsers of the kernel's text formats shared by live and captured
// detection.

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// ParseCPUList parses the kernel's list format, e.g. "0-3,8,10-11". CPU
// numbers above 16383 are refused (a corrupt file, not a machine).
func ParseCPUList(s string) ([]int, error) {
	cpus := []int{}
	s = strings.TrimSpace(s)
	if s == "" {
		return cpus, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > maxCPU {
			return nil, fmt.Errorf("bad cpu list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > maxCPU {
				return nil, fmt.Errorf("bad cpu list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// parseMeminfo returns MemTotal and MemAvailable (bytes) from a meminfo
// file's text (/proc/meminfo, or a node's meminfo whose lines start with
// "Node N").
func parseMeminfo(text string) (total, avail int64, err error) {
	sc := bufio.NewScanner(strings.NewReader(text))
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
		return 0, 0, fmt.Errorf("no MemTotal")
	}
	return total, avail, sc.Err()
}

// cpuinfoHz reads the first "cpu MHz" of /proc/cpuinfo's text (0: none).
func cpuinfoHz(text string) int64 {
	sc := bufio.NewScanner(strings.NewReader(text))
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
