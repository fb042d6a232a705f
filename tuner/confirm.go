package tuner

import (
	"fmt"
	"slices"

	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
)

// groupKey names the entries of one (op, dtype, class, shape) across
// thread budgets.
func groupKey(u unit) string {
	return fmt.Sprintf("%s|%s|%s|%s", u.w.Op, u.w.DType, u.class, u.w.Shape)
}

// noteChoice records an entry's final choice as the fewer-threads
// challenger of the group's next budget.
func (t *tuner) noteChoice(u unit, r profile.Result) {
	v, err := kernel.Lookup(u.w.Op + "/" + r.Variant)
	if err != nil {
		return
	}
	pl, err := pool.ParsePlacement(r.Placement)
	if err != nil {
		pl = pool.Compact
	}
	t.chosen[groupKey(u)] = candidate{v, kernel.Config{Threads: r.Threads, Params: r.Params}, pl}
}

// confirmUnit decides an entry's choice among the base and its challengers
// (tuner.confirm) and records it (with no challenger, the winner is timed
// again when retime: see tuneUnit; when late, past the unit's slice of the
// budget, a challenged default stays unconfirmed): the base is the
// untuned default dc (what the engine runs without a profile, of
// whichever class) where it was timed, else the search's winner; the
// challengers are the winner (when it is not the base) and the choice of
// the group's largest smaller thread budget (when it differs from both).
func (t *tuner) confirmUnit(u unit, ps *problems, e *profile.Entry, dc *candidate, winner candidate, retime, late bool) error {
	base, baseRole := winner, profile.ConfirmSearch
	if dc != nil {
		base, baseRole = *dc, profile.ConfirmDefault
	}
	var chall []challenger
	if winner.key() != base.key() {
		chall = append(chall, challenger{profile.ConfirmSearch, winner})
	}
	if f, ok := t.chosen[groupKey(u)]; ok && f.cfg.Threads < u.threads && f.key() != base.key() && f.key() != winner.key() {
		chall = append(chall, challenger{profile.ConfirmFewerThreads, f})
	}
	if len(chall) == 0 {
		if retime {
			if r, err := t.time(u.w, ps, winner, 0); err == nil && r.Median > 0 {
				e.Best.Median, e.Best.Lo, e.Best.Hi, e.Best.N = r.Median, r.Lo, r.Hi, r.N
			}
		}
		t.noteChoice(u, e.Best)
		return nil
	}
	if late && baseRole == profile.ConfirmDefault {
		// past the unit's slice of the budget: no time to confirm a
		// challenger, so the default stays (never worse than no profile)
		e.Confirm = &profile.Confirm{Base: baseRole, Chosen: baseRole, Skipped: "the budget ran out before the confirmation"}
		e.Best = *e.Default
		t.noteChoice(u, e.Best)
		return nil
	}
	c, chosen, baseRes, err := t.confirm(u.w, ps, base, baseRole, chall)
	if err != nil {
		return fmt.Errorf("tuner: %s: confirming the choice: %w", unitName(u), err)
	}
	e.Confirm = c
	e.Best = chosen                         // (the search's winner, when not chosen, is among the runners-up)
	if baseRole == profile.ConfirmDefault { // its figure from the same rounds
		e.Default = &baseRes
	}
	t.noteChoice(u, e.Best)
	return nil
}

// challenger is a candidate that may replace the base.
type challenger struct {
	role string
	c    candidate
}

// confirm times base and each challenger alternately (the order reversed
// every other round, so that a drift favours none), Measure.confirmRounds
// rounds. The margin is the larger of Measure.minGain and the base's own
// spread over the rounds ((max−min)/median of its round medians: the noise
// of the run as it is now); a challenger qualifies where its median over
// the base's is below 1 − margin in every round, and the qualifier of the
// least median ratio is chosen; none: the base stays. The chosen one's
// Result carries the median of its round medians (Lo, Hi their extremes).
// Rounds during which other processes were busy (Options.SampleLoad) keep
// the base, and say so (Confirm.Busy).
func (t *tuner) confirm(w Workload, ps *problems, base candidate, baseRole string, chall []challenger) (c *profile.Confirm, chosen, baseRes profile.Result, err error) {
	rounds := t.opt.Measure.confirmRounds()
	sample := t.opt.SampleLoad
	if sample == nil {
		sample = cpu.SampleLoad
	}
	l0, loadErr := sample()
	all := append([]candidate{base}, make([]candidate, len(chall))...)
	for i, c := range chall {
		all[i+1] = c.c
	}
	times := make([][]profile.Result, len(all)) // [candidate][round]
	order := make([]int, len(all))
	for r := 0; r < rounds; r++ {
		for i := range order {
			order[i] = i
		}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			res, err := t.time(w, ps, all[i], 0)
			if err != nil {
				return nil, chosen, baseRes, err
			}
			if !(res.Median > 0) {
				return nil, chosen, baseRes, fmt.Errorf("%s timed %v s", all[i].key(), res.Median)
			}
			times[i] = append(times[i], res)
		}
	}
	meds := func(rs []profile.Result) []float64 {
		m := make([]float64, len(rs))
		for i, r := range rs {
			m[i] = r.Median
		}
		return m
	}
	cms := make([][]float64, len(chall))
	for i := range chall {
		cms[i] = meds(times[i+1])
	}
	margin, ratios, pick := decide(meds(times[0]), cms, t.opt.Measure.minGain())
	c = &profile.Confirm{Base: baseRole, Rounds: rounds, Margin: margin, Chosen: baseRole}
	for i, ch := range chall {
		c.Challengers = append(c.Challengers, profile.Challenger{Role: ch.role, Result: roundsResult(times[i+1]), Ratios: ratios[i]})
	}
	if l1, err := sample(); err == nil && loadErr == nil {
		if w := l1.Since(l0).Warning(); w != "" {
			c.Busy, pick = w, 0 // a choice measured while others ran is not kept
		}
	}
	if pick > 0 {
		c.Chosen = chall[pick-1].role
	}
	return c, roundsResult(times[pick]), roundsResult(times[0]), nil
}

// decide is confirm's rule on the round medians of the base (base[r]) and
// of each challenger (chall[i][r]): the margin, each challenger's ratios
// (its median over the base's, per round), and the one chosen (0: the
// base, i+1: chall[i]).
func decide(base []float64, chall [][]float64, minGain float64) (margin float64, ratios [][]float64, pick int) {
	margin = min(max(minGain, (slices.Max(base)-slices.Min(base))/median(base)), 0.5)
	bestRatio := 1.0
	for i, cm := range chall {
		q := make([]float64, len(base))
		for r := range q {
			q[r] = cm[r] / base[r]
		}
		ratios = append(ratios, q)
		if slices.Max(q) < 1-margin && median(q) < bestRatio {
			pick, bestRatio = i+1, median(q)
		}
	}
	return margin, ratios, pick
}

// roundsResult is a candidate's Result over the confirm rounds: the median
// of its round medians, Lo and Hi their extremes, N every sample.
func roundsResult(rs []profile.Result) profile.Result {
	r := rs[len(rs)-1]
	var m []float64
	r.N = 0
	for _, x := range rs {
		m = append(m, x.Median)
		r.N += x.N
	}
	r.Median, r.Lo, r.Hi = median(m), slices.Min(m), slices.Max(m)
	r.Stopped = false
	return r
}
