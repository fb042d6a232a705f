package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// TestPromptLastRowOnly: a prompt's logits run the last layer's
// feed-forward (and its MLA mixer's queries, attention and output
// projection) on the last token alone, and nothing else changes. Against
// the same prompt run on every row (PrefillOptions.EveryRow):
//   - the last layer's MoE routes one token's top-k (none with NoLogits),
//     not the prompt's, while the other layers route every token;
//   - the prompt's logits agree to within a relative 1e-5 (the last row
//     goes through the same per-row arithmetic), and a Hidden observer's
//     pass (every row too) gives EveryRow's logits bit for bit;
//   - a prompt fed with NoLogits (its last layer's feed-forward skipped
//     entirely) leaves states whose next decode step gives the same logits
//     bit for bit: the skipped rows feed no state.
//
// On the golden tiny model (last layer MLA + MoE) in every weight format at
// 1 and 2 threads; on it in passes of 4 tokens (a 9-token prompt: pieces
// of 4, 4 and 1, the first two fed without logits); and on a synthetic
// one-layer model whose last layer is KDA with a dense MLP.
func TestPromptLastRowOnly(t *testing.T) {
	c := loadTiny(t)[0]
	ids := []int32{3, 17, 250, 9, 41, 1, 77, 5, 120}
	for _, f := range threadFormats {
		m := mustLoad(t, c.f.Dir(), f.opt)
		if m.Layers[len(m.Layers)-1].MoE == nil {
			t.Fatalf("the tiny model's last layer has no MoE block")
		}
		for _, th := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", f.name, th), func(t *testing.T) {
				setThreads(t, m, th, false)
				checkLastRows(t, m, ids)
			})
		}
	}
	t.Run("q4/pieces=4", func(t *testing.T) {
		m := mustLoad(t, c.f.Dir(), LoadOptions{Formats: Formats{DType: kernel.Q4}, Runtime: Runtime{PrefillChunk: 4, Threads: 2}})
		checkLastRows(t, m, ids)
	})
	t.Run("synthetic-kda-mlp", func(t *testing.T) {
		m, err := Random(tinySynthConfig(t, 1), LoadOptions{Formats: Formats{DType: kernel.Q8}, Runtime: Runtime{Threads: 2}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if m.Layers[0].KDA == nil || m.Layers[0].MLP == nil {
			t.Fatalf("the one-layer synthetic model is not KDA + MLP")
		}
		for _, th := range []int{1, 2} {
			setThreads(t, m, th, false)
			checkLastRows(t, m, ids)
		}
	})
}

// checkLastRows makes TestPromptLastRowOnly's checks on m for the prompt ids.
func checkLastRows(t *testing.T, m *Model, ids []int32) {
	t.Helper()
	T, last := len(ids), len(m.Layers)-1
	routed := func(opt PrefillOptions) ([]float32, []int64, *State) {
		st := m.NewState(0)
		before := m.ExpertCounts()
		lg, err := m.PrefillWith(st, ids, opt)
		if err != nil {
			t.Fatal(err)
		}
		var rows []int64
		for _, layer := range m.ExpertCountsSince(before) {
			var n int64
			for _, c := range layer {
				n += c
			}
			rows = append(rows, n)
		}
		return lg, rows, st
	}
	lgLast, rowsLast, stLast := routed(PrefillOptions{})
	lgAll, rowsAll, stAll := routed(PrefillOptions{EveryRow: true})
	lgHidden, _, stHidden := routed(PrefillOptions{Hidden: func(int, int, []float32) {}})
	_, rowsNone, stNone := routed(PrefillOptions{NoLogits: true})
	defer func() {
		for _, st := range []*State{stLast, stAll, stHidden, stNone} {
			st.Free()
		}
	}()
	for l := range m.Layers {
		b := m.Layers[l].MoE
		if b == nil {
			continue
		}
		want := int64(T * b.Cfg.TopK)
		if rowsAll[l] != want {
			t.Errorf("every row: layer %d routed %d rows; want %d", l, rowsAll[l], want)
		}
		wantLast, wantNone := want, want
		if l == last {
			wantLast, wantNone = int64(b.Cfg.TopK), 0
		}
		if rowsLast[l] != wantLast || rowsNone[l] != wantNone {
			t.Errorf("layer %d routed %d rows for the logits and %d without; want %d and %d", l, rowsLast[l], rowsNone[l], wantLast, wantNone)
		}
	}
	if d := relRMS(lgLast, lgAll); !(d <= 1e-5) {
		t.Errorf("prompt logits from the last row alone differ from every row's by %.3g (relative RMS); want ≤ 1e-5", d)
	}
	sameBits(t, "a Hidden observer's prompt logits against EveryRow's", lgHidden, lgAll)
	next := []int32{42}
	var dec [][]float32
	for _, st := range []*State{stLast, stAll, stHidden, stNone} {
		out, err := m.Decode([]*State{st}, next)
		if err != nil {
			t.Fatal(err)
		}
		dec = append(dec, out[0])
	}
	for i, name := range []string{"every row", "a Hidden observer", "no logits"} {
		sameBits(t, "the decode step after a prompt run with "+name, dec[i+1], dec[0])
	}
}

// sameBits reports the first element where got and want differ in bits.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	for j := range want {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Errorf("%s: differ at %d: %v vs %v", what, j, got[j], want[j])
			return
		}
	}
}
