package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	_ "github.com/ktune/ktune/kernels/all" // register every kernel family
	"github.com/ktune/ktune/model"
)

// tiny is a model at the golden tiny model's widths in dt.
func tiny(t *testing.T, dt kernel.DType) Model {
	t.Helper()
	cfg, err := arch.Load(golden.Load(t, golden.TinyModel)[0].Dir())
	if err != nil {
		t.Fatal(err)
	}
	return Model{Name: "tiny", Preset: string(dt), Open: func() (*model.Model, error) {
		return model.Random(cfg, model.LoadOptions{Formats: model.Formats{DType: dt}}, 1)
	}}
}

// TestRun: the rows come in sweep order (model, threads, depth, then pp
// before tg), each reported as measured, with samples, a bound and its
// labels; the breakdowns cover the first prompt and generation lengths;
// the profile hook brackets each model's measurements.
func TestRun(t *testing.T) {
	var reported []Row
	var profiled []string
	o := Options{
		Models:  []Model{tiny(t, kernel.Q8)},
		Threads: []int{1}, Prompts: []int{4, 0}, Gens: []int{2}, Depths: []int{0, 3}, Reps: 2,
		Ops: true, CeilingBytes: 1 << 20,
		Around: func(m Model) (func(error) error, error) {
			profiled = append(profiled, "start "+m.Preset)
			return func(err error) error { profiled = append(profiled, fmt.Sprint("stop ", err)); return nil }, nil
		},
		Report: Report{Row: func(r Row) { reported = append(reported, r) }},
	}
	rows, ops, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, r := range rows {
		tests = append(tests, r.Test)
		if r.Model != "tiny" || r.DType != "q8" || r.Params == "" || r.Threads != 1 || len(r.Samples) != 2 || !(r.Mean > 0) || !(r.BoundFrac > 0) || r.BytesTok <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	if want := []string{"pp4", "tg2", "pp4 @ d3", "tg2 @ d3"}; !slices.Equal(tests, want) {
		t.Errorf("rows %q, want %q", tests, want)
	}
	if len(reported) != len(rows) || reported[3].Test != rows[3].Test {
		t.Errorf("reported %d rows, returned %d", len(reported), len(rows))
	}
	seen := map[string]bool{}
	for _, r := range ops {
		seen[r.Test] = true
		if r.MsPerTok <= 0 || r.Share <= 0 || r.Share > 1 {
			t.Errorf("op row %+v", r)
		}
	}
	if !seen["pp4"] || !seen["tg2"] || len(seen) != 2 {
		t.Errorf("breakdowns of %v, want pp4 and tg2", seen)
	}
	if want := []string{"start q8", "stop <nil>"}; !slices.Equal(profiled, want) {
		t.Errorf("profile hook calls %q, want %q", profiled, want)
	}
}

// TestRunErrors: a model that fails to open, or options that measure
// nothing, return the error and no rows.
func TestRunErrors(t *testing.T) {
	bad := errors.New("no such model")
	base := Options{Threads: []int{1}, Prompts: []int{4}, Gens: []int{2}, Depths: []int{0}, Reps: 1, CeilingBytes: 1 << 20}
	o := base
	o.Models = []Model{{Name: "x", Open: func() (*model.Model, error) { return nil, bad }}}
	if rows, _, err := Run(context.Background(), o); !errors.Is(err, bad) || rows != nil {
		t.Errorf("open failing: %v, %d rows", err, len(rows))
	}
	for name, f := range map[string]func(*Options){
		"no models": func(o *Options) { o.Models = nil },
		"no reps":   func(o *Options) { o.Reps = 0 },
		"no open":   func(o *Options) { o.Models[0].Open = nil },
	} {
		o := base
		o.Models = []Model{tiny(t, kernel.Q8)}
		f(&o)
		if _, _, err := Run(context.Background(), o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// a cancelled context stops before the first timed run
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = base
	o.Models = []Model{tiny(t, kernel.Q8)}
	if _, _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestDTypeLabel: a model's formats named by the base and what differs.
func TestDTypeLabel(t *testing.T) {
	o := model.LoadOptions{Formats: model.Formats{DType: kernel.Q8, AttnDType: kernel.Q8, FFNDType: kernel.Q8, ExpertDType: kernel.Q4, HeadDType: kernel.Q8}}
	if got := DTypeLabel(o); got != "q8 (experts q4)" {
		t.Errorf("DTypeLabel = %q", got)
	}
	if got := ParamsLabel(2_450_000_000); got != "2.45 B" {
		t.Errorf("ParamsLabel = %q", got)
	}
}
