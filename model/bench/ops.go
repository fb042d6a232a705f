// The per-op breakdowns (Options.Ops).

package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/ktune/ktune/model"
)

// breakdowns adds, with Ops, the breakdowns at base's thread count and
// depth: of a prefill of the first prompt length and of a decode of the
// first generation length (none for a 0).
func (r *runner) breakdowns(s *subject, base Row) error {
	if !r.o.Ops {
		return nil
	}
	if ps := r.o.Prompts; len(ps) > 0 && ps[0] > 0 {
		pr, err := prefillBreakdown(s.m, base, ps[0])
		if err != nil {
			return err
		}
		r.ops = append(r.ops, pr...)
	}
	if gs := r.o.Gens; len(gs) > 0 && gs[0] > 0 {
		r.ops = append(r.ops, decodeBreakdown(s.m, base, gs[0], r.ceiling[base.Threads])...)
	}
	return nil
}

// opBase is the OpRow fields base's model, dtype and threads give, for a
// test of n tokens.
func opBase(base Row, test string, n int) OpRow {
	return OpRow{Model: base.Model, DType: base.DType, Threads: base.Threads, Test: fmt.Sprintf("%s%d", test, n), TokensRun: n}
}

// decodeBreakdown times n decode tokens (after a context of base.Depth)
// with the op timer on and compares each op family's time per token with
// its roof (its weight bytes per decode token at the read ceiling); a
// failed run gives no rows.
func decodeBreakdown(m *model.Model, base Row, n int, ceiling float64) []OpRow {
	times := newOpTimes()
	if _, err := decodeRun(m, base.Depth, n, m.Shapes.Vocab, 99, times, nil); err != nil {
		return nil
	}
	bytes := m.DecodeWeightBytesByOp()
	rows := times.rows(opBase(base, "tg", n), false)
	for i := range rows {
		r := &rows[i]
		r.BytesTok = bytes[r.Op]
		if r.BytesTok > 0 && ceiling > 0 {
			r.RoofMs = float64(r.BytesTok) / ceiling * 1e3
			r.RoofFrac = r.RoofMs / max(r.MsPerTok, 1e-12)
		}
	}
	return rows
}

// prefillBreakdown times one prefill of p tokens (after a context of
// base.Depth) with the op timer on: each op family's time per prompt
// token, then each layer's share of it.
func prefillBreakdown(m *model.Model, base Row, p int) ([]OpRow, error) {
	st := m.NewState(0)
	defer st.Free()
	lg := model.PrefillOptions{Logits: warmLogits(m.Shapes.Vocab)}
	if d := base.Depth; d > 0 {
		if _, err := m.PrefillWith(st, benchIDs(d, m.Shapes.Vocab, 98), lg); err != nil {
			return nil, err
		}
	}
	times := newOpTimes()
	m.SetOpTimer(times)
	_, err := m.PrefillWith(st, benchIDs(p, m.Shapes.Vocab, 99), lg)
	m.SetOpTimer(nil)
	if err != nil {
		return nil, err
	}
	return times.rows(opBase(base, "pp", p), true), nil
}

// opTimes sums a OpTimer's reports by op family, and by family and layer.
type opTimes struct {
	fam   map[string]time.Duration
	layer map[opLayer]time.Duration
}

type opLayer struct {
	op    string
	layer int
}

func newOpTimes() *opTimes {
	return &opTimes{fam: map[string]time.Duration{}, layer: map[opLayer]time.Duration{}}
}

// Op is model.OpTimer's.
func (t *opTimes) Op(op string, layer, tokens int, d time.Duration) {
	t.fam[op] += d
	t.layer[opLayer{op, layer}] += d
}

// rows turns the sums into OpRows (per token of base.TokensRun): one per
// family in forward order, and with layers set, one per family and layer
// after it.
func (t *opTimes) rows(base OpRow, layers bool) []OpRow {
	var total time.Duration
	for _, v := range t.fam {
		total += v
	}
	row := func(op string, layer int, d time.Duration) OpRow {
		r := base
		r.Op, r.Layer = op, layer
		r.MsPerTok = d.Seconds() * 1e3 / float64(max(base.TokensRun, 1))
		r.Share = float64(d) / float64(max(total, 1))
		return r
	}
	var out []OpRow
	for _, op := range model.Ops {
		tm, ok := t.fam[op]
		if !ok {
			continue
		}
		out = append(out, row(op, -1, tm))
		if layers {
			out = append(out, t.layerRows(op, row)...)
		}
	}
	return out
}

// layerRows is op's rows per layer, in layer order, where it ran in
// more than one layer.
func (t *opTimes) layerRows(op string, row func(string, int, time.Duration) OpRow) []OpRow {
	var ls []int
	for k := range t.layer {
		if k.op == op && k.layer >= 0 {
			ls = append(ls, k.layer)
		}
	}
	if len(ls) < 2 {
		return nil
	}
	slices.Sort(ls)
	out := make([]OpRow, 0, len(ls))
	for _, l := range ls {
		out = append(out, row(op, l, t.layer[opLayer{op, l}]))
	}
	return out
}
