package cpu

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Load is a sample of how busy the usable CPUs are: the time they spent
// busy (user, nice, system, irq, softirq and steal from /proc/stat's
// per-CPU lines: steal is time the hypervisor gave to another guest), this
// process's own CPU time, the time a cgroup quota throttled it, and the
// 1-minute load average. Two samples tell whether other processes took CPU
// time while this one measured (Busy).
type Load struct {
	Wall      time.Time
	Busy      time.Duration // on the usable CPUs, every process
	Steal     time.Duration // part of Busy
	Self      time.Duration // this process, user + system
	Throttled time.Duration // by the cgroup CPU quota
	LoadAvg   float64
}

// Busyness compares two samples: others is the CPU time other processes
// (and, in a VM, other guests through steal) took on the usable CPUs,
// averaged over the wall time, in CPUs; throttled the time the quota held
// this process back.
type Busyness struct {
	Seconds   float64 `json:"seconds"`
	Others    float64 `json:"others_cpus"`
	Steal     float64 `json:"steal_cpus"`
	Throttled float64 `json:"throttled_s"`
	LoadAvg   float64 `json:"loadavg_end"`
}

// Since compares a with an earlier sample.
func (a Load) Since(b Load) Busyness {
	wall := a.Wall.Sub(b.Wall).Seconds()
	out := Busyness{Seconds: wall, LoadAvg: a.LoadAvg, Throttled: (a.Throttled - b.Throttled).Seconds()}
	if wall > 0 {
		out.Others = max(0, float64((a.Busy-b.Busy)-(a.Self-b.Self))/float64(time.Second)/wall)
		out.Steal = max(0, float64(a.Steal-b.Steal)/float64(time.Second)/wall)
	}
	return out
}

// BusyThreshold is the average CPU count others may take before a
// measurement is called busy: a quarter of a CPU (a browser tab idles far
// below it; one CPU-bound process is a whole CPU).
const BusyThreshold = 0.25

// Warning describes what made the interval busy ("" when quiet).
func (b Busyness) Warning() string {
	var why []string
	if b.Others > BusyThreshold {
		s := fmt.Sprintf("other processes used %.2f CPUs on average", b.Others)
		if b.Steal > 0.05 {
			s += fmt.Sprintf(" (%.2f of them hypervisor steal)", b.Steal)
		}
		why = append(why, s)
	}
	// a quota always throttles a little (the runtime's own threads):
	// 5% of the wall time is what moves a timing
	if b.Throttled > 0.05*b.Seconds && b.Throttled > 0.5 {
		why = append(why, fmt.Sprintf("the cgroup CPU quota throttled this process for %.1f s", b.Throttled))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("the machine was busy during these %.0f s: %s", b.Seconds, strings.Join(why, "; "))
}

// parseProcStat sums the busy and steal ticks of the listed CPUs' lines of
// /proc/stat ("cpuN user nice system idle iowait irq softirq steal ...").
func parseProcStat(text string, cpus []int) (busy, steal int64, err error) {
	want := map[int]bool{}
	for _, c := range cpus {
		want[c] = true
	}
	found := 0
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
		if err != nil || !want[id] {
			continue
		}
		var v [8]int64
		for i := range v {
			if v[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("/proc/stat: %q", line)
			}
		}
		// user nice system idle iowait irq softirq steal
		busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		steal += v[7]
		found++
	}
	if found == 0 {
		return 0, 0, fmt.Errorf("/proc/stat: no line for CPUs %s", FormatCPUList(cpus))
	}
	return busy, steal, nil
}

// parseThrottled reads the throttled time of a cgroup cpu.stat (v2
// "throttled_usec N", v1 "throttled_time N" in nanoseconds).
func parseThrottled(text string) time.Duration {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "throttled_usec":
			return time.Duration(n) * time.Microsecond
		case "throttled_time":
			return time.Duration(n)
		}
	}
	return 0
}
