package roofline

// Kernel points: a measured run of a registered variant placed on the
// roofline by its FLOP and byte counts (the registry's Cost contract).

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
)

// Point is one kernel run: what it computes and moves per run (from
// Variant.CostAt) and how long a run took (the median).
type Point struct {
	Label   string  `json:"label"`
	Op      string  `json:"op"`
	Variant string  `json:"variant"`
	DType   string  `json:"dtype"`
	Class   string  `json:"class"` // accuracy class: which compute roof applies
	Shape   string  `json:"shape"`
	Threads int     `json:"threads"`
	Cold    bool    `json:"cold"` // caches flushed before each run
	FLOPs   float64 `json:"flops"`
	Bytes   float64 `json:"bytes"`
	// Footprint is the distinct bytes a run touches (0: Bytes): what must
	// fit a cache level for a warm run to be held to that level's roof.
	Footprint float64 `json:"footprint,omitempty"`
	Seconds   float64 `json:"seconds"`
}

// AI is the arithmetic intensity, FLOPs per byte (0 without bytes).
func (p Point) AI() float64 { return kernel.Cost{FLOPs: p.FLOPs, Bytes: p.Bytes}.Intensity() }

// GFLOPS is the achieved rate (0 without a time).
func (p Point) GFLOPS() float64 {
	if p.Seconds <= 0 {
		return 0
	}
	return p.FLOPs / p.Seconds / 1e9
}

// GBs is the achieved bandwidth by the byte count.
func (p Point) GBs() float64 {
	if p.Seconds <= 0 {
		return 0
	}
	return p.Bytes / p.Seconds / 1e9
}

// Families are the op families a roofline plot tells apart, in legend
// order; a point whose op is in none of them is "other".
var Families = []string{"gemm", "moe", "kda", "mla", "norm", "other"}

// Family is the point's op family: the part of Op before the dot when it
// is one of Families, else "other".
func (p Point) Family() string {
	f, _, _ := strings.Cut(p.Op, ".")
	if f != "other" && slices.Contains(Families, f) {
		return f
	}
	return "other"
}

// OverRoof is the fraction of its roof above which a point is flagged on
// the plot (and the tuner's reports say "above roof"): beyond it the FLOP
// or byte count, the roof model or the ceilings are wrong, not the timing.
const OverRoof = 1.05

// Roof is the attainable rate of the point (GFLOP/s, GOP/s for int8) and
// what bounds it, by the tuner's rule (RoofFraction): the lower of the
// compute peak of its accuracy class at its thread count (the f32 FMA peak
// for f32 and for classes the machine has no peak for) and its intensity
// times the read bandwidth of the level it ran from, DRAM for cold runs,
// else the smallest cache level whose capacity at its thread count holds
// its working set (Ceilings.RoofAt). bound is that level ("L1", "L2",
// "L3", "DRAM") or "compute". It returns 0, "" when the point or the
// ceilings lack a figure.
func (p Point) Roof(c *Ceilings) (gflops float64, bound string) {
	if c == nil || !(p.FLOPs > 0) || !(p.Bytes > 0) {
		return 0, ""
	}
	t := max(p.Threads, 1)
	compute := "f32"
	if p.Class != "f32" && p.Class != "" && c.PeakFLOPs(p.Class, t) > 0 {
		compute = p.Class
	}
	fp := p.Footprint
	if !(fp > 0) {
		fp = p.Bytes
	}
	roof, bound := c.RoofAt(p.AI(), fp, t, p.Cold, compute)
	if !(roof > 0) || math.IsInf(roof, 0) {
		return 0, ""
	}
	return roof, bound
}

// RoofCell is the point's fraction of its roof as the tuner's reports
// print it: "84% L2", "61% compute", past OverRoof "above roof (237% of
// L3)", and "-" when unknown.
func (p Point) RoofCell(c *Ceilings) string {
	roof, bound := p.Roof(c)
	if !(roof > 0) || !(p.GFLOPS() > 0) {
		return "-"
	}
	f := p.GFLOPS() / roof
	if f > OverRoof {
		return fmt.Sprintf("above roof (%.0f%% of %s)", 100*f, bound)
	}
	return fmt.Sprintf("%.0f%% %s", 100*f, bound)
}

// PointSpec names a kernel run to measure: an op at a shape and dtype,
// run with the default variant (kernel.Choose).
type PointSpec struct {
	Label string
	Op    string
	DType kernel.DType
	Shape kernel.Shape
	// Cold flushes the caches before each timed run: a decode step finds
	// its weights, state or KV cache in DRAM because the rest of the
	// forward pass evicted them.
	Cold bool
}

// KimiPoints lists the kernel points of the seed's picture at the shapes
// of s (arch.Kimi48B().Shapes()): MoE decode, KDA decode and prefill, MLA
// decode at 4K/32K/128K of context, GEMM prefill and GEMV decode. quick
// shortens the prefills and builds the MoE block with 32 experts instead
// of all of them (a decode step touches top-k plus the shared expert
// either way, and the caches are flushed, so its point barely moves; the
// random weights of 256 experts take long to build).
func KimiPoints(s arch.Shapes, quick bool) []PointSpec {
	mk := kernel.MakeShape
	experts, prefill := s.Experts, 512
	if quick {
		experts, prefill = min(s.Experts, 32), 128
	}
	var out []PointSpec
	if s.Experts > 0 {
		out = append(out, PointSpec{Label: "MoE decode", Op: "moe.block", DType: kernel.Q4, Cold: true,
			Shape: mk([]string{"n", "e", "k", "c", "i"}, 1, experts, s.TopK, s.Hidden, s.ExpertInter)})
	}
	h, d := s.KDAHeads, s.KDAHeadDim
	out = append(out,
		PointSpec{Label: "KDA decode", Op: "kda.decode", DType: kernel.F32, Cold: true,
			Shape: mk([]string{"b", "h", "dk", "dv"}, 1, h, d, d)},
		PointSpec{Label: "KDA prefill", Op: "kda.prefill", DType: kernel.F32,
			Shape: mk([]string{"b", "t", "h", "dk", "dv"}, 1, prefill, h, d, d)},
	)
	for _, ctx := range []int{4 << 10, 32 << 10, 128 << 10} {
		out = append(out, PointSpec{Label: fmt.Sprintf("MLA decode %dK", ctx>>10), Op: "mla.decode", DType: kernel.F32, Cold: true,
			Shape: mk([]string{"b", "c", "nh", "r", "dr"}, 1, ctx, s.MLAHeads, s.KVLoraRank, s.QKRope)})
	}
	out = append(out,
		PointSpec{Label: "GEMM prefill", Op: "gemm.gemm", DType: kernel.Q8,
			Shape: mk([]string{"m", "n", "k"}, prefill, s.KDAProj, s.Hidden)},
		PointSpec{Label: "GEMV decode", Op: "gemm.gemv", DType: kernel.Q4, Cold: true,
			Shape: mk([]string{"m", "n", "k"}, 1, s.KDAProj, s.Hidden)},
	)
	return out
}

// PointOptions control MeasurePoints.
type PointOptions struct {
	Threads int           // default: the pool size
	MinTime time.Duration // per point (default 100 ms; quick 30 ms)
	Reps    int           // at least this many runs (default 5; quick 3)
	Quick   bool
	// FlushBytes is the buffer read between cold runs (default the larger
	// of 64 MiB and twice the L3, at most 1 GiB).
	FlushBytes int64
	Progress   func(done, total int, what string)
}

// MeasurePoints builds each spec's problem (op.NewProblem), instantiates
// the default variant (kernel.Choose), checks it runs, and times it: the
// median of cold runs (caches flushed before each) or of warm runs. Specs
// whose op is not registered or has no usable variant are skipped with an
// error listed in skipped.
func MeasurePoints(ctx context.Context, specs []PointSpec, o PointOptions) (pts []Point, skipped []error, err error) {
	info := cpu.Get()
	if o.Threads < 1 {
		o.Threads = runtime.NumCPU()
	}
	if o.MinTime <= 0 {
		o.MinTime = 100 * time.Millisecond
		if o.Quick {
			o.MinTime = 30 * time.Millisecond
		}
	}
	if o.Reps <= 0 {
		o.Reps = 5
		if o.Quick {
			o.Reps = 3
		}
	}
	var flush []byte
	for i, sp := range specs {
		if err := ctx.Err(); err != nil {
			return pts, skipped, err
		}
		if sp.Cold && flush == nil {
			n := o.FlushBytes
			if n <= 0 {
				n = min(max(64<<20, 2*info.Cache.L3), 1<<30)
			}
			n = n / (readStreams * ReadAlign) * (readStreams * ReadAlign)
			flush = make([]byte, n)
			for j := range flush {
				flush[j] = byte(j)
			}
		}
		p, e := measurePoint(sp, o, flush)
		if e != nil {
			skipped = append(skipped, fmt.Errorf("%s: %w", sp.Label, e))
		} else {
			pts = append(pts, p)
		}
		if o.Progress != nil {
			o.Progress(i+1, len(specs), sp.Label)
		}
		runtime.GC()
		debug.FreeOSMemory()
	}
	return pts, skipped, nil
}

func measurePoint(sp PointSpec, o PointOptions, flush []byte) (Point, error) {
	op := kernel.LookupOp(sp.Op)
	if op == nil || op.NewProblem == nil {
		return Point{}, fmt.Errorf("op %s is not registered", sp.Op)
	}
	ch := kernel.Choose(sp.Op, sp.DType, sp.Shape, o.Threads)
	if ch.Variant == nil {
		return Point{}, fmt.Errorf("no variant of %s serves %s", sp.Op, sp.DType)
	}
	prob, err := op.NewProblem(sp.Shape, sp.DType, 1)
	if err != nil {
		return Point{}, err
	}
	inst, err := ch.Variant.Instantiate(prob, ch.Config)
	if err != nil {
		return Point{}, err
	}
	cost := ch.Variant.CostAt(sp.Shape, sp.DType, ch.Config)
	pt := Point{Label: sp.Label, Op: sp.Op, Variant: ch.Variant.Name, DType: string(sp.DType), Class: string(ch.Variant.Class),
		Shape: sp.Shape.String(), Threads: ch.Config.Threads, Cold: sp.Cold, FLOPs: cost.FLOPs, Bytes: cost.Bytes, Footprint: cost.Footprint}
	if cost.FLOPs <= 0 || cost.Bytes <= 0 {
		return Point{}, fmt.Errorf("%s counts %g FLOPs and %g bytes", ch.Variant.ID(), cost.FLOPs, cost.Bytes)
	}
	prob.Reset()
	inst.Run() // warm-up: first-touch of scratch, page faults
	var times []float64
	deadline := time.Now().Add(o.MinTime)
	for len(times) < o.Reps || time.Now().Before(deadline) && len(times) < 1000 {
		prob.Reset()
		if sp.Cold {
			ReadParallel(flush, readStreams, o.Threads)
		}
		start := time.Now()
		inst.Run()
		times = append(times, time.Since(start).Seconds())
	}
	sort.Float64s(times)
	pt.Seconds = times[len(times)/2]
	return pt, nil
}
