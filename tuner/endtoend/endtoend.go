// Package endtoend times the engine with a tuning profile and without it:
// ktune's last step, so that a profile that makes the engine slower is
// known (and not used) instead of trusted for its kernel figures.
package endtoend

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/model"
)

// Options configure a check.
type Options struct {
	// Config is the model (nil: model.SyntheticConfig(Layers): Kimi
	// Linear's widths, a dense first layer, KDA and MLA, routed experts).
	Config *arch.Config
	Layers int // synthetic layers (0: 2)
	// Preset names the weights' formats in the record (default "q4-all");
	// Load holds them (zero: every matrix Q4).
	Preset string
	Load   model.LoadOptions
	// Threads are the budgets timed (nil: 1).
	Threads []int
	// Rounds alternate with and without the profile (0: 3); Prompts are
	// the prompt lengths timed (nil: 64, 512), Gen the tokens generated
	// (0: 16) after a one-token prompt.
	Rounds  int
	Prompts []int
	Gen     int
	// MinTime is the least time one measurement runs its test for (again
	// and again, at least minPasses times; 0: 250 ms): a single short pass
	// is mostly noise.
	MinTime time.Duration
	// Progress, when set, hears each measurement as it starts.
	Progress func(done, total int, what string)
	// SampleLoad samples the machine's CPU use around the check (nil:
	// cpu.SampleLoad): a busy check says so (EndToEnd.Busy).
	SampleLoad func() (cpu.Load, error)
}

func (o *Options) defaults() error {
	if o.Layers == 0 {
		o.Layers = 2
	}
	if o.Config == nil {
		c, err := model.SyntheticConfig(o.Layers)
		if err != nil {
			return err
		}
		o.Config = c
	}
	if o.Load.DType == "" {
		o.Load.DType = kernel.Q4
		if o.Preset == "" {
			o.Preset = "q4-all"
		}
	}
	if o.Threads == nil {
		o.Threads = []int{1}
	}
	if o.Rounds == 0 {
		o.Rounds = 3
	}
	if o.Prompts == nil {
		o.Prompts = []int{64, 512}
	}
	if o.Gen == 0 {
		o.Gen = 16
	}
	if o.MinTime == 0 {
		o.MinTime = 250 * time.Millisecond
	}
	if o.SampleLoad == nil {
		o.SampleLoad = cpu.SampleLoad
	}
	return nil
}

// Run builds the model (random weights) and times each test at each thread
// budget with p installed and with no profile, alternating: in each round
// every budget, the two ways in an order that flips every round, after one
// untimed warm-up pass each way. The record holds per row the median
// tokens/s each way and the per-round ratios, judged (EndToEnd.Judge). The
// chooser and thread placement in force before are restored.
func Run(ctx context.Context, p *profile.Profile, opt Options) (*profile.EndToEnd, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	load := opt.Load
	load.Threads = slices.Max(opt.Threads)
	m, err := model.Random(opt.Config, load, 1)
	if err != nil {
		return nil, fmt.Errorf("end-to-end check: %w", err)
	}
	defer m.Close()

	prevPlacement := pool.Default().Placement()
	defer pool.Default().SetPlacement(prevPlacement)
	use := func(with bool, threads int) {
		if with {
			m.SetChooser(p)
			p.ApplyPlacement(threads)
		} else {
			m.SetChooser(nil)
			pool.Default().SetPlacement(pool.Initial) // what an engine without a profile runs
		}
		m.SetThreads(threads)
	}

	type test struct {
		name    string
		measure func() (float64, error) // tokens/s
	}
	V := m.Shapes.Vocab
	ids := func(n, salt int) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32((i*7919 + salt*104729 + 1) % V)
		}
		return out
	}
	lg := make([]float32, V)
	// each test is one pass timed (seconds), repeated for MinTime
	prefill := func(n int) (float64, error) {
		st := m.NewState(0)
		defer st.Free()
		t0 := time.Now()
		if _, err := m.PrefillWith(st, ids(n, n), model.PrefillOptions{Logits: lg}); err != nil {
			return 0, err
		}
		return time.Since(t0).Seconds(), nil
	}
	generate := func(n int) (float64, error) {
		st := m.NewState(0)
		defer st.Free()
		if _, err := m.PrefillWith(st, ids(1, 3), model.PrefillOptions{Logits: lg}); err != nil {
			return 0, err
		}
		out, sts, next := [][]float32{lg}, []*model.State{st}, ids(n, 5)
		t0 := time.Now()
		for i := range n {
			if err := m.DecodeTo(out, sts, next[i:i+1]); err != nil {
				return 0, err
			}
		}
		return time.Since(t0).Seconds(), nil
	}
	// a measurement is the median pass of at least minPasses: a pass that
	// met a stall (a GC cycle, a burst of page faults) moves it no more
	// than any other (timed as the mean of one or two passes, the pp512
	// row at 1 thread read 0.6× in one round of three, both ways the same)
	rate := func(tokens int, pass func(int) (float64, error)) func() (float64, error) {
		return func() (float64, error) {
			var secs []float64
			for start := time.Now(); len(secs) < minPasses || time.Since(start) < opt.MinTime; {
				s, err := pass(tokens)
				if err != nil {
					return 0, err
				}
				secs = append(secs, s)
			}
			return float64(tokens) / median(secs), nil
		}
	}
	var tests []test
	for _, n := range opt.Prompts {
		tests = append(tests, test{fmt.Sprintf("pp%d", n), rate(n, prefill)})
	}
	tests = append(tests, test{fmt.Sprintf("tg%d", opt.Gen), rate(opt.Gen, generate)})

	// rows[th][test]: tokens/s with and without, per round
	type cell struct{ with, without []float64 }
	cells := make([][]cell, len(opt.Threads))
	for i := range cells {
		cells[i] = make([]cell, len(tests))
	}
	l0, loadErr := opt.SampleLoad()
	total := len(opt.Threads) * 2 * (opt.Rounds*len(tests) + 1)
	done := 0
	step := func(what string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if opt.Progress != nil {
			opt.Progress(done, total, what)
		}
		done++
		return nil
	}
	for _, th := range opt.Threads { // warm-up: weights touched, buffers sized, each way
		for _, with := range []bool{true, false} {
			if err := step(fmt.Sprintf("warm-up t=%d", th)); err != nil {
				return nil, err
			}
			use(with, th)
			for _, tt := range tests {
				if _, err := tt.measure(); err != nil {
					return nil, err
				}
			}
		}
	}
	for r := 0; r < opt.Rounds; r++ {
		order := []bool{true, false}
		if r%2 == 1 {
			order = []bool{false, true}
		}
		for i, th := range opt.Threads {
			for _, with := range order {
				use(with, th)
				for j, tt := range tests {
					if err := step(fmt.Sprintf("round %d t=%d %s %s", r+1, th, map[bool]string{true: "with", false: "without"}[with], tt.name)); err != nil {
						return nil, err
					}
					tps, err := tt.measure()
					if err != nil {
						return nil, err
					}
					c := &cells[i][j]
					if with {
						c.with = append(c.with, tps)
					} else {
						c.without = append(c.without, tps)
					}
				}
			}
		}
	}
	rec := &profile.EndToEnd{Model: fmt.Sprintf("synthetic %d layers at Kimi Linear's widths, %s", opt.Config.NumHiddenLayers, opt.Preset), Rounds: opt.Rounds}
	for i, th := range opt.Threads {
		for j, tt := range tests {
			c := cells[i][j]
			row := profile.EndToEndRow{Test: tt.name, Threads: th, With: median(c.with), Without: median(c.without)}
			for r := range c.with {
				row.Ratios = append(row.Ratios, c.with[r]/c.without[r])
			}
			rec.Rows = append(rec.Rows, row)
		}
	}
	rec.Judge()
	if l1, err := opt.SampleLoad(); err == nil && loadErr == nil {
		rec.Busy = l1.Since(l0).Warning()
	}
	return rec, nil
}

// minPasses is the least number of passes one measurement times.
const minPasses = 3

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
