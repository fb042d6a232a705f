package cpu

import (
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// clockTick is USER_HZ, the unit of /proc/stat (100 on every Linux ABI Go
// supports).
const clockTick = time.Second / 100

// SampleLoad reads the busy time of the usable CPUs, this process's CPU
// time, the quota's throttled time and the load average.
func SampleLoad() (Load, error) {
	l := Load{Wall: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return l, err
	}
	busy, steal, err := parseProcStat(string(b), Get().Topology.CPUs)
	if err != nil {
		return l, err
	}
	l.Busy, l.Steal = time.Duration(busy)*clockTick, time.Duration(steal)*clockTick
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err == nil {
		l.Self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if t := Get().Topology.QuotaFrom; t != "" {
		if b, err := os.ReadFile(path.Join(path.Dir(t), "cpu.stat")); err == nil {
			l.Throttled = parseThrottled(string(b))
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			l.LoadAvg, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return l, nil
}
