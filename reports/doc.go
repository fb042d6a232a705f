// Package reports turns benchmark files and plain performance figures into
// verdicts, tables and pages for kprofile; it knows nothing of the model
// and takes the tuning profile's figures as plain structs.
//
//   - Regression checks: [ParseBench] / [ReadBenchFile] read the Go
//     benchmark format with golang.org/x/perf/benchfmt; [Regress] compares
//     two files benchstat-style with golang.org/x/perf/benchmath (median,
//     confidence interval, Mann–Whitney U test) and gives each benchmark
//     and unit a [Verdict] that follows the unit's better direction
//     ([Better]).
//   - Pages: [HTML] writes a self-contained [Report] (tables and inline
//     SVG, no scripts, no external resources); [BarFigure] and
//     [RooflineFigure] draw with gonum.org/v1/plot; [SideBySide] and
//     [Geomean] lay out machines for kprofile compare.
//
// # Gating CI on benchmarks (kprofile regress)
//
// Absolute figures drift 10–20% between runs on shared machines
// (docs/performance.md), more than most regressions, so the recipe is
// built around measuring old and new together:
//
//  1. Baseline. Prefer measuring the baseline in the same job, on the same
//     machine: build the test binaries of the merge base and of the
//     candidate. A committed baseline file (or one kept as a CI artifact
//     of the main branch) is the cheaper alternative; refresh it on
//     purpose when a change is accepted, record it on the CI machine
//     class, and expect to need a larger --threshold with it.
//  2. Runs. Use -count 10 or more: the U test cannot reach significance
//     at α = 0.05 with fewer than 4 runs per side (kprofile then reports
//     "too few samples" and does not fail), and 10 runs give medians with
//     confidence intervals of a few percent. Fix -benchtime so both sides
//     do the same work.
//  3. Interleave. Alternate old and new, one run of each per round, so
//     frequency drift, thermal state and noisy neighbours hit both alike
//     (the script below). kprofile bench will write the same format for
//     a profile's choices.
//  4. Noisy machines. Medians and the U test shrug off outliers, but a
//     busy machine still shifts whole runs: keep the default 5% threshold
//     or raise it (--threshold 10%) on shared VMs, lower --alpha (0.01) to
//     cut false alarms when many benchmarks are checked at once, pin the
//     thread count the benchmark names (threads=N), and rerun a failing
//     job once before believing a regression that the other units (GB/s
//     next to sec/op) do not confirm.
//  5. Keep old.txt and new.txt as artifacts, and put
//     `kprofile regress -o md old.txt new.txt` in the job summary.
//
// The script, for one package (add packages, or run several test
// binaries in each round):
//
//	git worktree add /tmp/base origin/main
//	(cd /tmp/base && go test -c -o /tmp/old.test ./kernels/gemm)
//	go test -c -o /tmp/new.test ./kernels/gemm
//	for i in $(seq 10); do
//		/tmp/old.test -test.run '^$' -test.bench . -test.count 1 -test.benchtime 1s >> old.txt
//		/tmp/new.test -test.run '^$' -test.bench . -test.count 1 -test.benchtime 1s >> new.txt
//	done
//	kprofile regress old.txt new.txt   # exit 1 names each regression, 2 means unreadable input
//
// A regression is a change that is significant (p <= α) and worse by more
// than the threshold in the unit's own terms: sec/op up by more than 5%,
// or GFLOP/s down by more than 5%. Units are told apart by "Unit X
// better=higher|lower" lines, then benchfmt's defaults (sec/op, B/op,
// allocs/op lower; B/s higher), then by suffix (…/s a rate, …/op a cost);
// a unit of unknown direction is shown but never fails the check.
package reports
