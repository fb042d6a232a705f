package model

import "testing"

// TestPassWeightBytes: a pass whose tokens touch exactly top-k experts per
// MoE layer reads what a decode token reads; one touching every expert
// reads every expert once; a real prefill's counts land in between.
func TestPassWeightBytes(t *testing.T) {
	c := loadTiny(t)[0]
	m := mustLoad(t, c.f.Dir(), LoadOptions{})
	hits := func(per func(l, e int) int64) [][]int64 {
		out := make([][]int64, len(m.Layers))
		for l := range m.Layers {
			if b := m.Layers[l].MoE; b != nil {
				out[l] = make([]int64, b.Cfg.Experts)
				for e := range out[l] {
					out[l][e] = per(l, e)
				}
			}
		}
		return out
	}
	var topK, all, moeLayers int64
	var expert int64
	for l := range m.Layers {
		if b := m.Layers[l].MoE; b != nil {
			x := b.Experts[0]
			expert = int64(len(x.Gate.Data) + len(x.Up.Data) + len(x.Down.Data))
			topK, all = int64(b.Cfg.TopK), int64(b.Cfg.Experts)
			moeLayers++
		}
	}
	if moeLayers == 0 {
		t.Skip("the tiny model has no MoE layer")
	}
	if got := m.ExpertMatrixBytes(); got != expert/3 {
		t.Errorf("ExpertMatrixBytes %d, want a third of an expert's %d", got, expert)
	}
	decode := m.DecodeWeightBytes() - int64(m.Embed.C*m.Embed.DType.Size()) // a pass counts no embedding rows
	if got := m.PassWeightBytes(hits(func(l, e int) int64 { return b2i(int64(e) < topK) })); got != decode {
		t.Errorf("top-k experts touched: %d bytes, a decode token reads %d", got, decode)
	}
	if got, want := m.PassWeightBytes(hits(func(l, e int) int64 { return 3 })), decode+moeLayers*(all-topK)*expert; got != want {
		t.Errorf("every expert touched: %d bytes, want %d", got, want)
	}
	before := m.ExpertCounts()
	st := m.NewState(0)
	defer st.Close()
	if _, err := m.Prefill(st, c.ids[0]); err != nil {
		t.Fatal(err)
	}
	got := m.PassWeightBytes(m.ExpertCountsSince(before))
	if got < decode || got > decode+moeLayers*(all-topK)*expert {
		t.Errorf("a %d-token prefill: %d bytes, outside [%d, %d]", len(c.ids[0]), got, decode, decode+moeLayers*(all-topK)*expert)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
