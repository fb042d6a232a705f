package endtoend

import (
	"context"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	_ "github.com/ktune/ktune/kernels/all"
)

// slowProfile chooses the float64 reference for every q4 matrix-vector
// product: a profile that makes the engine slower (a planted loss). Its
// entries lie every 4× in n and k, so that every shape of the model is
// within profile.MaxShapeDistance of one.
func slowProfile() *profile.Profile {
	p := profile.NewProfile("test", kernel.DefaultClasses)
	for n := 16; n <= 1<<18; n *= 4 {
		for k := 16; k <= 1<<18; k *= 4 {
			p.Entries = append(p.Entries, profile.Entry{Op: "gemm.gemv", DType: kernel.Q4, Class: kernel.ClassF32,
				Shape: kernel.MakeShape([]string{"m", "n", "k"}, 1, n, k), Threads: 1,
				Best: profile.Result{Variant: "reference", Threads: 1, Median: 1e-6}})
		}
	}
	return p
}

// TestEndToEnd: the tiny model timed with a profile and without; a profile
// that runs the reference is a loss, and the chooser in force before is
// restored. (Judge's rule: profile.TestJudge.)
func TestEndToEnd(t *testing.T) {
	cfg, err := arch.Load(golden.Load(t, golden.TinyModel)[0].Dir())
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Config: cfg, Rounds: 3, Prompts: []int{16}, Gen: 8, Threads: []int{1}, MinTime: 20 * time.Millisecond}
	rec, err := Run(context.Background(), slowProfile(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != profile.VerdictLoss || len(rec.Rows) != 2 || rec.Rounds != 3 {
		t.Errorf("reference profile: %+v, want a loss over 2 rows", rec)
	}
	for _, r := range rec.Rows {
		t.Logf("%s t=%d: %.0f with, %.0f without, ratios %.3f", r.Test, r.Threads, r.With, r.Without, r.Ratios)
	}
}
