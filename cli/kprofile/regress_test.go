package kprofile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
)

func TestRegressFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want RegressOptions
	}{
		{[]string{"a", "b"}, RegressOptions{Old: "a", New: "b", Threshold: 0.05, Alpha: 0.05, Format: "text"}},
		{[]string{"--threshold", "10%", "--alpha", "0.01", "-o", "md", "a", "b"}, RegressOptions{Old: "a", New: "b", Threshold: 0.10, Alpha: 0.01, Format: "md"}},
		{[]string{"--threshold", "0.02", "a", "b"}, RegressOptions{Old: "a", New: "b", Threshold: 0.02, Alpha: 0.05, Format: "text"}},
		{[]string{"--allow-missing", "a", "b"}, RegressOptions{Old: "a", New: "b", Threshold: 0.05, Alpha: 0.05, Format: "text", AllowMissing: true}},
	} {
		var got *RegressOptions
		cmd := NewCmdRegress(&cli.Factory{}, func(o *RegressOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if *got != tc.want {
			t.Errorf("%v: got %+v, want %+v", tc.args, *got, tc.want)
		}
	}
	for _, args := range [][]string{{"a"}, {"a", "b", "c"}, {"--threshold", "5", "a", "b"}, {"--threshold", "x%", "a", "b"},
		{"--alpha", "2", "a", "b"}, {"--alpha", "NaN", "a", "b"}, {"-o", "xml", "a", "b"}} {
		cmd := NewCmdRegress(&cli.Factory{}, func(*RegressOptions) error { return nil })
		cli.FlagErrors(cmd)
		cmd.SetArgs(args)
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetOut(&bytes.Buffer{})
		// a usage error exits 2, never 1 (a regression found)
		if err := cmd.Execute(); cli.ExitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, cli.ExitCode(err))
		}
	}
}

// writeBench writes count runs of two benchmarks with ±3% seeded noise;
// slow scales the second one's time.
func writeBench(t *testing.T, name string, count int, seed uint64, slow float64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	j := func(v float64) float64 { return v * (1 + 0.03*(2*r.Float64()-1)) }
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/ktune/ktune/kernels/kda\n")
	for i := 0; i < count; i++ {
		fmt.Fprintf(&b, "BenchmarkKDA/op=decode/variant=avx512/threads=1-2\t1000\t%.0f ns/op\t%.2f GB/s\n", j(150e3), j(27))
		fmt.Fprintf(&b, "BenchmarkKDA/op=prefill/variant=avx512/threads=1-2\t10\t%.0f ns/op\n", j(60e6*slow))
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegressExitCodes(t *testing.T) {
	old := writeBench(t, "old.txt", 10, 1, 1)
	same := writeBench(t, "same.txt", 10, 2, 1)
	slow := writeBench(t, "slow.txt", 10, 3, 1.2)

	out, errs, code := runKprofile("regress", old, same)
	if code != 0 {
		t.Errorf("same distribution: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "no regression") {
		t.Errorf("output:\n%s", out)
	}

	out, errs, code = runKprofile("regress", old, slow)
	if code != 1 {
		t.Errorf("planted 20%% slowdown: exit %d\n%s%s", code, out, errs)
	}
	name := "KDA/op=prefill/variant=avx512/threads=1-2"
	if !strings.Contains(out, "REGRESSION: "+name) || !strings.Contains(errs, name) {
		t.Errorf("regression not named:\n%s\n%s", out, errs)
	}
	if strings.Contains(errs, "op=decode") {
		t.Errorf("unchanged benchmark named:\n%s", errs)
	}

	out, _, code = runKprofile("regress", "-o", "md", "--threshold", "25%", old, slow)
	if code != 0 || !strings.Contains(out, "| KDA/op=prefill") {
		t.Errorf("md at 25%%: exit %d\n%s", code, out)
	}

	few := writeBench(t, "few.txt", 3, 4, 1.2)
	_, errs, code = runKprofile("regress", writeBench(t, "few-old.txt", 3, 5, 1), few)
	if code != 0 || !strings.Contains(errs, "too few samples") {
		t.Errorf("3 runs per side: exit %d, stderr %q", code, errs)
	}

	_, errs, code = runKprofile("regress", old, filepath.Join(t.TempDir(), "nope.txt"))
	if code != 2 || !strings.Contains(errs, "nope.txt") {
		t.Errorf("missing file: exit %d: %s", code, errs)
	}
	notBench := filepath.Join(t.TempDir(), "profile.json")
	os.WriteFile(notBench, []byte(`{"schema":1}`), 0o644)
	_, errs, code = runKprofile("regress", notBench, old)
	if code != 2 || !strings.Contains(errs, "no benchmark results") {
		t.Errorf("not a benchmark file: exit %d: %s", code, errs)
	}
}

func runKprofile(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return out.String(), errb.String(), code
}
