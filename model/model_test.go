package model

import (
	"fmt"
	"maps"
	"math"
	"sync"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// Tolerances of the golden README (§5, float32 implementations).
const (
	tolLogits = 1e-3 // logits, decode_logits
	tolHidden = 1e-3 // dbg.hidden_states
	// tolPaths bounds the difference between two of our own f32 paths over
	// the same weights (chunked vs recurrent KDA, prefill vs absorbed MLA).
	tolPaths = 1e-4
	// tolQuantPipeline bounds the relative RMS between the engine on packed
	// Q8/Q4 weights (f32-class kernels) and on the same weights dequantized
	// to f32: only summation order differs.
	tolQuantPipeline = 1e-5
)

// tinyCase is one golden tiny_model file: its checkpoint folder and data.
type tinyCase struct {
	f              *golden.File
	B, T, L, C, V  int
	ids            [][]int32 // [B][T] prompt
	gen            [][]int32 // [B][n] greedy ids
	logits, decode []float32 // [B,T,V], [B,n,V]
	hidden         []float32 // [L+1,B,T,C]
	nDecode        int
}

func loadTiny(t *testing.T) []*tinyCase {
	t.Helper()
	var out []*tinyCase
	for _, f := range golden.Load(t, golden.TinyModel) {
		c := &tinyCase{f: f}
		d := f.Dims(t, "logits")
		c.B, c.T, c.V = d[0], d[1], d[2]
		hd := f.Dims(t, "dbg.hidden_states")
		c.L, c.C = hd[0]-1, hd[3]
		c.nDecode = f.Dims(t, "generated_ids")[1]
		in, gen := f.I64(t, "input_ids"), f.I64(t, "generated_ids")
		for b := 0; b < c.B; b++ {
			c.ids = append(c.ids, toI32(in[b*c.T:(b+1)*c.T]))
			c.gen = append(c.gen, toI32(gen[b*c.nDecode:(b+1)*c.nDecode]))
		}
		c.logits, c.decode, c.hidden = f.F32(t, "logits"), f.F32(t, "decode_logits"), f.F32(t, "dbg.hidden_states")
		out = append(out, c)
	}
	return out
}

func toI32(v []int64) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func mustLoad(t testing.TB, dir string, opt LoadOptions) *Model {
	t.Helper()
	m, err := Load(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// run is the golden protocol on m for batch row b: prefill the prompt (all
// logits, hidden states), then decode the greedy ids one at a time.
type runOut struct {
	logits []float32   // [T, V]
	hidden [][]float32 // [L+1][T·C]
	decode []float32   // [n, V]
}

func runGolden(t *testing.T, m *Model, c *tinyCase, b int) runOut {
	t.Helper()
	r := runOut{hidden: make([][]float32, c.L+1)}
	st := m.NewState(0)
	var err error
	r.logits, err = m.PrefillWith(st, c.ids[b], PrefillOptions{AllLogits: true, Hidden: func(i, pos int, h []float32) {
		r.hidden[i] = append(r.hidden[i], h...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range c.gen[b] {
		lg, err := m.Decode([]*State{st}, []int32{id})
		if err != nil {
			t.Fatal(err)
		}
		r.decode = append(r.decode, lg[0]...)
	}
	return r
}

func TestTinyModelF32(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{})
			t.Log(m.Memory())
			if m.Shapes.Layers != c.L || m.Shapes.Hidden != c.C || m.Shapes.Vocab != c.V {
				t.Fatalf("config %d layers, hidden %d, vocab %d; golden data %d, %d, %d", m.Shapes.Layers, m.Shapes.Hidden, m.Shapes.Vocab, c.L, c.C, c.V)
			}
			for b := 0; b < c.B; b++ {
				r := runGolden(t, m, c, b)
				checkGoldenOut(t, c, b, r)
				for i := 0; i <= c.L; i++ {
					TC := c.T * c.C
					want := c.hidden[(i*c.B+b)*TC : (i*c.B+b+1)*TC]
					golden.Check(t, fmt.Sprintf("b%d hidden[%d]", b, i), r.hidden[i], want, tolHidden)
				}
			}
		})
	}
}

// TestBF16Lossless: the checkpoint is BF16, so BF16 packing is exact and
// the f32-class kernels must give the f32 results.
func TestTinyModelBF16(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.BF16}, Runtime: Runtime{Classes: []kernel.Class{kernel.ClassF32}}})
			r := runGolden(t, m, c, 0)
			golden.Check(t, "logits", r.logits, c.logits[:c.T*c.V], tolLogits)
			golden.Check(t, "decode_logits", r.decode, c.decode[:c.nDecode*c.V], tolLogits)
		})
	}
}

// TestPrefillThenDecode: a prompt fed as prefill + decode steps, or as
// prefill chunks, gives the logits of one prefill of the whole sequence.
func TestPrefillThenDecode(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{})
			seq := append(append([]int32{}, c.ids[0]...), c.gen[0]...) // prompt + greedy ids
			whole, err := m.PrefillWith(m.NewState(0), seq, PrefillOptions{AllLogits: true})
			if err != nil {
				t.Fatal(err)
			}
			V, N := c.V, len(seq)
			for _, split := range []int{1, c.T / 2, c.T} {
				st := m.NewState(0)
				lg, err := m.Prefill(st, seq[:split])
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, fmt.Sprintf("split %d prefill", split), lg, whole[(split-1)*V:split*V], tolPaths)
				for i := split; i < N; i++ {
					out, err := m.Decode([]*State{st}, seq[i:i+1])
					if err != nil {
						t.Fatal(err)
					}
					golden.Check(t, fmt.Sprintf("split %d decode %d", split, i), out[0], whole[i*V:(i+1)*V], tolPaths)
				}
				if st.Len() != N {
					t.Errorf("state holds %d tokens, want %d", st.Len(), N)
				}
			}
			// chunked prefill: passes of 5 tokens continuing the state
			mc := mustLoad(t, c.f.Dir(), LoadOptions{Runtime: Runtime{PrefillChunk: 5}})
			chunked, err := mc.PrefillWith(mc.NewState(0), seq, PrefillOptions{AllLogits: true})
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "chunk 5", chunked, whole, tolPaths)
		})
	}
}

// TestDecodeBatch: sequences of different lengths decoded as one batch give
// what each gives alone.
func TestDecodeBatch(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			m := mustLoad(t, c.f.Dir(), LoadOptions{})
			prompts := [][]int32{c.ids[0], c.ids[0][:c.T/2+1], c.ids[0][1:3]}
			var batch, alone []*State
			for _, p := range prompts {
				for _, set := range []*[]*State{&batch, &alone} {
					st := m.NewState(0)
					if _, err := m.Prefill(st, p); err != nil {
						t.Fatal(err)
					}
					*set = append(*set, st)
				}
			}
			for step := 0; step < 3; step++ {
				ids := make([]int32, len(prompts))
				for b := range ids {
					ids[b] = c.gen[0][(b+step)%c.nDecode]
				}
				got, err := m.Decode(batch, ids)
				if err != nil {
					t.Fatal(err)
				}
				for b := range prompts {
					want, err := m.Decode(alone[b:b+1], ids[b:b+1])
					if err != nil {
						t.Fatal(err)
					}
					golden.Check(t, fmt.Sprintf("step %d seq %d", step, b), got[b], want[0], tolPaths)
				}
			}
		})
	}
}

// TestQuantized: with f32-class kernels the engine on packed Q8/Q4 weights
// computes what the f32 engine computes on the same weights dequantized to
// f32 (relative RMS tolQuantPipeline; only the summation order differs), so
// the engine adds no error beyond the weight format. What the formats and
// the int8-activation class cost against the golden logits, with budgets,
// greedy ids and a mutation check, is TestAccuracy (accuracy_test.go).
func TestQuantized(t *testing.T) {
	for _, c := range loadTiny(t) {
		t.Run(c.f.Name(), func(t *testing.T) {
			for _, dt := range []kernel.DType{kernel.Q8, kernel.Q5, kernel.Q4, kernel.Q2, kernel.Q4K, kernel.Q3K} {
				t.Run(string(dt), func(t *testing.T) {
					cls := []kernel.Class{kernel.ClassF32}
					r := runGolden(t, mustLoad(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: dt}, Runtime: Runtime{Classes: cls}}), c, 0)
					fq := mustLoad(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: dt}, Runtime: Runtime{Classes: cls}})
					for _, p := range fq.matrices() {
						w, err := quant.Quantize(kernel.F32, (*p).Dequantize(), (*p).N, (*p).K, false)
						if err != nil {
							t.Fatal(err)
						}
						*p = w
					}
					want := runGolden(t, fq, c, 0)
					for _, x := range []struct {
						name      string
						got, want []float32
					}{{"logits", r.logits, want.logits}, {"decode_logits", r.decode, want.decode}} {
						e := relRMS(x.got, x.want)
						t.Logf("%s: relative RMS vs the f32 engine on dequantized weights %.3g", x.name, e)
						if !(e <= tolQuantPipeline) {
							t.Errorf("%s: relative RMS %.3g vs the f32 engine on the same (dequantized) weights exceeds %.g", x.name, e, tolQuantPipeline)
						}
					}
				})
			}
		})
	}
}

// relRMS is ‖got−want‖₂ / ‖want‖₂ (NaN if got holds a NaN, +Inf if the
// lengths differ).
func relRMS(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den)
}

// countingChooser records the ops it is asked about and declines, so the
// defaults run.
type countingChooser struct {
	mu  sync.Mutex // choosers are called from the pool's workers
	ops map[string]int
}

func (c *countingChooser) Choose(op string, dt kernel.DType, s kernel.Shape, threads int, classes []kernel.Class) (kernel.Choice, bool) {
	c.mu.Lock()
	c.ops[op]++
	c.mu.Unlock()
	return kernel.Choice{}, false
}

// TestChooser: LoadOptions.Chooser is the model's own: every kernel family
// of its forward pass consults it (the norms too), and another model's
// passes, before, between and after (its Close included), never do.
func TestChooser(t *testing.T) {
	c := loadTiny(t)[0]
	ch := &countingChooser{ops: map[string]int{}}
	other := &countingChooser{ops: map[string]int{}}
	run := func(m *Model) {
		t.Helper()
		st := m.NewState(0)
		if _, err := m.Prefill(st, c.ids[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Decode([]*State{st}, c.gen[0][:1]); err != nil {
			t.Fatal(err)
		}
	}
	mo, err := Load(c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}, Runtime: Runtime{Chooser: other}})
	if err != nil {
		t.Fatal(err)
	}
	defer mo.Close()
	m, err := Load(c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q8}, Runtime: Runtime{Chooser: ch}})
	if err != nil {
		t.Fatal(err)
	}
	run(m)
	asked := maps.Clone(ch.ops)
	run(mo) // loaded first, run after: its own chooser, not the later model's
	m.Close()
	run(mo) // after the other model's Close
	if !maps.Equal(ch.ops, asked) {
		t.Errorf("another model's passes asked this model's chooser: %v, then %v", asked, ch.ops)
	}
	for op := range asked {
		if other.ops[op] == 0 {
			t.Errorf("%s: the other model's passes never asked its own chooser", op)
		}
	}
	t.Logf("ops asked: %v", ch.ops)
	want := []string{"gemm.gemv", "gemm.gemm", "gemm.gateup", "moe.block", "norm.rmsnorm"}
	if m.Shapes.NumKDALayers > 0 {
		want = append(want, "kda.prefill", "kda.decode")
	}
	if m.Shapes.NumMLALayers > 0 {
		want = append(want, "mla.prefill", "mla.decode")
	}
	for _, op := range want {
		if ch.ops[op] == 0 {
			t.Errorf("the chooser was never asked about %s", op)
		}
	}
}
