package krun

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/testexec"
)

// generateThreadCounts are the -t values of TestGenerateThreadCounts: 1…8
// and on to 2× the pool size on a larger machine (-short: 1…3 and the
// largest).
func generateThreadCounts() []int {
	hi := max(8, 2*pool.Default().Size())
	var out []int
	for th := 1; th <= hi; th++ {
		if !testing.Short() || th <= 3 || th == hi {
			out = append(out, th)
		}
	}
	return out
}

var threadsRe = regexp.MustCompile(`; (\d+) threads`)

// generateGolden runs `krun generate <tiny model folder> --dtype f32 --ids
// <golden prompt> -n <n> --ignore-eos -t th` for each batch row of each
// golden tiny model and returns an error unless the ids are the golden
// greedy ids and the speed report names the thread count that runs
// (min(th, pool size)). report, if set, sees the ids of each row.
func generateGolden(t *testing.T, th int, report func(key, ids string)) []error {
	t.Helper()
	var errs []error
	for _, g := range golden.Load(t, golden.TinyModel) {
		in, gen := g.I64(t, "input_ids"), g.I64(t, "generated_ids")
		B, T, n := g.Dims(t, "input_ids")[0], g.Dims(t, "input_ids")[1], g.Dims(t, "generated_ids")[1]
		for b := 0; b < B; b++ {
			stdout, stderr, err := run(t, "generate", g.Dir(), "--dtype", "f32", "--ids", joinIDs(in[b*T:(b+1)*T]), "-n", fmt.Sprint(n), "--ignore-eos", "-t", fmt.Sprint(th))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s row %d -t %d: %v\n%s", g.Name(), b, th, err, stderr))
				continue
			}
			got, want := strings.TrimSpace(stdout), joinIDs(gen[b*n:(b+1)*n])
			if report != nil {
				report(fmt.Sprintf("%s/%d/t=%d", g.Name(), b, th), got)
			}
			if got != want {
				errs = append(errs, fmt.Errorf("%s row %d -t %d: generated %s, golden greedy ids %s", g.Name(), b, th, got, want))
			}
			m := threadsRe.FindStringSubmatch(stderr)
			if runs := min(th, pool.Default().Size()); m == nil || m[1] != strconv.Itoa(runs) {
				errs = append(errs, fmt.Errorf("%s row %d -t %d: speed report %q, want %d threads (pool size %d)", g.Name(), b, th, strings.TrimSpace(stderr), runs, pool.Default().Size()))
			}
		}
	}
	return errs
}

// TestGenerateThreadCounts: krun generate of the golden prompt gives the
// golden greedy ids at -t 1…8 (and up to 2× the pool size), counts above
// the usable CPUs included.
func TestGenerateThreadCounts(t *testing.T) {
	t.Logf("pool size %d", pool.Default().Size())
	for _, th := range generateThreadCounts() {
		for _, err := range generateGolden(t, th, nil) {
			t.Error(err)
		}
	}
}

const generateChildEnv = "KTUNE_KRUN_THREADS_CHILD"

// TestGenerateTaskset runs this test binary again under `taskset -c` on
// one CPU: the child's pool has 1 thread, and its krun generate at -t 1
// and -t 2 gives the golden greedy ids.
func TestGenerateTaskset(t *testing.T) {
	if os.Getenv(generateChildEnv) == "1" {
		fmt.Printf("POOL %d\n", pool.Default().Size())
		for _, th := range []int{1, 2} {
			for _, err := range generateGolden(t, th, func(key, ids string) { fmt.Printf("IDS %s %s\n", key, ids) }) {
				t.Error(err)
			}
		}
		return
	}
	info := cpu.Get()
	if len(info.Topology.CPUs) < 2 || pool.Default().Size() < 2 {
		t.Skipf("%d usable CPUs (pool size %d): nothing to restrict", len(info.Topology.CPUs), pool.Default().Size())
	}
	one := info.Topology.CPUs[0] // CPU 0 where this process may use it
	cmd := testexec.Pinned(t, one, "-test.run=^TestGenerateTaskset$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), generateChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("taskset -c %d child: %v\n%s", one, err, out)
	}
	var pools, runs int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "POOL":
			pools++
			if f[1] != "1" {
				t.Errorf("taskset -c %d: the child's pool has %s threads, want 1", one, f[1])
			}
		case len(f) == 3 && f[0] == "IDS":
			runs++
		}
	}
	if pools != 1 || runs < 2 {
		t.Fatalf("the child reported %d pool sizes and %d runs:\n%s", pools, runs, out)
	}
	t.Logf("taskset -c %d child:\n%s", one, out)
}
