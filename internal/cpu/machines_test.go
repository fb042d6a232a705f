package cpu

// Captured-machine tests: every folder of testdata/machines that holds an
// expected.json is a machine (probe.json and fs/ as `ktune detect
// --capture` writes them, or built by hand in that format), detected with
// Describe(LoadCapture(dir)) and compared with expected.json.
//
// expected.json is written by hand from the machine's documented facts,
// never copied from the parser's output: there is deliberately no -update
// flag. Its form (see testdata/machines/README.md):
//
//	{
//	  "comment": ["how the values were derived", "..."],
//	  "usable": 4, "logical": 64, "physical": 32, "threads_per_core": 2, "packages": 1,
//	  "classes": [{"name": "performance", "rank": 0, "cores": 8, "cpus": "0-15"}, ...] ([] when uniform),
//	  "numa": [{"id": 0, "cpus": "0-63"}],
//	  "cache": {"l1d": "32K", "l1i": "32K", "l2": "1M", "l3": "32M", "l3_total": "256M",
//	            "from": {"l1d": "sysfs", ...}},
//	  "quota": 4, "quota_from": "/sys/fs/cgroup/cpu.max",
//	  "default_threads": [1, 2, 4],
//	  "orders": {"compact": "0-63", "spread": "0-63", "smt": "0,32,1,33", "pcores": "..."},
//	  "fingerprint": "amd-25.17.1-4c-avx512-",
//	  "warnings": ["substring of a warning", ...]
//	}
//
// CPU lists use the kernel's list form ("0-7,32-39"); orders, which are not
// sorted, are read item by item in the order written: "a", "a-b" (a, a+1,
// … b) and "a-b/s" (a, a+s, … b), so "0-14/2,16-31,1-15/2" is 0,2,…,14,
// 16,17,…,31,1,3,…,15. Sizes are "48K", "2M", "36M" (binary units), "0" or
// "unknown" (-1). The fingerprint is everything before the CRC (which is
// checked to be 8 hex digits). Warnings must match one to one: each
// expected substring is in some warning and each warning holds some
// expected substring. Optional keys: "quota_from", "cores" (each core's
// CPUs, in Topology.Cores order), "parts" (Core.Part → its cores' CPUs,
// e.g. {"cpu_atom": "16-31"}), "mem" (Info.MemBytes, e.g. "24684084K"),
// "nominal_mhz", "sve_bits", "topology_from", and per NUMA node "mem".

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

type machineWant struct {
	Comment        []string          `json:"comment"`
	Usable         *int              `json:"usable"`
	Logical        *int              `json:"logical"`
	Physical       *int              `json:"physical"`
	ThreadsPerCore *int              `json:"threads_per_core"`
	Packages       *int              `json:"packages"`
	Classes        *[]classWant      `json:"classes"`
	NUMA           *[]nodeWant       `json:"numa"`
	Cache          *cacheWant        `json:"cache"`
	Quota          *float64          `json:"quota"`
	QuotaFrom      *string           `json:"quota_from"`
	DefaultThreads *[]int            `json:"default_threads"`
	Orders         *ordersWant       `json:"orders"`
	Fingerprint    *string           `json:"fingerprint"`
	Warnings       *[]string         `json:"warnings"`
	Cores          *[]string         `json:"cores"`
	Parts          map[string]string `json:"parts"`
	Mem            *string           `json:"mem"`
	NominalMHz     *int64            `json:"nominal_mhz"`
	SVEBits        *int              `json:"sve_bits"`
	TopologyFrom   *string           `json:"topology_from"`
}

type classWant struct {
	Name  string `json:"name"`
	Rank  int    `json:"rank"`
	Cores int    `json:"cores"`
	CPUs  string `json:"cpus"`
	Part  string `json:"part"`
}

type nodeWant struct {
	ID   int    `json:"id"`
	CPUs string `json:"cpus"`
	Mem  string `json:"mem"`
}

type cacheWant struct {
	L1D     string            `json:"l1d"`
	L1I     string            `json:"l1i"`
	L2      string            `json:"l2"`
	L3      string            `json:"l3"`
	L3Total string            `json:"l3_total"`
	From    map[string]string `json:"from"`
}

type ordersWant struct {
	Compact *string `json:"compact"`
	Spread  *string `json:"spread"`
	SMT     *string `json:"smt"`
	PCores  *string `json:"pcores"`
}

// TestCapturedMachines detects every machine of testdata/machines that has
// an expected.json and compares.
func TestCapturedMachines(t *testing.T) {
	root := filepath.Join("testdata", "machines")
	es, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if os.IsNotExist(err) {
			t.Logf("%s: no expected.json, skipped", dir)
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
			var want machineWant
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&want); err != nil {
				t.Fatalf("%s/expected.json: %v", dir, err)
			}
			src, err := LoadCapture(dir)
			if err != nil {
				t.Fatal(err)
			}
			if src.Note == "" {
				t.Errorf("%s/probe.json has no note saying where the machine came from", dir)
			}
			info := Describe(src)
			if diffs := compareMachine(info, &want); len(diffs) > 0 {
				t.Errorf("%s: %d difference(s) from expected.json (got = detected, want = expected.json):\n%s", dir, len(diffs), strings.Join(diffs, "\n"))
			}
		})
	}
	if n == 0 {
		t.Fatalf("no machine with an expected.json under %s", root)
	}
}

// compareMachine lists the differences between what was detected and what
// is expected, one readable entry per field.
func compareMachine(i *Info, w *machineWant) []string {
	var diffs []string
	add := func(field, got, want string) {
		if got == want {
			return
		}
		if len(got)+len(want) < 60 && !strings.Contains(got+want, "\n") {
			diffs = append(diffs, fmt.Sprintf("  %s: got %s, want %s", field, got, want))
			return
		}
		diffs = append(diffs, fmt.Sprintf("  %s:\n      got:  %s\n      want: %s", field, got, want))
	}
	bad := func(format string, args ...any) { diffs = append(diffs, "  "+fmt.Sprintf(format, args...)) }
	required := func(field string, present bool) bool {
		if !present {
			bad("expected.json lacks %q (required)", field)
		}
		return present
	}
	t := &i.Topology
	itoa := strconv.Itoa

	// counts
	for _, f := range []struct {
		name string
		want *int
		got  int
	}{
		{"usable", w.Usable, i.Usable},
		{"logical", w.Logical, i.LogicalCores},
		{"physical", w.Physical, i.PhysicalCores},
		{"threads_per_core", w.ThreadsPerCore, i.ThreadsPerCore},
		{"packages", w.Packages, t.Packages},
	} {
		if required(f.name, f.want != nil) {
			add(f.name, itoa(f.got), itoa(*f.want))
		}
	}
	if w.TopologyFrom != nil {
		add("topology_from", t.From, *w.TopologyFrom)
	}

	// classes
	if required("classes", w.Classes != nil) {
		var got, want []string
		for _, c := range t.Classes {
			s := fmt.Sprintf("{%s rank %d: %d cores, %d CPUs %s}", c.Name, c.Rank, c.Cores, c.CPUs, FormatCPUList(t.CPUsOfRank(c.Rank)))
			got = append(got, s)
		}
		for _, c := range *w.Classes {
			cs, err := ParseCPUList(c.CPUs)
			if err != nil {
				bad("classes: %q: %v", c.CPUs, err)
			}
			want = append(want, fmt.Sprintf("{%s rank %d: %d cores, %d CPUs %s}", c.Name, c.Rank, c.Cores, len(cs), FormatCPUList(cs)))
		}
		add("classes", strings.Join(got, " ")+"", strings.Join(want, " "))
		for k, c := range *w.Classes {
			if c.Part != "" && k < len(t.Classes) {
				add(fmt.Sprintf("classes[%d].part", k), t.Classes[k].Part, c.Part)
			}
		}
	}

	// NUMA
	if required("numa", w.NUMA != nil) {
		var got, want []string
		for _, n := range i.NUMA {
			got = append(got, fmt.Sprintf("node%d %s", n.ID, FormatCPUList(n.CPUs)))
		}
		for _, n := range *w.NUMA {
			cs, err := ParseCPUList(n.CPUs)
			if err != nil {
				bad("numa: %q: %v", n.CPUs, err)
			}
			want = append(want, fmt.Sprintf("node%d %s", n.ID, FormatCPUList(cs)))
		}
		add("numa", strings.Join(got, "; "), strings.Join(want, "; "))
		for k, n := range *w.NUMA {
			if n.Mem != "" && k < len(i.NUMA) {
				add(fmt.Sprintf("numa[%d].mem", k), formatSize(i.NUMA[k].MemBytes), canonSize(n.Mem, bad))
			}
		}
	}

	// caches
	if required("cache", w.Cache != nil) {
		c := w.Cache
		add("cache.l1d", formatSize(i.Cache.L1D), canonSize(c.L1D, bad))
		add("cache.l1i", formatSize(i.Cache.L1I), canonSize(c.L1I, bad))
		add("cache.l2", formatSize(i.Cache.L2), canonSize(c.L2, bad))
		add("cache.l3", formatSize(i.Cache.L3), canonSize(c.L3, bad))
		add("cache.l3_total", formatSize(i.Cache.L3Total), canonSize(c.L3Total, bad))
		add("cache.from", formatFrom(i.Cache.From), formatFrom(c.From))
	}

	// quota
	if required("quota", w.Quota != nil) {
		add("quota", strconv.FormatFloat(t.Quota, 'g', -1, 64), strconv.FormatFloat(*w.Quota, 'g', -1, 64))
	}
	if w.QuotaFrom != nil {
		add("quota_from", t.QuotaFrom, *w.QuotaFrom)
	}

	// threads and orders
	if required("default_threads", w.DefaultThreads != nil) {
		add("default_threads", fmt.Sprint(t.DefaultThreads()), fmt.Sprint(*w.DefaultThreads))
	}
	orders := []struct {
		name string
		want *string
		got  []int
	}{
		{"compact", nil, t.Order(false, false, -1)},
		{"spread", nil, t.Order(false, true, -1)},
		{"smt", nil, t.Order(true, false, -1)},
		{"pcores", nil, t.Order(false, false, 0)},
	}
	if required("orders", w.Orders != nil) {
		orders[0].want, orders[1].want, orders[2].want, orders[3].want = w.Orders.Compact, w.Orders.Spread, w.Orders.SMT, w.Orders.PCores
		for k, o := range orders {
			// every order, checked or not, places each usable CPU once (pcores
			// on a hybrid machine: each performance CPU)
			all := t.CPUs
			if k == 3 && t.Hybrid() {
				all = t.CPUsOfRank(0)
			}
			if s := slices.Sorted(slices.Values(o.got)); !slices.Equal(s, all) {
				bad("orders.%s does not place each of %s once: %s", o.name, FormatCPUList(all), formatOrder(o.got))
			}
			if o.want == nil {
				if k < 3 || t.Hybrid() {
					bad("expected.json lacks \"orders.%s\" (required%s)", o.name, map[bool]string{true: " on a hybrid machine", false: ""}[k == 3])
				}
				continue
			}
			want, err := parseOrder(*o.want)
			if err != nil {
				bad("orders.%s: %v", o.name, err)
				continue
			}
			if !slices.Equal(o.got, want) {
				add("orders."+o.name, formatOrder(o.got), formatOrder(want)+firstDiff(o.got, want))
			}
		}
	}

	// fingerprint
	if required("fingerprint", w.Fingerprint != nil) {
		fp := i.Fingerprint()
		re := regexp.MustCompile("^" + regexp.QuoteMeta(*w.Fingerprint) + "[0-9a-f]{8}$")
		if !re.MatchString(fp) {
			add("fingerprint", fp, *w.Fingerprint+"<8 hex digits>")
		}
	}

	// warnings: one to one
	if required("warnings", w.Warnings != nil) {
		for _, sub := range *w.Warnings {
			if !slices.ContainsFunc(i.Warnings, func(s string) bool { return strings.Contains(s, sub) }) {
				bad("warnings: none contains %q; got %q", sub, i.Warnings)
			}
		}
		for _, s := range i.Warnings {
			if !slices.ContainsFunc(*w.Warnings, func(sub string) bool { return strings.Contains(s, sub) }) {
				bad("warnings: unexpected %q", s)
			}
		}
	}

	// optional extras
	if w.Cores != nil {
		var got, want []string
		for _, k := range t.Cores {
			got = append(got, FormatCPUList(k.CPUs))
		}
		for _, s := range *w.Cores {
			cs, err := ParseCPUList(s)
			if err != nil {
				bad("cores: %q: %v", s, err)
			}
			want = append(want, FormatCPUList(cs))
		}
		add("cores", strings.Join(got, " "), strings.Join(want, " "))
	}
	if w.Parts != nil {
		got := map[string][]int{}
		for _, k := range t.Cores {
			got[k.Part] = append(got[k.Part], k.CPUs...)
		}
		gotM := map[string]string{}
		for p, cs := range got {
			gotM[p] = FormatCPUList(cs)
		}
		wantM := map[string]string{}
		for p, s := range w.Parts {
			cs, err := ParseCPUList(s)
			if err != nil {
				bad("parts: %q: %v", s, err)
			}
			wantM[p] = FormatCPUList(cs)
		}
		add("parts", formatFrom(gotM), formatFrom(wantM))
	}
	if w.Mem != nil {
		add("mem", formatSize(i.MemBytes), canonSize(*w.Mem, bad))
	}
	if w.NominalMHz != nil {
		add("nominal_mhz", strconv.FormatInt(i.NominalHz/1e6, 10), strconv.FormatInt(*w.NominalMHz, 10))
	}
	if w.SVEBits != nil {
		add("sve_bits", itoa(i.SVEBits), itoa(*w.SVEBits))
	}
	return diffs
}

// firstDiff says where two orders first part.
func firstDiff(got, want []int) string {
	for k := range min(len(got), len(want)) {
		if got[k] != want[k] {
			return fmt.Sprintf("\n      first difference at position %d: got %d, want %d", k, got[k], want[k])
		}
	}
	return fmt.Sprintf("\n      lengths differ: got %d CPUs, want %d", len(got), len(want))
}

// parseOrder reads an order: items "a", "a-b" and "a-b/s", in the order
// written.
func parseOrder(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		rangePart, stepPart, hasStep := strings.Cut(item, "/")
		lo, hi, isRange := strings.Cut(rangePart, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad order item %q in %q", item, s)
		}
		b, step := a, 1
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad order item %q in %q", item, s)
			}
		}
		if hasStep {
			if step, err = strconv.Atoi(stepPart); err != nil || step < 1 || !isRange || (b-a)%step != 0 {
				return nil, fmt.Errorf("bad order item %q in %q (a-b/s needs b-a a multiple of s)", item, s)
			}
		}
		for c := a; c <= b; c += step {
			out = append(out, c)
		}
	}
	return out, nil
}

// formatOrder writes an order in parseOrder's form, preferring runs of
// consecutive CPUs, then strided runs of three or more.
func formatOrder(cs []int) string {
	var parts []string
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1] == cs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cs[i], cs[j]))
			i = j + 1
			continue
		}
		if i+2 < len(cs) && cs[i+1]-cs[i] > 1 && cs[i+2]-cs[i+1] == cs[i+1]-cs[i] {
			d := cs[i+1] - cs[i]
			j = i + 1
			// extend while the stride holds and the next item does not
			// start a run of consecutive CPUs
			for j+1 < len(cs) && cs[j+1]-cs[j] == d && !(j+2 < len(cs) && cs[j+2] == cs[j+1]+1) {
				j++
			}
			if j-i >= 2 {
				parts = append(parts, fmt.Sprintf("%d-%d/%d", cs[i], cs[j], d))
				i = j + 1
				continue
			}
		}
		parts = append(parts, strconv.Itoa(cs[i]))
		i++
	}
	return strings.Join(parts, ",")
}

// canonSize turns an expected size ("48K", "2M", "0", "unknown") into
// formatSize's form; it reports a malformed one.
func canonSize(s string, bad func(string, ...any)) string {
	v, err := parseSize(s)
	if err != nil {
		bad("%v", err)
		return "?" + s
	}
	return formatSize(v)
}

// parseSize reads an expected size: sysfs's form (parseCacheSize), or
// "unknown".
func parseSize(s string) (int64, error) {
	if strings.TrimSpace(s) == "unknown" {
		return -1, nil
	}
	n, err := parseCacheSize(s)
	if err != nil {
		return 0, fmt.Errorf("%v (want e.g. 48K, 2M, 0 or unknown)", err)
	}
	return n, nil
}

func formatSize(v int64) string {
	switch {
	case v < 0:
		return "unknown"
	case v == 0:
		return "0"
	case v%(1<<30) == 0:
		return fmt.Sprintf("%dG", v>>30)
	case v%(1<<20) == 0:
		return fmt.Sprintf("%dM", v>>20)
	case v%(1<<10) == 0:
		return fmt.Sprintf("%dK", v>>10)
	}
	return strconv.FormatInt(v, 10)
}

func formatFrom(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, " ") + "}"
}

// TestOrderNotation pins the order notation the expected files use.
func TestOrderNotation(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []int
	}{
		{"0-14/2,16-31,1-15/2", append(append([]int{0, 2, 4, 6, 8, 10, 12, 14}, rangeInts(16, 31)...), 1, 3, 5, 7, 9, 11, 13, 15)},
		{"4-7,0-3", []int{4, 5, 6, 7, 0, 1, 2, 3}},
		{"0,32,1,33", []int{0, 32, 1, 33}},
		{"0-24/8,1-25/8", []int{0, 8, 16, 24, 1, 9, 17, 25}},
	} {
		got, err := parseOrder(c.s)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("parseOrder(%q) = %v, %v; want %v", c.s, got, err, c.want)
		}
		if back := formatOrder(c.want); back != c.s {
			t.Errorf("formatOrder(%v) = %q, want %q", c.want, back, c.s)
		}
	}
	for _, s := range []string{"", "a", "3-1", "0-5/2", "0/2"} {
		if _, err := parseOrder(s); err == nil {
			t.Errorf("parseOrder(%q) accepted", s)
		}
	}
}

func rangeInts(a, b int) []int {
	var out []int
	for c := a; c <= b; c++ {
		out = append(out, c)
	}
	return out
}
