// The timed runs: the read ceiling, pp and tg rows, their statistics.

package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/roofline"
)

// measureCeilings measures the read ceiling at each thread count.
func (r *runner) measureCeilings() {
	r.ceiling = map[int]float64{}
	buf := make([]byte, r.o.CeilingBytes)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i >> 12)
	}
	for _, t := range r.o.Threads {
		r.ceiling[t] = readCeiling(buf, t)
	}
}

// readCeiling is the read bandwidth (bytes/s) of threads workers streaming
// buf, best of 3.
func readCeiling(buf []byte, threads int) float64 {
	best := 0.0
	for range 3 {
		t0 := time.Now()
		roofline.ReadParallel(buf, 4, threads)
		best = max(best, float64(len(buf))/time.Since(t0).Seconds())
	}
	return best
}

// sweep measures s at every thread count and depth.
func (r *runner) sweep(ctx context.Context, s *subject) error {
	for _, th := range r.o.Threads {
		s.m.SetThreads(th)
		profile.UsePlacement(th)
		for _, d := range r.o.Depths {
			if err := r.point(ctx, s, th, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// point measures s at th threads after a context of d tokens: a pp row
// per prompt length, a tg row per generation length, then with Ops the
// breakdowns of the first of each.
func (r *runner) point(ctx context.Context, s *subject, th, d int) error {
	base := s.base
	base.Threads, base.Depth = th, d
	for _, p := range r.o.Prompts {
		if p == 0 {
			continue
		}
		row, err := r.prefillRow(ctx, s, base, p)
		if err != nil {
			return err
		}
		r.emit(row)
	}
	for _, n := range r.o.Gens {
		if n == 0 {
			continue
		}
		row, err := r.decodeRow(ctx, s, base, n)
		if err != nil {
			return err
		}
		r.emit(row)
	}
	return r.breakdowns(s, base)
}

// at is a test name's depth suffix.
func at(d int) string {
	if d > 0 {
		return fmt.Sprintf(" @ d%d", d)
	}
	return ""
}

// prefillRow times Reps prefills of p tokens (each after a context of
// base.Depth). Its bound is the weights the pass read (every matrix, and
// each expert its tokens touched, once) at the read ceiling: prompt
// compute is not counted, so it is a floor on the pass's time, not the
// whole cost.
func (r *runner) prefillRow(ctx context.Context, s *subject, base Row, p int) (Row, error) {
	row := base
	row.Test, row.NPrompt = fmt.Sprintf("pp%d%s", p, at(base.Depth)), p
	m, V := s.m, s.m.Shapes.Vocab
	lg := model.PrefillOptions{Logits: warmLogits(V)}
	if !r.o.NoWarmup { // one untimed pass, as llama-bench: weights paged in, pools and buffers warm
		st := m.NewState(0)
		_, err := m.PrefillWith(st, benchIDs(p, V, 0), lg)
		st.Free()
		if err != nil {
			return row, err
		}
	}
	var passBytes int64 // weights one pass reads: the experts its tokens touched
	var pg ioDelta      // page-ins of the timed passes
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		secs, bytes, err := prefillRun(m, base.Depth, p, rep, lg, &pg)
		if err != nil {
			return row, err
		}
		passBytes = max(passBytes, bytes)
		row.Samples = append(row.Samples, float64(p)/secs)
	}
	r.finish(&row, pg, passBytes, p)
	return row, nil
}

// prefillRun times one prefill of p tokens after a context of d (untimed)
// and returns the seconds and the weight bytes the pass read; pg adds its
// page-ins.
func prefillRun(m *model.Model, d, p, rep int, lg model.PrefillOptions, pg *ioDelta) (float64, int64, error) {
	V := m.Shapes.Vocab
	st := m.NewState(0)
	defer st.Free()
	if d > 0 {
		if _, err := m.PrefillWith(st, benchIDs(d, V, rep), lg); err != nil {
			return 0, 0, err
		}
	}
	before := m.ExpertCounts()
	io0, t0 := sampleIO(), time.Now()
	_, err := m.PrefillWith(st, benchIDs(p, V, rep+1), lg)
	secs := time.Since(t0).Seconds()
	pg.add(io0, sampleIO(), secs, p)
	if err != nil {
		return 0, 0, err
	}
	return secs, m.PassWeightBytes(m.ExpertCountsSince(before)), nil
}

// decodeRow times Reps runs of n decode steps (each after a context of
// base.Depth). Its bound is the weight bytes one decode token reads
// (every matrix, the top-k experts, one embedding row) at the read
// ceiling.
func (r *runner) decodeRow(ctx context.Context, s *subject, base Row, n int) (Row, error) {
	row := base
	row.Test, row.NGen = fmt.Sprintf("tg%d%s", n, at(base.Depth)), n
	m, V := s.m, s.m.Shapes.Vocab
	if !r.o.NoWarmup { // one untimed decode step after a short prompt, as llama-bench
		if _, err := decodeRun(m, 0, 1, V, 0, nil, nil); err != nil {
			return row, err
		}
	}
	var pg ioDelta // page-ins of the timed decode steps
	c0 := m.ExpertCache()
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		secs, err := decodeRun(m, base.Depth, n, V, rep, nil, &pg)
		if err != nil {
			return row, err
		}
		row.Samples = append(row.Samples, float64(n)/secs)
	}
	row.ExpertCacheHit = cacheHit(c0, m.ExpertCache())
	r.finish(&row, pg, s.bytesTok, 1)
	return row, nil
}

// finish fills row's statistics from its samples, its bound from the
// weight bytes one run read over its tokens (bytes / tokens per token) at
// its thread count's read ceiling, and what its timed runs paged in (pg).
func (r *runner) finish(row *Row, pg ioDelta, bytes int64, tokens int) {
	ceiling := r.ceiling[row.Threads]
	row.Mean, row.SD = meanSD(row.Samples)
	row.BytesTok, row.CeilingGBs = bytes/int64(tokens), ceiling/1e9
	row.BoundFrac = float64(bytes) / float64(tokens) * row.Mean / ceiling
	r.paged(row, pg, row.BytesTok, ceiling)
}

// decodeRun times n decode steps of one sequence after a context of d
// tokens (at least one, untimed) and returns the seconds; pg, if set,
// adds the steps' page-ins.
func decodeRun(m *model.Model, d, n, V, salt int, prof model.OpTimer, pg *ioDelta) (float64, error) {
	st := m.NewState(0)
	defer st.Free()
	lg := warmLogits(V) // the logits of the context and of every step
	if _, err := m.PrefillWith(st, benchIDs(max(d, 1), V, salt), model.PrefillOptions{Logits: lg}); err != nil {
		return 0, err
	}
	ids := benchIDs(n, V, salt+7)
	out, sts := [][]float32{lg}, []*model.State{st}
	m.SetOpTimer(prof)
	defer m.SetOpTimer(nil)
	io0, t0 := sampleIO(), time.Now()
	for i := range n {
		if err := m.DecodeTo(out, sts, ids[i:i+1]); err != nil {
			return 0, err
		}
	}
	secs := time.Since(t0).Seconds()
	if pg != nil {
		pg.add(io0, sampleIO(), secs, n)
	}
	return secs, nil
}

// meanSD is the mean and sample standard deviation of v.
func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) > 1 {
		for _, x := range v {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(len(v)-1))
	}
	return mean, sd
}

// warmLogits is a logits buffer of V floats with its pages already
// touched, so that no timed step pays their first-touch faults (as a
// decode loop reusing its buffer does not: model.DecodeTo).
func warmLogits(V int) []float32 {
	b := make([]float32, V)
	for i := range b {
		b[i] = 1 // written, not just cleared: a fresh zeroed allocation is not touched
	}
	return b
}

// benchIDs are deterministic token ids spread over the vocabulary.
func benchIDs(n, vocab, salt int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32((i*7919 + salt*104729 + 1) % vocab)
	}
	return ids
}
