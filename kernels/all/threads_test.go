package all_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/quant"
	"github.com/ktune/ktune/internal/testexec"
	_ "github.com/ktune/ktune/kernels/all"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// threadShapes are the awkward shapes every op is run at by
// TestThreadCountIdentity: partial panels, strips, chunks and key blocks,
// and enough independent work items (panels, heads, experts) that every
// thread count up to a few splits the work differently, yet small enough
// that the whole sweep takes seconds (and -race -short well under a
// minute). An op missing here fails the test: add shapes for it.
var threadShapes = map[string][][]int{
	// m, n, k: n of 21 panels (4 chunks at the default grain of 4, the
	// last panel partial); k not a multiple of the quantization group
	"gemm.gemv":   {{1, 333, 100}, {5, 200, 64}},
	"gemm.gemm":   {{13, 333, 100}, {37, 130, 300}}, // k 300 > the default K block
	"gemm.gateup": {{1, 333, 100}, {20, 150, 72}},
	// b, h, dk, dv: 9 and 10 (sequence, head) items; odd widths
	"kda.decode": {{3, 3, 32, 48}, {2, 5, 17, 33}},
	// b, t, h, dk, dv: T past one chunk with a tail
	"kda.prefill": {{2, 37, 3, 32, 48}, {1, 70, 4, 64, 64}},
	// b, c, nh, r, dr: a context of several key blocks; r+dr = 576 takes
	// the assembly paths
	"mla.decode": {{3, 77, 2, 40, 8}, {2, 150, 4, 512, 64}},
	// t, p, nh, dn, dr, dv, r
	"mla.prefill": {{19, 5, 3, 16, 8, 24, 32}, {40, 0, 5, 32, 16, 32, 64}},
	// n, e, k, c, i: one token (experts spread over threads), a few
	// tokens (several small experts), many tokens on few experts (each
	// expert row-parallel on all threads)
	"moe.block": {{1, 8, 2, 40, 24}, {13, 8, 2, 72, 40}, {25, 4, 2, 96, 136}},
	// m, n
	"norm.rmsnorm": {{7, 100}, {1, 2304}},
}

// threadCounts are the counts the identity is checked at: 1 … 2× the
// default pool's size (at least 4, so that counts above the pool size are
// always among them, even on a 1-CPU pool); with -short, 1…4 plus the pool
// size's neighbours and twice it.
func threadCounts() []int {
	size := pool.Default().Size()
	hi := max(4, 2*size)
	var out []int
	for th := 1; th <= hi; th++ {
		if !testing.Short() || th <= 4 || th == size-1 || th == size || th == size+1 || th == hi {
			out = append(out, th)
		}
	}
	return out
}

// sameBits reports the first index where got differs from want in its
// float32 bits, or holds a NaN (a NaN anywhere is a failure, even where
// both hold one), as an error; nil when the two are bit-identical and
// NaN-free.
func sameBits(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("output length %d, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g != g || w != w {
			return fmt.Errorf("NaN at %d (got %v, 1 thread %v)", i, g, w)
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			return fmt.Errorf("at %d: %v (%#08x), 1 thread %v (%#08x)", i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
	return nil
}

// instantiateFn prepares an instance of the variant under test for a
// thread count (a test wraps it to plant a thread-dependent result).
type instantiateFn func(v *kernel.Variant, p kernel.Problem, cfg kernel.Config) (kernel.Instance, error)

func instantiate(v *kernel.Variant, p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
	return v.Instantiate(p, cfg)
}

// checkThreads runs v on p with the parameters of its default
// configuration at each thread count and returns an error for the first
// count whose output is not bit-identical to the 1-thread output (or that
// holds a NaN, or fails to instantiate). counts start at 1: the 1-thread
// run is repeated first, so that run-to-run nondeterminism is not blamed
// on a thread count.
func checkThreads(v *kernel.Variant, p kernel.Problem, counts []int, inst instantiateFn) error {
	s := p.Shape()
	params := v.DefaultConfig(s, 1).Params
	run := func(th int) ([]float32, error) {
		in, err := inst(v, p, kernel.Config{Threads: th, Params: params.Clone()})
		if err != nil {
			return nil, err
		}
		p.Reset()
		in.Run()
		return slices.Clone(p.Output()), nil
	}
	want, err := run(1)
	if err != nil {
		return err
	}
	if len(want) == 0 {
		return fmt.Errorf("empty output")
	}
	for _, th := range counts {
		if th > 1 && !v.Threaded {
			break
		}
		got, err := run(th)
		if err != nil {
			return fmt.Errorf("threads=%d: %v", th, err)
		}
		if err := sameBits(got, want); err != nil {
			return fmt.Errorf("threads=%d (pool size %d, params %v): output differs from 1 thread: %v", th, pool.Default().Size(), params, err)
		}
	}
	return nil
}

// TestThreadCountIdentity: every variant of every registered op that this
// CPU runs gives bit-identical results at every thread count from 1 to 2×
// the pool size, at fixed parameters (its default configuration), for
// every dtype it serves, at the shapes of threadShapes. Counts above the
// pool size run on the pool's threads and must not lose or repeat work;
// counts within it must not change the arithmetic (a reduction split by
// the thread count, for example). Single-threaded variants are checked
// for run-to-run identity only. An op without shapes here, or one whose
// threaded variants none ran, fails.
func TestThreadCountIdentity(t *testing.T) {
	counts := threadCounts()
	t.Logf("pool size %d, thread counts %v", pool.Default().Size(), counts)
	ops := kernel.Ops()
	if len(ops) == 0 {
		t.Fatal("no ops registered")
	}
	for _, op := range ops {
		t.Run(op.Name, func(t *testing.T) {
			dims, ok := threadShapes[op.Name]
			if !ok {
				t.Fatalf("%s has no shapes in threadShapes (keys %v): add some", op.Name, op.ShapeKeys)
			}
			var shapes []kernel.Shape
			for _, d := range dims {
				s := kernel.MakeShape(op.ShapeKeys, d...)
				if err := op.Check(s); err != nil {
					t.Fatal(err)
				}
				shapes = append(shapes, s)
			}
			threaded, ran, elsewhere := 0, 0, 0
			for _, v := range kernel.Variants(op.Name) {
				if v.Threaded {
					threaded++
					if v.Available() && kerneltest.RepeatUnderEmulation(v) {
						elsewhere++ // tested in another qemu model
					}
				}
			}
			kerneltest.ForEachVariant(t, op.Name, func(t *testing.T, v *kernel.Variant) {
				if v.Reference {
					t.Skip("the reference runs on one thread and is never dispatched")
				}
				if v.Threaded {
					ran++
				}
				for _, dt := range v.DTypes {
					if !op.Serves(dt) {
						continue
					}
					for si, s := range shapes {
						s = ggufShape(op, s, dt)
						p, err := op.NewProblem(s, dt, uint64(si+1))
						if err != nil {
							t.Fatalf("%s dtype=%s: %v", s, dt, err)
						}
						if err := checkThreads(v, p, counts, instantiate); err != nil {
							t.Errorf("%s at %s dtype=%s: %v", v.ID(), s, dt, err)
						}
					}
				}
			})
			switch {
			case threaded == 0:
				t.Logf("%s has no threaded variant: run-to-run identity only", op.Name)
			case ran == 0 && elsewhere > 0:
				t.Logf("%s: its threaded variants run in another qemu model (kerneltest.RepeatUnderEmulation)", op.Name)
			case ran == 0:
				t.Errorf("%s: none of its %d threaded variants ran on this CPU", op.Name, threaded)
			}
		})
	}
}

// plantedInstance wraps a real instance and changes its output with the
// thread count, the way a kernel with a thread-dependent split would.
type plantedInstance struct {
	in   kernel.Instance
	p    kernel.Problem
	mode string
	th   int
}

func (pi *plantedInstance) Run() {
	pi.in.Run()
	out := pi.p.Output()
	switch pi.mode {
	case "reduction": // a partial-sum split that follows the thread count: the last bit moves
		if n := pool.Default().Threads(pi.th); n > 1 {
			out[len(out)/2] = math.Float32frombits(math.Float32bits(out[len(out)/2]) ^ 1)
		}
	case "lost": // the old Pool.For bug: ranges split by the requested count, the ones past the pool lost
		if pi.th > pool.Default().Size() {
			lost := len(out) * (pi.th - pool.Default().Size()) / pi.th
			clear(out[len(out)-lost:])
		}
	case "nan": // a NaN at every thread count: identical, and still a failure
		out[0] = float32(math.NaN())
	}
}

// TestThreadCountIdentityDetects is the mutation check of
// TestThreadCountIdentity: the same check on a real threaded variant whose
// output is perturbed with the thread count (a reduction split by it, or
// the work above the pool size lost) or holds a NaN must fail, and the
// unperturbed variant must pass.
func TestThreadCountIdentityDetects(t *testing.T) {
	op := kernel.LookupOp("gemm.gemv")
	v, err := kernel.Lookup("gemm.gemv/generic")
	if op == nil || err != nil {
		t.Fatalf("gemm.gemv/generic: %v", err)
	}
	counts := threadCounts()
	for _, c := range []struct {
		mode   string
		detect bool
	}{
		{"", false},
		{"reduction", pool.Default().Size() > 1}, // on a 1-thread pool no split exists to differ
		{"lost", true},
		{"nan", true},
	} {
		t.Run(fmt.Sprintf("mode=%q", c.mode), func(t *testing.T) {
			p, err := op.NewProblem(kernel.MakeShape(op.ShapeKeys, threadShapes[op.Name][0]...), kernel.F32, 1)
			if err != nil {
				t.Fatal(err)
			}
			err = checkThreads(v, p, counts, func(v *kernel.Variant, p kernel.Problem, cfg kernel.Config) (kernel.Instance, error) {
				in, err := v.Instantiate(p, cfg)
				if err != nil {
					return nil, err
				}
				return &plantedInstance{in: in, p: p, mode: c.mode, th: cfg.Threads}, nil
			})
			t.Logf("check: %v", err)
			if (err != nil) != c.detect {
				t.Errorf("planted %q: check error %v, want an error: %v", c.mode, err, c.detect)
			}
		})
	}
}

// TestThreadCountIdentityLargePool runs TestThreadCountIdentity again in a
// child whose default pool has 7 workers (KTUNE_TEST_POOL_SIZE; the
// workers past the CPUs park), so that splits over 3 to 7 workers are
// checked on a 2-CPU machine too.
func TestThreadCountIdentityLargePool(t *testing.T) {
	if os.Getenv("KTUNE_TEST_POOL_SIZE") != "" || pool.Default().Size() >= 7 {
		t.Skip("already a large pool")
	}
	if testing.Short() && (raceOn || os.Getenv("KTUNE_TEST_EXEC") != "") {
		// the splits over more workers than CPUs are the same Go code on
		// every architecture, checked natively by the test stage; under the
		// race detector or an emulator this re-run was half of CI's race
		// and qemu stages, and the identity itself still runs here
		t.Skip("-short under the race detector or an emulator: the native test stage runs it")
	}
	args := []string{"-test.run=^TestThreadCountIdentity$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := testexec.Self(args...)
	cmd.Env = append(os.Environ(), "KTUNE_TEST_POOL_SIZE=7")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with a pool of 7: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") || !strings.Contains(string(out), "pool size 7,") {
		t.Fatalf("child did not pass with a pool of 7:\n%s", out)
	}
}

// ggufRowKeys are the shape keys that are a weight row's length, per op
// family (gemm's k; the MoE block's hidden c and expert width i).
var ggufRowKeys = map[string][]string{"gemm": {"k"}, "moe": {"c", "i"}}

// ggufShape rounds the row lengths up to whole ggml blocks for a GGUF
// format (a row of one is whole blocks of 32 or 256 values); other shapes
// stay.
func ggufShape(op *kernel.Op, s kernel.Shape, dt kernel.DType) kernel.Shape {
	t, ok := quant.GGUFType(dt)
	if !ok {
		return s
	}
	for _, k := range ggufRowKeys[op.Family()] {
		bs := t.BlockSize()
		s = s.With(k, (s.Get(k)+bs-1)/bs*bs)
	}
	return s
}
