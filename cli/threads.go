package cli

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ktune/ktune/internal/cpu"
)

// usableCPUs is the most threads anything runs on (cpu.Info.Usable; tests
// replace it).
var usableCPUs = func() int { return max(cpu.Get().Usable, 1) }

// usableWhy says where the usable count comes from, for messages.
func usableWhy() string {
	t := cpu.Get().Topology
	var why []string
	if len(t.Affinity) > 0 && len(t.Affinity) < len(t.Online) {
		why = append(why, fmt.Sprintf("affinity mask %s", cpu.FormatCPUList(t.CPUs)))
	}
	if t.Quota > 0 {
		why = append(why, fmt.Sprintf("cgroup quota %.3g CPUs", t.Quota))
	}
	if t.GOMAXPROCS > 0 {
		why = append(why, fmt.Sprintf("GOMAXPROCS=%d", t.GOMAXPROCS))
	}
	if len(why) == 0 {
		return ""
	}
	return " (" + strings.Join(why, ", ") + ")"
}

// ThreadList reads a thread-count list flag ("1,2,4", ranges "1-8"; empty
// gives def) for this machine. A list of one count above the usable CPUs
// is clamped to them with one warning on w; a longer list naming counts
// above them is refused, naming those counts (the user asked for them
// explicitly). Duplicates are dropped and the list is sorted.
func ThreadList(w io.Writer, flag, s string, def []int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return slices.Clone(def), nil
	}
	n := usableCPUs()
	parts := strings.Split(s, ",")
	var out, over []int
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" { // "1,,2": a typo, not a list of two
			return nil, Usagef("%s: an empty thread count in %q (want e.g. 1,2,4 or 1-8)", flag, s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err != nil || a < 1 || b < a {
			return nil, Usagef("%s: bad thread count %q (want e.g. 1,2,4 or 1-8)", flag, part)
		}
		if b > n { // checked before any loop: b may be the largest int
			if isRange {
				return nil, Usagef("%s: %s goes past the %d usable CPUs of this machine%s", flag, part, n, usableWhy())
			}
			over = append(over, a)
			continue
		}
		for t := a; t <= b; t++ {
			out = append(out, t)
		}
	}
	sort.Ints(over)
	over = slices.Compact(over)
	if len(over) > 0 {
		if len(out) == 0 && len(over) == 1 {
			fmt.Fprintf(w, "warning: %s %d: this machine runs %d threads at most%s; using %d\n", flag, over[0], n, usableWhy(), n)
			return []int{n}, nil
		}
		return nil, Usagef("%s: %s above the %d usable CPUs of this machine%s", flag, joinInts(over), n, usableWhy())
	}
	sort.Ints(out)
	return slices.Compact(out), nil
}

// ThreadCount clamps a single thread-count flag to the usable CPUs, with
// one warning on w when it was above them; 0 means all usable CPUs, a
// negative count is refused.
func ThreadCount(w io.Writer, flag string, n int) (int, error) {
	u := usableCPUs()
	switch {
	case n < 0:
		return 0, Usagef("%s %d: a thread count is 1 or more (0: every usable CPU)", flag, n)
	case n == 0:
		return u, nil
	case n > u:
		fmt.Fprintf(w, "warning: %s %d: this machine runs %d threads at most%s; using %d\n", flag, n, u, usableWhy(), u)
		return u, nil
	}
	return n, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
