package kda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m, "kda") }

func TestDecodeVariants(t *testing.T) {
	var shapes []kernel.Shape
	for _, b := range []int{1, 3} {
		for _, kv := range [][2]int{{32, 48}, {64, 64}, {17, 33}, {128, 128}} {
			shapes = append(shapes, kernel.MakeShape(decodeKeys, b, 2, kv[0], kv[1]))
		}
	}
	kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, v *kernel.Variant) {
		kerneltest.CheckVariant(t, v, kernel.F32, shapes, 0, 1)
	})
}

func TestPrefillVariants(t *testing.T) {
	ts := []int{1, 2, 15, 16, 17, 63, 64, 65, 130}
	if testing.Short() {
		ts = []int{1, 17, 65}
	}
	var shapes []kernel.Shape
	for _, T := range ts {
		shapes = append(shapes, kernel.MakeShape(prefillKeys, 2, T, 2, 32, 48))
	}
	shapes = append(shapes, kernel.MakeShape(prefillKeys, 1, 70, 1, 64, 64))
	kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, v *kernel.Variant) {
		kerneltest.CheckVariant(t, v, kernel.F32, shapes, 0, 1)
	})
}

// goldenTensors loads a kda_recurrent / kda_chunk file.
func goldenTensors(t *testing.T, f *golden.File) (Tensors, []float32, []float32) {
	d := f.Dims(t, "v")
	tn := Tensors{B: d[0], T: d[1], H: d[2], K: f.Dims(t, "q")[3], V: d[3]}
	tn.Q, tn.Kk, tn.G, tn.Vv, tn.Beta = f.F32(t, "q"), f.F32(t, "k"), f.F32(t, "g"), f.F32(t, "v"), f.F32(t, "beta")
	tn.Scale = f.F32(t, "scale")[0]
	tn.State = f.F32(t, "initial_state")
	tn.O = make([]float32, len(tn.Vv))
	return tn, f.F32(t, "o"), f.F32(t, "final_state")
}

// TestGolden runs every prefill variant (and chunk sizes) over every golden
// KDA kernel file, and every decode variant token by token.
func TestGolden(t *testing.T) {
	files := append(golden.Load(t, golden.KDARecurrent), golden.Load(t, golden.KDAChunk)...)
	for _, f := range files {
		oTol, sTol := 1e-5, 1e-4
		if f.Kind == golden.KDAChunk {
			oTol, sTol = 2e-5, 2e-4
		}
		t.Run(f.Name(), func(t *testing.T) {
			kerneltest.ForEachVariant(t, OpPrefill, func(t *testing.T, v *kernel.Variant) {
				for _, vals := range v.Space(nil) {
					tn, wantO, wantS := goldenTensors(t, f)
					run(&tn, v.Impl.(headFn), 2, vals)
					label := fmt.Sprintf("%s %v", v.Name, vals)
					golden.Check(t, label+" o", tn.O, wantO, oTol)
					golden.Check(t, label+" final_state", tn.State, wantS, sTol)
				}
			})
			kerneltest.ForEachVariant(t, OpDecode, func(t *testing.T, v *kernel.Variant) {
				tn, wantO, wantS := goldenTensors(t, f)
				decodeAll(&tn, v.Impl.(headFn), v.DefaultConfig(nil, 2))
				golden.Check(t, v.Name+" o", tn.O, wantO, oTol)
				golden.Check(t, v.Name+" final_state", tn.State, wantS, sTol)
			})
		})
	}
}

// decodeAll feeds the sequence one token at a time through a decode kernel.
func decodeAll(tn *Tensors, fn headFn, cfg kernel.Config) {
	B, T, H, K, V := tn.B, tn.T, tn.H, tn.K, tn.V
	step := Tensors{B: B, T: 1, H: H, K: K, V: V, Scale: tn.Scale, State: tn.State, States: tn.States, StateVK: tn.StateVK,
		Q: make([]float32, B*H*K), Kk: make([]float32, B*H*K), G: make([]float32, B*H*K),
		Vv: make([]float32, B*H*V), Beta: make([]float32, B*H), O: make([]float32, B*H*V)}
	for t := 0; t < T; t++ {
		for b := 0; b < B; b++ {
			src, dst := (b*T+t)*H, b*H
			copy(step.Q[dst*K:(dst+H)*K], tn.Q[src*K:(src+H)*K])
			copy(step.Kk[dst*K:(dst+H)*K], tn.Kk[src*K:(src+H)*K])
			copy(step.G[dst*K:(dst+H)*K], tn.G[src*K:(src+H)*K])
			copy(step.Vv[dst*V:(dst+H)*V], tn.Vv[src*V:(src+H)*V])
			copy(step.Beta[dst:dst+H], tn.Beta[src:src+H])
		}
		run(&step, fn, cfg.Threads, cfg.Params)
		for b := 0; b < B; b++ {
			copy(tn.O[(b*T+t)*H*V:(b*T+t+1)*H*V], step.O[b*H*V:(b+1)*H*V])
		}
	}
}

// randomTensors builds a KDA input with gates down to gMin.
func randomTensors(seed uint64, B, T, H, K, V int, gMin float64) Tensors {
	p, err := newProblem(OpPrefill)(kernel.MakeShape(prefillKeys, B, T, H, K, V), kernel.F32, seed)
	if err != nil {
		panic(err)
	}
	tn := p.(*problem).t
	r := rand.New(rand.NewPCG(seed, 5))
	for i := range tn.G {
		tn.G[i] = float32(gMin * r.Float64())
	}
	return tn
}

// TestChunkMatchesRecurrence: the chunked form against the f32 recurrence
// on long sequences, including extreme gates (g ≈ −50 per token) that would
// overflow a factorised exp(Γ_r)·exp(−Γ_s).
func TestChunkMatchesRecurrence(t *testing.T) {
	Ts := []int{1000, 4096}
	if testing.Short() {
		Ts = []int{300}
	}
	for _, T := range Ts {
		for _, gMin := range []float64{-0.5, -50} {
			base := randomTensors(3, 1, T, 2, 64, 48, gMin)
			want := clone(base)
			run(&want, recurrentGeneric, 2, kernel.Values{"strip": 16})
			for _, c := range chunkParam.Values {
				got := clone(base)
				run(&got, chunkGeneric, 2, kernel.Values{"chunk": c})
				label := fmt.Sprintf("T=%d gmin=%v chunk=%d", T, gMin, c)
				kerneltest.Close(t, label+" o", got.O, want.O, tolerance(kernel.ClassF32, nil))
				kerneltest.Close(t, label+" state", got.State, want.State, tolerance(kernel.ClassF32, nil))
			}
		}
	}
}

// TestContinuation: prefill(T1) then T2 decode steps equals prefill(T1+T2),
// and a chunked prefill continuing from a non-zero state equals the whole.
func TestContinuation(t *testing.T) {
	T1, T2 := 37, 9
	whole := randomTensors(4, 2, T1+T2, 2, 32, 48, -5)
	want := clone(whole)
	run(&want, recurrentGeneric, 1, kernel.Values{"strip": 32})
	for _, fn := range []headFn{chunkGeneric, recurrentGeneric} {
		got := clone(whole)
		first := slice(&got, 0, T1)
		run(&first, fn, 2, kernel.Values{"chunk": 16, "strip": 8})
		rest := slice(&got, T1, T1+T2)
		rest.State = first.State
		decodeAll(&rest, recurrentGeneric, kernel.Config{Threads: 2, Params: kernel.Values{"strip": 16}})
		o := append(first.O, rest.O...)
		kerneltest.Close(t, "continued o", regroup(o, got, T1, T2), want.O, tolerance(kernel.ClassF32, nil))
		kerneltest.Close(t, "continued state", rest.State, want.State, tolerance(kernel.ClassF32, nil))
	}
}

func clone(t Tensors) Tensors {
	c := t
	for _, p := range []*[]float32{&c.Q, &c.Kk, &c.G, &c.Vv, &c.Beta, &c.O, &c.State} {
		*p = append([]float32(nil), (*p)...)
	}
	return c
}

// slice copies tokens [t0, t1) of every sequence into a new Tensors
// sharing the state.
func slice(tn *Tensors, t0, t1 int) Tensors {
	B, H, K, V, T := tn.B, tn.H, tn.K, tn.V, tn.T
	n := t1 - t0
	s := Tensors{B: B, T: n, H: H, K: K, V: V, Scale: tn.Scale, State: tn.State, O: make([]float32, B*n*H*V)}
	for b := 0; b < B; b++ {
		lo, hi := (b*T+t0)*H, (b*T+t1)*H
		s.Q = append(s.Q, tn.Q[lo*K:hi*K]...)
		s.Kk = append(s.Kk, tn.Kk[lo*K:hi*K]...)
		s.G = append(s.G, tn.G[lo*K:hi*K]...)
		s.Vv = append(s.Vv, tn.Vv[lo*V:hi*V]...)
		s.Beta = append(s.Beta, tn.Beta[lo:hi]...)
	}
	return s
}

// regroup turns [first B×T1 | rest B×T2] outputs into B×(T1+T2) order.
func regroup(o []float32, tn Tensors, T1, T2 int) []float32 {
	B, HV := tn.B, tn.H*tn.V
	out := make([]float32, 0, len(o))
	for b := 0; b < B; b++ {
		out = append(out, o[b*T1*HV:(b+1)*T1*HV]...)
		out = append(out, o[B*T1*HV+b*T2*HV:B*T1*HV+(b+1)*T2*HV]...)
	}
	return out
}

func TestNoNaNExtremeGates(t *testing.T) {
	tn := randomTensors(9, 1, 200, 1, 32, 32, -80)
	for i := range tn.G {
		if i%3 == 0 {
			tn.G[i] = 0 // no decay at all on some channels
		}
	}
	run(&tn, chunkGeneric, 1, kernel.Values{"chunk": 64})
	for i, x := range append(tn.O, tn.State...) {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("non-finite value at %d", i)
		}
	}
}

// TestStateLayouts: a value-major state gives the same result through a
// native VK kernel and through kernels that need the transpose, and the
// same as the [K][V] run.
func TestStateLayouts(t *testing.T) {
	base := randomTensors(6, 2, 9, 2, 32, 48, -5)
	want := clone(base)
	run(&want, recurrentGeneric, 1, kernel.Values{"strip": 32})
	toVK := func(tn *Tensors) {
		kv := tn.K * tn.V
		tmp := make([]float32, kv)
		for h := 0; h < tn.B*tn.H; h++ {
			transpose(tmp, tn.State[h*kv:(h+1)*kv], tn.K, tn.V)
			copy(tn.State[h*kv:], tmp)
		}
		tn.StateVK = true
	}
	for _, v := range append(kernel.Variants(OpPrefill), kernel.Variants(OpDecode)...) {
		if !v.Available() {
			continue
		}
		for _, vals := range v.Space(nil) {
			got := clone(base)
			toVK(&got)
			fn := v.Impl.(headFn)
			if v.Op == OpDecode {
				decodeAll(&got, fn, kernel.Config{Threads: 2, Params: vals})
			} else {
				run(&got, fn, 2, vals)
			}
			kv := got.K * got.V
			back := make([]float32, len(got.State))
			for h := 0; h < got.B*got.H; h++ {
				transpose(back[h*kv:(h+1)*kv], got.State[h*kv:(h+1)*kv], got.V, got.K)
			}
			label := fmt.Sprintf("%s %v", v.ID(), vals)
			kerneltest.Close(t, label+" o", got.O, want.O, tolerance(kernel.ClassF32, nil))
			kerneltest.Close(t, label+" state", back, want.State, tolerance(kernel.ClassF32, nil))
		}
	}
}

// TestSeparateStates: every variant gives the same bits with each
// sequence's state in its own slice (Tensors.States, as the engine's
// batched decode runs) as with the states side by side, in both layouts;
// a States list too short for the batch is refused by check.
func TestSeparateStates(t *testing.T) {
	base := randomTensors(8, 3, 5, 2, 32, 48, -5)
	for _, vk := range []bool{false, true} {
		for _, v := range append(kernel.Variants(OpPrefill), kernel.Variants(OpDecode)...) {
			if !v.Available() {
				continue
			}
			fn := v.Impl.(headFn)
			for _, vals := range v.Space(nil) {
				want, got := clone(base), clone(base)
				want.StateVK, got.StateVK = vk, vk
				n := got.H * got.K * got.V
				for b := range got.B { // each state in a slice of its own, the shared one poisoned
					got.States = append(got.States, append([]float32(nil), got.State[b*n:(b+1)*n]...))
				}
				for i := range got.State {
					got.State[i] = float32(math.NaN())
				}
				if err := got.check(); err != nil {
					t.Fatal(err)
				}
				if v.Op == OpDecode {
					decodeAll(&want, fn, kernel.Config{Threads: 2, Params: vals})
					decodeAll(&got, fn, kernel.Config{Threads: 2, Params: vals})
				} else {
					run(&want, fn, 2, vals)
					run(&got, fn, 2, vals)
				}
				label := fmt.Sprintf("%s %v vk=%v", v.ID(), vals, vk)
				if !slices.Equal(got.O, want.O) {
					t.Errorf("%s: outputs differ", label)
				}
				for b := range got.B {
					if !slices.Equal(got.States[b], want.State[b*n:(b+1)*n]) {
						t.Errorf("%s: state %d differs", label, b)
					}
				}
			}
		}
	}
	short := clone(base)
	short.States = [][]float32{short.State}
	if short.check() == nil {
		t.Error("check accepted 1 state for 3 sequences")
	}
}
