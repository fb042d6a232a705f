// Package bench is the harness behind krun bench: it times prompt
// processing (pp: one prefill of p tokens) and token generation (tg: n
// decode steps of one sequence) of each model for every combination of
// thread count, context depth, prompt length and generation length, and
// compares the rates with the weights' bandwidth bound (llama-bench style).
// It returns rows; flags and printing are the command's.
package bench

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/ktune/ktune/model"
)

// Default buffer sizes of the two ceilings.
const (
	DefaultCeilingBytes     = 512 << 20 // the read ceiling's buffer
	DefaultDiskCeilingBytes = 256 << 20 // what the disk read ceiling reads
)

// Options say what Run measures.
type Options struct {
	// Models are measured in turn, each opened when its turn comes and
	// closed after its rows.
	Models []Model
	// Path is the model file or folder the models load ("": synthetic
	// weights in memory). A row that read from storage measures the disk
	// read ceiling on it, once per Run, for its paged bound.
	Path string

	Threads []int // thread counts; the read ceiling is measured at each
	Prompts []int // prompt lengths: a pp row each (0: none)
	Gens    []int // generated tokens: a tg row each (0: none)
	Depths  []int // context depths (untimed) before each test
	Reps    int   // timed repetitions of each test (at least 1)

	// NoWarmup skips the untimed run before each test (llama-bench's
	// --no-warmup).
	NoWarmup bool
	// Ops adds per-op breakdowns (OpRows) of the first prompt length's
	// prefill and the first generation length's decode at each thread
	// count and depth.
	Ops bool
	// NoPrefetch turns a model file's expert prefetch off
	// (model.SetPrefetch).
	NoPrefetch bool
	// LockHot locks each MoE layer's LockHot most-routed experts (by an
	// untimed 64-token prefill) in RAM before measuring (0: none).
	LockHot int

	// CeilingBytes is the buffer the read ceiling streams (0:
	// DefaultCeilingBytes); DiskCeilingBytes what the disk read ceiling
	// reads (0: DefaultDiskCeilingBytes).
	CeilingBytes, DiskCeilingBytes int

	// Around, if set, is called for each model after it is loaded (and
	// its experts locked), before it is measured (krun bench starts its
	// --cpuprofile there); stop is called after its measurements and its
	// closing, with their error (nil: success).
	Around func(m Model) (stop func(error) error, err error)
	// Report says what Run does as it goes.
	Report Report
}

// A Model is one model to measure.
type Model struct {
	Name   string // the rows' model column
	DType  string // the rows' dtype column ("": DTypeLabel of its load options)
	Preset string // the preset it is built in ("": a model file's own formats)
	// Open builds or loads it.
	Open func() (*model.Model, error)
}

// Report is what Run tells as it goes; a nil field hears nothing. Each
// is called on Run's goroutine.
type Report struct {
	// Loaded: a model is open, before its weights' preload is waited for.
	Loaded func(Loaded)
	// Preloaded: the model's preload (model.WaitPreload) has finished.
	Preloaded func(name string, p model.PreloadStats)
	// LockedHot: Options.LockHot's experts are locked; err is the OS's
	// refusal, measuring goes on with the bytes locked.
	LockedHot func(n int, locked int64, err error)
	// DiskCeiling: the disk read ceiling was measured (or could not be).
	DiskCeiling func(DiskCeiling)
	// Row: a row has been measured (in the order Run returns them).
	Row func(Row)
}

// Loaded describes an opened model.
type Loaded struct {
	Name     string
	Copied   int64 // bytes of weights copied into memory (0: mapped or built)
	Prefetch bool  // the expert prefetch is on
	// Cache is the model's expert cache (Slots 0: none); with the prefetch
	// off it is unused (its hooks are the prefetch's).
	Cache model.ExpertCacheStats
}

// DiskCeiling is one measurement of the disk read ceiling.
type DiskCeiling struct {
	BytesPerSec float64 // 0 with Err
	Err         error
	Path        string
	Bytes       int // what it reads
	Block       int // in reads of Block bytes (0: DiskBlock)
	Queue       int // reads in flight
}

// Row is one line of bench's table.
type Row struct {
	Model      string    `json:"model"`
	DType      string    `json:"dtype"`
	Params     string    `json:"params"`
	Threads    int       `json:"threads"`
	Test       string    `json:"test"` // pp512, tg128, with @dN for a context depth
	NPrompt    int       `json:"n_prompt"`
	NGen       int       `json:"n_gen"`
	Depth      int       `json:"n_depth"`
	Samples    []float64 `json:"samples_ts"`
	Mean       float64   `json:"avg_ts"`
	SD         float64   `json:"stddev_ts"`
	BytesTok   int64     `json:"weight_bytes_per_token,omitempty"`
	CeilingGBs float64   `json:"read_ceiling_gbs,omitempty"`
	BoundFrac  float64   `json:"bound_frac,omitempty"`
	// What the timed runs paged in (paged.go); nil where the OS does not
	// say. PageInsTok: major page faults per token; DiskBytesTok and
	// DiskGBs: bytes read from storage per token and per second.
	PageInsTok   *float64 `json:"page_ins_per_token"`
	DiskBytesTok *float64 `json:"disk_read_bytes_per_token"`
	DiskGBs      *float64 `json:"disk_read_gbs"`
	// Prefetch: the model's expert prefetch was on.
	Prefetch bool `json:"prefetch"`
	// When the row read from storage: the disk read ceiling and the
	// fraction of the paged bound, (resident bytes / read ceiling +
	// missing bytes / disk ceiling) × tokens/s, missing being the bytes
	// read per token, at most BytesTok.
	DiskCeilingGBs float64 `json:"disk_ceiling_gbs,omitempty"`
	PagedBoundFrac float64 `json:"paged_bound_frac,omitempty"`
	// ExpertCacheHit: of the routed experts the timed runs looked up in
	// the model's expert cache, the fraction found there; nil without one.
	ExpertCacheHit *float64 `json:"expert_cache_hit_frac,omitempty"`
}

// OpRow is one line of the per-op breakdown.
type OpRow struct {
	Model     string  `json:"model"`
	DType     string  `json:"dtype"`
	Threads   int     `json:"threads"`
	Test      string  `json:"test"` // the run broken down: tg16 or pp64
	Op        string  `json:"op"`
	Layer     int     `json:"layer"` // -1: the family over all layers
	MsPerTok  float64 `json:"ms_per_token"`
	Share     float64 `json:"share"`
	BytesTok  int64   `json:"weight_bytes_per_token"`
	RoofMs    float64 `json:"roof_ms_per_token"`
	RoofFrac  float64 `json:"roof_frac"`
	TokensRun int     `json:"tokens"`
}

// Run measures the read ceiling at each thread count (before a model
// takes the memory), then each model in turn: for each thread count and
// depth, a pp row per prompt length, a tg row per generation length and,
// with Ops, their breakdowns. It returns the rows in that order.
func Run(ctx context.Context, o Options) ([]Row, []OpRow, error) {
	if err := o.check(); err != nil {
		return nil, nil, err
	}
	r := &runner{o: o.withDefaults()}
	r.measureCeilings()
	debug.FreeOSMemory()
	for _, spec := range o.Models {
		if err := r.model(ctx, spec); err != nil {
			return nil, nil, err
		}
		debug.FreeOSMemory() // the closed model's memory
	}
	return r.rows, r.ops, nil
}

// check refuses options that measure nothing or cannot be run.
func (o *Options) check() error {
	switch {
	case len(o.Models) == 0:
		return errors.New("bench: no models")
	case len(o.Threads) == 0 || len(o.Depths) == 0:
		return errors.New("bench: no thread counts or depths")
	case o.Reps < 1:
		return errors.New("bench: fewer than 1 repetition")
	}
	for _, m := range o.Models {
		if m.Open == nil {
			return errors.New("bench: model " + m.Name + " has no Open")
		}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.CeilingBytes <= 0 {
		o.CeilingBytes = DefaultCeilingBytes
	}
	if o.DiskCeilingBytes <= 0 {
		o.DiskCeilingBytes = DefaultDiskCeilingBytes
	}
	return o
}

// runner is one Run's state.
type runner struct {
	o       Options
	ceiling map[int]float64 // the read ceiling (bytes/s) by thread count
	// disk is the disk read ceiling (bytes/s), measured once when a row
	// first pages in (0: not yet, <0: not measurable), in reads of
	// diskBlock bytes (the model's expert matrices; 0: DiskBlock).
	disk      float64
	diskBlock int
	rows      []Row
	ops       []OpRow
}

// subject is the model being measured, with what its rows share.
type subject struct {
	m        *model.Model
	base     Row   // Model, DType, Params, Prefetch
	bytesTok int64 // weight bytes one decode token reads
}

// model opens spec, readies it and measures it at every thread count and
// depth, then closes it.
func (r *runner) model(ctx context.Context, spec Model) error {
	m, err := spec.Open()
	if err != nil {
		return err
	}
	s, err := r.ready(m, spec)
	if err != nil {
		m.Close()
		return err
	}
	stop := func(error) error { return nil }
	if r.o.Around != nil {
		if stop, err = r.o.Around(spec); err != nil {
			m.Close()
			return err
		}
	}
	err = r.sweep(ctx, s)
	m.Close()
	if serr := stop(err); err == nil {
		err = serr
	}
	return err
}

// ready labels m's rows, sets its prefetch, waits for its preload (rows
// are measured from a warmed page cache, as a model that has run a while
// is: model.PreloadEnv; the first tokens of a cold start are slower) and
// locks its hot experts.
func (r *runner) ready(m *model.Model, spec Model) (*subject, error) {
	dt := spec.DType
	if dt == "" {
		dt = DTypeLabel(m.Options())
	}
	if r.o.NoPrefetch {
		m.SetPrefetch(false)
	}
	s := &subject{m: m, bytesTok: m.DecodeWeightBytes(),
		base: Row{Model: spec.Name, DType: dt, Params: ParamsLabel(m.Cfg.ParamCount().Total), Prefetch: m.Prefetching()}}
	r.diskBlock = int(m.ExpertMatrixBytes())
	if f := r.o.Report.Loaded; f != nil {
		f(Loaded{Name: spec.Name, Copied: m.WeightsCopied(), Prefetch: s.base.Prefetch, Cache: m.ExpertCache()})
	}
	p := m.WaitPreload()
	if f := r.o.Report.Preloaded; f != nil {
		f(spec.Name, p)
	}
	return s, r.lockHot(m)
}

// lockHot runs Options.LockHot: an untimed 64-token prefill to learn the
// routing, then each MoE layer's LockHot most-routed experts locked
// (model.LockHotExperts); a refusal by the OS is reported and measuring
// goes on with what was locked.
func (r *runner) lockHot(m *model.Model) error {
	if r.o.LockHot <= 0 {
		return nil
	}
	st := m.NewState(0)
	_, err := m.PrefillWith(st, benchIDs(64, m.Shapes.Vocab, 0), model.PrefillOptions{EveryRow: true}) // every layer's heat
	st.Free()
	if err != nil {
		return err
	}
	n, err := m.LockHotExperts(r.o.LockHot)
	if f := r.o.Report.LockedHot; f != nil {
		f(r.o.LockHot, n, err)
	}
	return nil
}

// emit adds a measured row and reports it.
func (r *runner) emit(row Row) {
	r.rows = append(r.rows, row)
	if f := r.o.Report.Row; f != nil {
		f(row)
	}
}
