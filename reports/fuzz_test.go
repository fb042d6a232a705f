package reports

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// FuzzRegressInput feeds kprofile regress's input path (ParseBench, then
// Regress and its table) two arbitrary benchmark files: it must never
// panic or hang, each pair answering within a second and a bounded amount
// of memory. NaN values once sent the Mann–Whitney test into a loop that
// grew without bound.
func FuzzRegressInput(f *testing.F) {
	good := genFile(6, 1, 0.03, goHeader, base)
	slow := genFile(6, 2, 0.03, goHeader, scaled(base, 0, 1.3, 1/1.3))
	f.Add(good, slow)
	f.Add(good, good)
	f.Add("BenchmarkA-2 1 1 ns/op\nBenchmarkA-2 1 2 ns/op\n", "BenchmarkA-2 1 NaN ns/op\nBenchmarkA-2 1 1 ns/op\n")
	f.Add("BenchmarkA-2 1 10 GFLOP/s\n", "BenchmarkA-2 1 NaN GFLOP/s\nBenchmarkA-2 1 nan GFLOP/s\n")
	f.Add("BenchmarkA 1 5 ns/op\n", "BenchmarkA 1 +Inf ns/op\nBenchmarkA 1 -Inf ns/op\nBenchmarkA 1 0 ns/op\nBenchmarkA 1 -3 ns/op\n")
	f.Add("BenchmarkA 1 5 ns/op\n", "BenchmarkB 1 5 ns/op\n")
	f.Add("BenchmarkA 1 5 ns/op\n", "BenchmarkA 1 5 GFLOP/s\n")
	f.Add("Unit x assume=exact\nBenchmarkA 1 5 x\nBenchmarkA 1 5 x\n", "Unit x assume=exact\nBenchmarkA 1 6 x\nBenchmarkA 1 5 x\n")
	f.Add("pkg: a\nBenchmarkA 1 1e-300 ns/op\npkg: b\nBenchmarkA 1 1e300 ns/op\n", "Unit ns/op better=higher\nBenchmarkA 1 1e308 ns/op\nBenchmarkA 1 5e-324 ns/op\n")
	f.Add(strings.Repeat("BenchmarkA 1 1 ns/op\n", 200), strings.Repeat("BenchmarkA 1 1 ns/op\nBenchmarkA 1 2 ns/op\n", 100))
	f.Fuzz(func(t *testing.T, old, new string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		go func() {
			defer close(done)
			o, err := ParseBench(strings.NewReader(old), "old.txt")
			if err != nil {
				return
			}
			n, err := ParseBench(strings.NewReader(new), "new.txt")
			if err != nil {
				return
			}
			rep := Regress(o, n, DefaultRegressOptions)
			rep.Table()
			rep.Regressions()
			rep.Missing()
		}()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Fatalf("no answer within 1 s:\nold:\n%s\nnew:\n%s", old, new)
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20+uint64(1000*(len(old)+len(new))) {
			t.Fatalf("allocated %d MiB for %d bytes of input", grew>>20, len(old)+len(new))
		}
	})
}
