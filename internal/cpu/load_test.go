package cpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/testexec"
)

func TestParseProcStat(t *testing.T) {
	text := "cpu  100 0 50 900 0 0 0 0 0 0\ncpu0 10 1 5 100 7 2 3 4 0 0\ncpu1 20 0 10 90 0 0 0 6 0 0\ncpu2 1000 0 0 0 0 0 0 0 0 0\nintr 1 2 3\n"
	busy, steal, err := parseProcStat(text, []int{0, 1})
	if err != nil || busy != (10+1+5+2+3+4)+(20+10+6) || steal != 10 {
		t.Errorf("busy %d steal %d err %v", busy, steal, err)
	}
	if _, _, err := parseProcStat(text, []int{7}); err == nil {
		t.Error("no line for CPU 7 accepted")
	}
	if _, _, err := parseProcStat("cpu0 1 2 x 4 5 6 7 8\n", []int{0}); err == nil {
		t.Error("garbage accepted")
	}
	if d := parseThrottled("nr_periods 5\nthrottled_usec 1500000\n"); d != 1500*time.Millisecond {
		t.Errorf("v2 throttled %v", d)
	}
	if d := parseThrottled("throttled_time 2000000000\n"); d != 2*time.Second {
		t.Errorf("v1 throttled %v", d)
	}
}

func TestBusynessWarning(t *testing.T) {
	t0 := Load{Wall: time.Unix(0, 0)}
	quiet := Load{Wall: time.Unix(10, 0), Busy: 20 * time.Second, Self: 19 * time.Second}
	if w := quiet.Since(t0).Warning(); w != "" {
		t.Errorf("quiet interval warned: %s", w)
	}
	busy := Load{Wall: time.Unix(10, 0), Busy: 20 * time.Second, Self: 10 * time.Second, Steal: 3 * time.Second}
	b := busy.Since(t0)
	if b.Others != 1 || !strings.Contains(b.Warning(), "1.00 CPUs") || !strings.Contains(b.Warning(), "steal") {
		t.Errorf("busy interval: %+v %q", b, b.Warning())
	}
	thr := Load{Wall: time.Unix(10, 0), Throttled: 2 * time.Second}
	if w := thr.Since(t0).Warning(); !strings.Contains(w, "throttled") {
		t.Errorf("throttled interval: %q", w)
	}
}

// TestSampleLoadSeesACompetitor runs a CPU-bound child process for a
// second and checks the samples around it count about one CPU of others'
// time (and that this process's own spinning does not count).
func TestSampleLoadSeesACompetitor(t *testing.T) {
	if os.Getenv("KTUNE_BURN") == "1" {
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
		}
		return
	}
	if runtime.GOOS != "linux" || testing.Short() {
		t.Skip("linux, not -short")
	}
	if Get().Usable < 2 {
		t.Skip("needs 2 usable CPUs (the child and this test)")
	}
	a, err := SampleLoad()
	if err != nil {
		t.Fatal(err)
	}
	cmd := testexec.Self("-test.run=^TestSampleLoadSeesACompetitor$")
	cmd.Env = append(os.Environ(), "KTUNE_BURN=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	b, _ := SampleLoad()
	got := b.Since(a)
	if got.Others < 0.5 || got.Warning() == "" {
		t.Errorf("a CPU-bound competitor for %.1f s: others %.2f CPUs, warning %q", got.Seconds, got.Others, got.Warning())
	}
	// this process spinning alone is not "others"
	a, _ = SampleLoad()
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	b, _ = SampleLoad()
	if got := b.Since(a); got.Others > 0.6 {
		t.Logf("own spin counted as others: %.2f CPUs (a busy machine?)", got.Others)
	}
}
