package model

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/testexec"
)

// threadFormats are the weight formats the thread-count identity is
// checked on: f32 (whose greedy ids are the golden ones, as
// TestTinyModelF32 asserts), BF16, and TestQuantized's Q8 and Q4, all with
// the K formats' q4k, all with
// the default accuracy classes (int8 activations where a variant has
// them).
var threadFormats = []struct {
	name      string
	opt       LoadOptions
	goldenIDs bool // the greedy ids must be the golden ones
}{
	{"f32", LoadOptions{}, true},
	{"bf16", LoadOptions{Formats: Formats{DType: kernel.BF16}}, false},
	{"q8", LoadOptions{Formats: Formats{DType: kernel.Q8}}, false},
	{"q4", LoadOptions{Formats: Formats{DType: kernel.Q4}}, false},
	{"q4k", LoadOptions{Formats: Formats{DType: kernel.Q4K}}, false},
}

// modelThreadCounts are 1 … 2× the pool size (at least 4, so that counts
// above the pool size are always among them).
func modelThreadCounts() []int {
	var out []int
	for th := 1; th <= max(4, 2*pool.Default().Size()); th++ {
		out = append(out, th)
	}
	return out
}

// threadResult is one golden run (prefill of the prompt with every
// position's logits, then the golden ids decoded one at a time) of every
// batch row: the logits and the greedy ids they give.
type threadResult struct {
	logits []float32 // per row: prompt logits [T, V], then decode logits [n, V]
	ids    [][]int32 // per row: the greedy ids
}

func runThreadResult(t *testing.T, m *Model, c *tinyCase) threadResult {
	t.Helper()
	var r threadResult
	for b := 0; b < c.B; b++ {
		o := runGolden(t, m, c, b)
		r.logits = append(append(r.logits, o.logits...), o.decode...)
		ids := []int32{int32(argmax(o.logits[(c.T-1)*c.V:]))}
		for i := 0; i+1 < c.nDecode; i++ {
			ids = append(ids, int32(argmax(o.decode[i*c.V:(i+1)*c.V])))
		}
		r.ids = append(r.ids, ids)
	}
	return r
}

// digest is a hash of the logits' bits and the ids (what a child process
// reports).
func (r threadResult) digest() string {
	h := sha256.New()
	var b [4]byte
	for _, x := range r.logits {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	fmt.Fprint(h, r.ids)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// diffBits returns an error at the first logit whose bits differ from
// want's, or that is NaN (a NaN anywhere fails), and when the ids differ.
func (r threadResult) diffBits(want threadResult) error {
	if len(r.logits) != len(want.logits) {
		return fmt.Errorf("%d logits, want %d", len(r.logits), len(want.logits))
	}
	for i, g := range r.logits {
		w := want.logits[i]
		if g != g || w != w {
			return fmt.Errorf("NaN logit at %d (%v, 1 thread %v)", i, g, w)
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			return fmt.Errorf("logit %d is %v (%#08x), at 1 thread %v (%#08x)", i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
	if fmt.Sprint(r.ids) != fmt.Sprint(want.ids) {
		return fmt.Errorf("greedy ids %v, at 1 thread %v", r.ids, want.ids)
	}
	return nil
}

// setThreads sets the model's thread count: through SetThreads (clamped to
// the pool), or, unclamped, straight into the options, so that counts
// above the pool size reach the kernels (which must then run them on the
// pool's threads without losing work: the bug behind this test).
func setThreads(t *testing.T, m *Model, th int, unclamped bool) {
	t.Helper()
	if unclamped {
		m.opt.Threads = th
		return
	}
	m.SetThreads(th)
	if got, want := m.Options().Threads, min(th, pool.Default().Size()); got != want {
		t.Fatalf("SetThreads(%d): Options().Threads = %d, want %d (pool size %d)", th, got, want, pool.Default().Size())
	}
}

// TestThreadCountIdentity: the whole tiny model (prefill of the golden
// prompt with every position's logits, then decode) gives bit-identical
// logits and greedy ids at every thread count from 1 to 2× the pool size,
// in f32, BF16, Q8 and Q4 (default accuracy classes): through SetThreads
// (clamped to the pool), with the count handed to the kernels unclamped,
// and loaded with LoadOptions.Threads set to it (the weight conversion on
// that many threads, as krun -t does); in f32 the greedy ids are the
// golden ones.
//
// The engine runs every kernel on pool.Default(), sized by the usable
// CPUs; TestThreadCountTaskset adds a 1-CPU pool and
// TestThreadCountLargePool a pool of 5 workers on this machine's CPUs.
func TestThreadCountIdentity(t *testing.T) {
	counts := modelThreadCounts()
	t.Logf("pool size %d, thread counts %v", pool.Default().Size(), counts)
	for _, c := range loadTiny(t) {
		for _, f := range threadFormats {
			t.Run(c.f.Name()+"/"+f.name, func(t *testing.T) {
				m := mustLoad(t, c.f.Dir(), f.opt)
				setThreads(t, m, 1, false)
				want := runThreadResult(t, m, c)
				if f.goldenIDs {
					for b := range want.ids {
						if fmt.Sprint(want.ids[b]) != fmt.Sprint(c.gen[b]) {
							t.Errorf("row %d: greedy ids %v at 1 thread, golden %v", b, want.ids[b], c.gen[b])
						}
					}
				}
				for _, unclamped := range []bool{false, true} {
					for _, th := range counts {
						setThreads(t, m, th, unclamped)
						if err := runThreadResult(t, m, c).diffBits(want); err != nil {
							t.Errorf("threads=%d (unclamped %v, pool size %d): %v", th, unclamped, pool.Default().Size(), err)
						}
					}
				}
				// loaded at the count, as krun -t does: the conversion
				// runs on that many threads too
				for _, th := range counts {
					opt := f.opt
					opt.Threads = th
					ml := mustLoad(t, c.f.Dir(), opt)
					if got, want := ml.Options().Threads, min(th, pool.Default().Size()); got != want {
						t.Errorf("LoadOptions.Threads %d: Options().Threads = %d, want %d", th, got, want)
					}
					if err := runThreadResult(t, ml, c).diffBits(want); err != nil {
						t.Errorf("loaded at threads=%d (pool size %d): %v", th, pool.Default().Size(), err)
					}
					ml.Close()
				}
			})
		}
	}
}

// threadsChildEnv makes TestThreadCountTaskset the child: report its pool
// size and the digests of its runs.
const threadsChildEnv = "KTUNE_THREADS_CHILD"

// tasksetCounts are the thread counts the taskset child runs, as -t 1 and
// -t 2 of the issue.
var tasksetCounts = []int{1, 2}

// TestThreadCountTaskset runs this test binary again under `taskset -c`
// on one CPU: the child must see a pool of 1 thread and give, at 1 and 2
// threads (through SetThreads and unclamped), exactly the logits and ids
// this process gives at 1 thread, in every format of threadFormats.
func TestThreadCountTaskset(t *testing.T) {
	if os.Getenv(threadsChildEnv) == "1" {
		threadsChild(t)
		return
	}
	info := cpu.Get()
	if len(info.Topology.CPUs) < 2 || pool.Default().Size() < 2 {
		t.Skipf("%d usable CPUs (pool size %d): nothing to restrict", len(info.Topology.CPUs), pool.Default().Size())
	}
	one := info.Topology.CPUs[0] // CPU 0 where this process may use it
	cmd := testexec.Pinned(t, one, "-test.run=^TestThreadCountTaskset$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), threadsChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("taskset -c %d child: %v\n%s", one, err, out)
	}
	got := map[string]string{} // "case/format/mode/t=N" → digest
	sawPool := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "POOL":
			sawPool = true
			if f[1] != "1" {
				t.Errorf("taskset -c %d: the child's pool has %s threads, want 1", one, f[1])
			}
		case len(f) == 3 && f[0] == "DIGEST":
			got[f[1]] = f[2]
		}
	}
	if !sawPool || len(got) == 0 {
		t.Fatalf("the child reported no pool size or no results:\n%s", out)
	}
	for _, c := range loadTiny(t) {
		for _, f := range threadFormats {
			m := mustLoad(t, c.f.Dir(), f.opt)
			m.SetThreads(1)
			want := runThreadResult(t, m, c).digest()
			for _, mode := range []string{"clamped", "unclamped"} {
				for _, th := range tasksetCounts {
					key := fmt.Sprintf("%s/%s/%s/t=%d", c.f.Name(), f.name, mode, th)
					switch d, ok := got[key]; {
					case !ok:
						t.Errorf("%s: no result from the child:\n%s", key, out)
					case d != want:
						t.Errorf("%s under taskset -c %d: digest %s, this process at 1 thread (pool size %d) %s", key, one, d, pool.Default().Size(), want)
					}
				}
			}
		}
	}
}

// threadsChild is TestThreadCountTaskset's child: it prints its pool size
// and one digest per case, format, mode and thread count.
func threadsChild(t *testing.T) {
	fmt.Printf("POOL %d\n", pool.Default().Size())
	for _, c := range loadTiny(t) {
		for _, f := range threadFormats {
			m := mustLoad(t, c.f.Dir(), f.opt)
			for _, unclamped := range []bool{false, true} {
				mode := "clamped"
				if unclamped {
					mode = "unclamped"
				}
				for _, th := range tasksetCounts {
					setThreads(t, m, th, unclamped)
					fmt.Printf("DIGEST %s/%s/%s/t=%d %s\n", c.f.Name(), f.name, mode, th, runThreadResult(t, m, c).digest())
				}
			}
		}
	}
}

// TestThreadCountLargePool runs TestThreadCountIdentity again in a child
// whose default pool has 5 workers (KTUNE_TEST_POOL_SIZE; the workers past
// the CPUs park), so the engine's splits over 3 to 5 workers are checked on
// a 2-CPU machine too.
func TestThreadCountLargePool(t *testing.T) {
	if os.Getenv("KTUNE_TEST_POOL_SIZE") != "" || pool.Default().Size() >= 5 {
		t.Skip("already a large pool")
	}
	args := []string{"-test.run=^TestThreadCountIdentity$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := testexec.Self(args...)
	cmd.Env = append(os.Environ(), "KTUNE_TEST_POOL_SIZE=5")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with a pool of 5: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") || !strings.Contains(string(out), "pool size 5,") {
		t.Fatalf("child did not pass with a pool of 5:\n%s", out)
	}
}

// TestLongPromptThreadIdentity: a prompt long enough that the row-wise
// steps between the matmuls (embedding, norms, residual adds) split over
// several workers, the MoE block's adaptive crossover matters and a second
// pass runs over a cached prefix (MLA's absorbed form), gives bit-identical
// logits at 1, 2, 3 and 7 threads (unclamped), in Q8, Q4, q4k and q6k with the
// default accuracy classes.
func TestLongPromptThreadIdentity(t *testing.T) {
	cfg, err := arch.Load(tinyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int32, 90)
	for i := range ids {
		ids[i] = int32((i*37 + 11) % cfg.VocabSize)
	}
	for _, dt := range []kernel.DType{kernel.Q8, kernel.Q4, kernel.Q4K, kernel.Q6K} {
		m, err := Random(cfg, LoadOptions{Formats: Formats{DType: dt}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		run := func(th int) []float32 {
			setThreads(t, m, th, true)
			st := m.NewState(0)
			defer st.Close()
			a, err := m.PrefillWith(st, ids[:70], PrefillOptions{AllLogits: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.PrefillWith(st, ids[70:], PrefillOptions{AllLogits: true}) // prefix 70 ≥ 20 new: absorbed
			if err != nil {
				t.Fatal(err)
			}
			return append(append([]float32(nil), a...), b...)
		}
		want := run(1)
		for _, th := range []int{2, 3, 7} {
			got := run(th)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s threads=%d: logit %d = %v, at 1 thread %v", dt, th, i, got[i], want[i])
				}
			}
		}
	}
}
