package krun

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cpu"
	ggufpkg "github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/kfile"
	"github.com/ktune/ktune/roofline"
)

// BenchOptions are bench's flags.
type BenchOptions struct {
	*cli.Factory
	Model     string
	Synthetic bool
	Layers    int
	DTypes    string
	Prompt    string // -p list
	Gen       string // -n list
	Threads   string // -t list
	Reps      int
	Depth     string // -d list
	Format    string
	Ops       bool
	NoVerify  bool
	Load      string
	// NoWarmup skips the untimed run before each test (llama-bench's
	// --no-warmup).
	NoWarmup bool
	// CPUProfile is a file for a pprof CPU profile of the timed runs ("": none).
	CPUProfile string
	// CacheSpill is a folder for the MLA cache's file-backed pages ("": heap).
	CacheSpill string
	// CacheDType is --cache-dtype.
	CacheDType string
	// GGUFRepack is --gguf-repack.
	GGUFRepack string
	// CeilingBytes is the buffer the read ceiling streams (tests shrink it).
	CeilingBytes int
	// NoPrefetch turns a model file's expert prefetch off (--no-prefetch;
	// model.SetPrefetch).
	NoPrefetch bool
	// LockHot is --lock-hot: each MoE layer's N most-routed experts (by an
	// untimed 64-token prefill) locked in RAM before measuring.
	LockHot int
	// DiskCeilingBytes is what the disk read ceiling reads (tests shrink it).
	DiskCeilingBytes int
	// disk is the disk read ceiling (bytes/s), measured once when a row
	// first pages in (0: not yet, <0: not measurable), in reads of
	// diskBlock bytes (the model's expert matrices; 0: 4 MiB).
	disk      float64
	diskBlock int

	// synthConfig makes the synthetic config (tests use a tiny one).
	synthConfig func(layers int) (*arch.Config, error)
	// verified: check verified the .kt file (loading need not again).
	verified bool
	// chooser is the tuning profile the models follow (nil: none).
	chooser kernel.Chooser
}

// NewCmdBench builds `krun bench`.
func NewCmdBench(f *cli.Factory, runF func(*BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{Factory: f, CeilingBytes: 512 << 20, DiskCeilingBytes: 256 << 20, synthConfig: model.SyntheticConfig}
	cmd := &cobra.Command{
		Use:   "bench [MODEL | --synthetic]",
		Short: "Benchmark prefill and decode tokens/s against the bandwidth bound (llama-bench style)",
		Long: cli.Doc(`
			Time prompt processing (pp: one prefill of -p tokens) and token
			generation (tg: -n decode steps of one sequence) for every
			combination of the list flags, -r times each, after a context of -d
			tokens (untimed), and report tokens/s as mean ± sd. Each test
			starts with an untimed warm-up run (a prefill of -p tokens, one
			decode step), as llama-bench's; --no-warmup skips it.

			MODEL is a .kt file or a checkpoint folder (converted with each
			--dtype preset); --synthetic builds random weights at Kimi Linear's
			real widths (hidden 2304, 32 heads, 256 experts of 1024, vocabulary
			163840) cut to --layers layers, in each --dtype preset.

			tg rows also report the fraction of the bandwidth bound: the weight
			bytes one decode token reads (every matrix, the top-k experts, one
			embedding row) times tokens/s, divided by the read ceiling measured
			in this run at the same thread count (a 512 MiB buffer streamed by
			roofline.ReadParallel, best of 3). pp rows report the same for the
			weights the prefill pass read (every matrix, and each expert its
			prompt's tokens touched, once): a floor on the pass's time, which
			its compute adds to. --ops adds a per-op breakdown of
			one decode token (time per op family and each op's roof: its weight
			bytes at the read ceiling) and of the first prefill (per op family
			and per layer, in ms per prompt token). --cpuprofile FILE writes a
			pprof CPU profile of the measurements (model building and the read
			ceiling excluded). --cache-spill DIR keeps the MLA caches
			in files in DIR (mapped) instead of the heap, to time the spilled
			cache.

			Every row also reports what the timed runs paged in: major page
			faults per token (getrusage ru_majflt) and, on Linux, the bytes
			read from storage per token and their rate (/proc/self/io
			read_bytes over the timed seconds). A model file larger than the
			free RAM pages its cold experts in as tokens route to them; each
			MoE layer's chosen experts are prefetched (madvise WILLNEED) as
			soon as the router has chosen, unless --no-prefetch (or
			KTUNE_PREFETCH=0). When a row read from storage, it adds the paged
			bound: its weights resident at the read ceiling plus the
			missing ones (the bytes read per token, at most the weights) at
			the disk read ceiling, measured once (Linux: 256 MiB of the model
			file in O_DIRECT reads of one expert matrix each, spread over
			the file, 8 in flight: what paged decode reads). --lock-hot N locks
			each MoE layer's N most-routed experts (by an untimed 64-token
			prefill) in RAM first, where RLIMIT_MEMLOCK allows (a refusal is
			reported, not fatal). See docs/larger-than-ram.md.

			Every flag and the model are checked before anything is
			measured: a .kt file is verified (as generate's loading does,
			unless --no-verify), a checkpoint folder's config and tensor
			table are read, and each model's memory budget is compared with
			the available memory (a refusal names the preset's formats and
			the presets, or the layer count, that fit).
		`) + exitCodes,
		Example: "  krun bench --synthetic --dtype q4,q8 -t 1,2\n" +
			"  krun bench kimi-q4.kt -p 512 -n 128 -t 1,2 -r 5 -d 0,4096 -o csv\n" +
			"  krun bench --synthetic --dtype q4 -t 2 --ops",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Model = args[0]
			}
			if (opts.Model == "") == !opts.Synthetic {
				return cli.Usagef("bench: give a MODEL or --synthetic (not both)")
			}
			switch opts.Format {
			case "md", "csv", "json", "text":
			default:
				return cli.Usagef("bench: -o %q; want md, csv, json or text", opts.Format)
			}
			if opts.Reps < 1 {
				return cli.Usagef("bench: -r %d; want at least 1", opts.Reps)
			}
			if opts.Synthetic && (opts.Layers < 1 || opts.Layers > 27) {
				return cli.Usagef("bench: --layers %d; a synthetic model has 1 to 27 layers", opts.Layers)
			}
			for _, f := range []string{"load", "no-verify", "gguf-repack"} {
				if opts.Synthetic && cmd.Flags().Changed(f) {
					return cli.Usagef("bench: --%s is for a model file; --synthetic builds random weights in memory and loads no file", f)
				}
			}
			if _, err := cacheDType(opts.CacheDType); err != nil {
				return err
			}
			if _, err := loadMode(opts.Load); err != nil {
				return err
			}
			if opts.LockHot < 0 {
				return cli.Usagef("bench: --lock-hot %d; want 0 or more", opts.LockHot)
			}
			if err := writableDir("--cpuprofile", opts.CPUProfile); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runBench(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Synthetic, "synthetic", false, "random weights at Kimi Linear widths")
	fl.IntVar(&opts.Layers, "layers", 3, "synthetic: decoder layers (layer 0 dense, Kimi's 3:1 KDA/MLA pattern, the last MLA; all but 0 MoE)")
	fl.StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage)
	fl.StringVar(&opts.DTypes, "dtype", "q4,q8", "presets to benchmark (synthetic or a checkpoint folder): "+strings.Join(PresetNames(), ", "))
	fl.StringVarP(&opts.Prompt, "n-prompt", "p", "64", "prompt lengths, comma-separated (0: no pp rows)")
	fl.StringVarP(&opts.Gen, "n-gen", "n", "16", "generated tokens, comma-separated (0: no tg rows)")
	fl.StringVarP(&opts.Threads, "threads", "t", "", "thread counts, e.g. 1,2 or 1-4 (default the usable CPUs, see ktune detect)")
	fl.IntVarP(&opts.Reps, "repetitions", "r", 3, "repetitions of each test")
	fl.StringVarP(&opts.Depth, "n-depth", "d", "0", "context depths before each test, comma-separated")
	fl.StringVarP(&opts.Format, "output", "o", "md", "output: md, csv, json or text")
	fl.BoolVar(&opts.Ops, "ops", false, "add a per-op breakdown of a decode token against each op's roof")
	fl.BoolVar(&opts.NoVerify, "no-verify", false, "skip a model file's checks, which read the whole file: a .kt file's tensor checksums and scale checks, a GGUF file's scale scan (made once per file and remembered); a corrupt file then fails later, or gives NaN logits")
	fl.StringVar(&opts.Load, "load", "auto", loadUsage)
	fl.BoolVar(&opts.NoWarmup, "no-warmup", false, "skip the untimed run before each test (as llama-bench's --no-warmup)")
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the timed runs to `FILE` (samples outside them are labelled krun=setup)")
	fl.StringVar(&opts.CacheSpill, "cache-spill", "", "keep the MLA caches in files in `DIR` (mapped) instead of the heap")
	fl.StringVar(&opts.CacheDType, "cache-dtype", "bf16", cacheDTypeUsage)
	fl.BoolVar(&opts.NoPrefetch, "no-prefetch", false, "model file: do not prefetch the experts the router chose (madvise WILLNEED)")
	fl.IntVar(&opts.LockHot, "lock-hot", 0, "model file: mlock each MoE layer's `N` most-routed experts before measuring")
	return cmd
}

// BenchRow is one line of bench's table.
type BenchRow struct {
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
	// What the timed runs paged in (bench_pagein.go); nil where the OS
	// does not say. PageInsTok: major page faults per token; DiskBytesTok
	// and DiskGBs: bytes read from storage per token and per second.
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

// diskBlock is the size of one read of the disk ceiling where the model
// says nothing better, and diskQueue how many reads are in flight: about
// what madvise read-ahead and faults' read-around submit (requests of up
// to max_sectors_kb, several queued).
const (
	diskBlock = 4 << 20
	diskQueue = 8
)

// paged fills r's page-in fields from the timed runs' counters d, with
// weight bytes per token bytesTok and the read ceiling (bytes/s).
func (o *BenchOptions) paged(r *BenchRow, d ioDelta, bytesTok int64, ceiling float64) {
	tok := float64(max(d.Tokens, 1))
	if d.MajFlt >= 0 {
		v := float64(d.MajFlt) / tok
		r.PageInsTok = &v
	}
	if d.ReadBytes >= 0 {
		v, g := float64(d.ReadBytes)/tok, float64(d.ReadBytes)/max(d.Secs, 1e-9)/1e9
		r.DiskBytesTok, r.DiskGBs = &v, &g
	}
	if d.ReadBytes <= 0 || o.Model == "" || r.Mean <= 0 || ceiling <= 0 {
		return
	}
	if o.disk == 0 {
		o.disk = -1
		if v, err := diskCeiling(o.Model, o.DiskCeilingBytes, o.diskBlock); err != nil {
			fmt.Fprintf(o.Err, "krun: disk read ceiling not measured: %v\n", err)
		} else {
			o.disk = v
			in := "4 MiB reads"
			if o.diskBlock > 0 {
				in = cli.HumanBytes(int64(o.diskBlock)) + " reads, an expert matrix each"
			}
			fmt.Fprintf(o.Err, "krun: disk read ceiling %.2f GB/s (%s of %s in %s, %d at a time, O_DIRECT)\n", v/1e9, cli.HumanBytes(int64(o.DiskCeilingBytes)), o.Model, in, diskQueue)
		}
	}
	if o.disk <= 0 {
		return
	}
	missing := min(float64(d.ReadBytes)/tok, float64(bytesTok))
	resident := float64(bytesTok) - missing
	r.DiskCeilingGBs = o.disk / 1e9
	r.PagedBoundFrac = (resident/ceiling + missing/o.disk) * r.Mean
}

// OpRow is one line of the --ops breakdown.
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

func parseInts(flag, s string, min int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < min {
			return nil, cli.Usagef("bench: -%s: %q is not a count ≥ %d", flag, f, min)
		}
		out = append(out, v)
	}
	return out, nil
}

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

func runBench(o *BenchOptions) error {
	threads, err := cli.ThreadList(o.Err, "-t", o.Threads, []int{pool.Default().Size()})
	if err != nil {
		return err
	}
	pps, err := parseInts("p", o.Prompt, 0)
	if err != nil {
		return err
	}
	tgs, err := parseInts("n", o.Gen, 0)
	if err != nil {
		return err
	}
	depths, err := parseInts("d", o.Depth, 0)
	if err != nil {
		return err
	}
	dtypes := strings.Split(o.DTypes, ",")
	for _, d := range dtypes {
		if _, err := presetOptions(d); err != nil {
			return cli.Usagef("bench: --dtype: %v", err)
		}
	}
	if slices.Max(pps) == 0 && slices.Max(tgs) == 0 {
		return cli.Usagef("bench: -p and -n are all 0: nothing to measure")
	}
	models, err := o.check(dtypes)
	if err != nil {
		return err
	}
	if err := o.checkLengths(pps, tgs, depths); err != nil {
		return err
	}
	o.chooser = installProfile(o.Factory)

	// ---- the read ceiling at each thread count, measured first (before a
	// model takes the memory)
	ceiling := map[int]float64{}
	ceilingRuns.Add(1)
	{
		buf := make([]byte, o.CeilingBytes)
		for i := 0; i < len(buf); i += 4096 {
			buf[i] = byte(i >> 12)
		}
		for _, t := range threads {
			ceiling[t] = readCeiling(buf, t)
		}
	}
	debug.FreeOSMemory()

	var rows []BenchRow
	var ops []OpRow
	for _, preset := range models {
		m, name, err := o.open(preset)
		if err != nil {
			return err
		}
		dt := preset
		switch {
		case dt == "" && isGGUF(o.Model) && o.Load == "repack":
			dt = "gguf/repack-" + o.GGUFRepack // the file's types, repacked so
		case dt == "" && isGGUF(o.Model):
			dt = "gguf" // the file's types, run in place
		case dt == "":
			dt = dtypeLabel(m.Options())
		}
		params := paramsLabel(m.Cfg.ParamCount().Total)
		bytesTok := m.DecodeWeightBytes()
		if o.NoPrefetch {
			m.SetPrefetch(false)
		}
		prefetch := m.Prefetching()
		o.diskBlock = int(m.ExpertMatrixBytes())
		if !o.Synthetic {
			state := map[bool]string{false: "off", true: "on"}[prefetch]
			where := "mapped"
			if n := m.WeightsCopied(); n > 0 {
				where = "copied into memory (" + cli.HumanBytes(n) + ")"
			}
			fmt.Fprintf(o.Err, "krun: %s: weights %s, expert prefetch %s\n", name, where, state)
			switch c := m.ExpertCache(); {
			case c.Slots > 0 && o.NoPrefetch: // its hooks are the prefetch's: every expert reads the mapping
				fmt.Fprintf(o.Err, "krun: %s: expert cache of %d experts in %s unused (--no-prefetch)\n", name, c.Slots, cli.HumanBytes(c.Bytes))
			case c.Slots > 0:
				fmt.Fprintf(o.Err, "krun: %s: expert cache of %d experts in %s (read with O_DIRECT)\n", name, c.Slots, cli.HumanBytes(c.Bytes))
			}
		}
		// measured from a warmed page cache, as a model that has run a while
		// is (model.PreloadEnv); the first tokens of a cold start are slower
		if p := m.WaitPreload(); p.Planned > 0 {
			fmt.Fprintf(o.Err, "krun: %s: preloaded %s of the weights into memory in %.1f s\n", name, cli.HumanBytes(p.Walked), p.Duration.Seconds())
		}
		if err := o.lockHot(m); err != nil {
			m.Close()
			return err
		}
		stopProfile, err := o.startProfile(preset, len(models))
		if err != nil {
			m.Close()
			return err
		}
		for _, th := range threads {
			m.SetThreads(th)
			profile.UsePlacement(th)
			for _, d := range depths {
				V := m.Shapes.Vocab
				lg := model.PrefillOptions{Logits: warmLogits(V)}
				base := BenchRow{Model: name, DType: dt, Params: params, Threads: th, Depth: d, Prefetch: prefetch}
				at := ""
				if d > 0 {
					at = fmt.Sprintf(" @ d%d", d)
				}
				for _, p := range pps {
					if p == 0 {
						continue
					}
					r := base
					r.Test, r.NPrompt = fmt.Sprintf("pp%d%s", p, at), p
					var passBytes int64 // weights one pass reads: the experts its tokens touched
					var pg ioDelta      // page-ins of the timed passes
					if !o.NoWarmup {    // one untimed pass, as llama-bench: weights paged in, pools and buffers warm
						st := m.NewState(0)
						_, err := m.PrefillWith(st, benchIDs(p, V, 0), lg)
						st.Free()
						if err != nil {
							return err
						}
					}
					for rep := range o.Reps {
						st := m.NewState(0)
						if d > 0 {
							if _, err := m.PrefillWith(st, benchIDs(d, V, rep), lg); err != nil {
								return err
							}
						}
						before := m.ExpertCounts()
						io0, t0 := sampleIO(), time.Now()
						_, err := m.PrefillWith(st, benchIDs(p, V, rep+1), lg)
						secs := time.Since(t0).Seconds()
						pg.add(io0, sampleIO(), secs, p)
						st.Free()
						if err != nil {
							return err
						}
						passBytes = max(passBytes, m.PassWeightBytes(m.ExpertCountsSince(before)))
						r.Samples = append(r.Samples, float64(p)/secs)
					}
					r.Mean, r.SD = meanSD(r.Samples)
					// of bound: the pass's weights at the read ceiling (prompt
					// compute not counted: a floor, not the whole cost)
					r.BytesTok, r.CeilingGBs = passBytes/int64(p), ceiling[th]/1e9
					r.BoundFrac = float64(passBytes) / float64(p) * r.Mean / ceiling[th]
					o.paged(&r, pg, passBytes/int64(p), ceiling[th])
					rows = append(rows, r)
					fmt.Fprintf(o.Err, "krun: %s %s t=%d %s: %.2f ± %.2f tokens/s, %s of the weights' read bound%s\n", name, dt, th, r.Test, r.Mean, r.SD, boundPct(r.BoundFrac), pagedNote(&r))
				}
				for _, n := range tgs {
					if n == 0 {
						continue
					}
					r := base
					r.Test, r.NGen = fmt.Sprintf("tg%d%s", n, at), n
					if !o.NoWarmup { // one untimed decode step after a short prompt, as llama-bench
						if _, err := decodeRun(m, 0, 1, V, 0, nil, nil); err != nil {
							return err
						}
					}
					var pg ioDelta // page-ins of the timed decode steps
					c0 := m.ExpertCache()
					for rep := range o.Reps {
						secs, err := decodeRun(m, d, n, V, rep, nil, &pg)
						if err != nil {
							return err
						}
						r.Samples = append(r.Samples, float64(n)/secs)
					}
					r.ExpertCacheHit = cacheHit(c0, m.ExpertCache())
					r.Mean, r.SD = meanSD(r.Samples)
					r.BytesTok, r.CeilingGBs = bytesTok, ceiling[th]/1e9
					r.BoundFrac = float64(bytesTok) * r.Mean / ceiling[th]
					o.paged(&r, pg, bytesTok, ceiling[th])
					rows = append(rows, r)
					fmt.Fprintf(o.Err, "krun: %s %s t=%d %s: %.2f ± %.2f tokens/s, %s of the bound%s\n", name, dt, th, r.Test, r.Mean, r.SD, boundPct(r.BoundFrac), pagedNote(&r))
				}
				if o.Ops && len(pps) > 0 && pps[0] > 0 {
					pr, err := prefillBreakdown(m, name, dt, th, d, pps[0])
					if err != nil {
						return err
					}
					ops = append(ops, pr...)
				}
				if o.Ops && len(tgs) > 0 && tgs[0] > 0 {
					ops = append(ops, opsBreakdown(m, name, dt, th, d, tgs[0], ceiling[th])...)
				}
			}
		}
		m.Close()
		m = nil
		if err := stopProfile(); err != nil {
			return err
		}
		debug.FreeOSMemory()
	}
	return o.write(rows, ops)
}

// ceilingRuns counts the read-ceiling measurements started (tests check
// that a refused run measured nothing).
var ceilingRuns atomic.Int64

// availableMemory is the memory a model may budget (cpu.AvailableMemory;
// 0: unknown; tests replace it).
var availableMemory = cpu.AvailableMemory

// checkLengths refuses a depth and prompt or generation that run past
// the model's maximum length (model_max_length, when the config has one).
func (o *BenchOptions) checkLengths(pps, tgs, depths []int) error {
	var cfg *arch.Config
	var err error
	if o.Synthetic {
		cfg, err = o.synthConfig(o.Layers)
	} else {
		cfg, err = peekConfig(o.Model)
	}
	if err != nil {
		return err
	}
	limit := cfg.ModelMaxLength
	if limit <= 0 {
		return nil
	}
	d := slices.Max(depths)
	if need := max(d, 1) + max(slices.Max(pps), slices.Max(tgs)); need > limit {
		return cli.Usagef("bench: -d %d with -p %d / -n %d needs %d tokens, past the model's maximum length %d", d, slices.Max(pps), slices.Max(tgs), need, limit)
	}
	return nil
}

// check checks the model against everything that can be known before
// measuring — the file verified, the checkpoint's config and tensor
// table, each preset's memory budget — and returns the presets to run
// ("" alone for a .kt file: its own formats).
func (o *BenchOptions) check(dtypes []string) ([]string, error) {
	avail := availableMemory()
	if o.Synthetic {
		cfg, err := o.synthConfig(o.Layers)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		for _, preset := range dtypes {
			if err := o.checkFits(cfg, preset, avail); err != nil {
				return nil, err
			}
		}
		return dtypes, nil
	}
	file, err := isModelFile(o.Model)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	if file && isGGUF(o.Model) {
		f, err := ggufpkg.Open(o.Model)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		defer f.Close()
		cfg, err := model.ConfigFromGGUF(f)
		if err == nil {
			_, err = model.NewGGUFSource(f, cfg, 1)
		}
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		return []string{""}, nil // the file's own types
	}
	if file {
		f, err := kfile.Open(o.Model)
		if err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		defer f.Close()
		if !o.NoVerify {
			if err := model.VerifyFile(f, pool.Default().Size()); err != nil {
				return nil, &cli.UsageError{Err: err}
			}
			o.verified = true
		} else if _, err := arch.Parse(f.Header.Config, o.Model+" (stored config.json)"); err != nil {
			return nil, &cli.UsageError{Err: err}
		}
		return []string{""}, nil
	}
	cfg, err := arch.Load(o.Model)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	src, err := model.NewCheckpointSource(o.Model, cfg, 1)
	if err != nil {
		return nil, &cli.UsageError{Err: err}
	}
	defer src.Close()
	// the small tensors and the embedding table are read as they are
	// (the matrices are checked as each preset converts them)
	for _, t := range cfg.TensorNames() {
		var err error
		switch {
		case t.Name == "model.embed_tokens.weight":
			_, _, err = src.Embedding(t.Name)
		case len(t.Shape) != 2:
			_, err = src.Float32(t.Name)
		}
		if err != nil {
			return nil, cli.Usagef("model: %s: tensor %q: %v", src.Where(t.Name), t.Name, err)
		}
	}
	for _, preset := range dtypes {
		if err := o.checkFits(cfg, preset, avail); err != nil {
			return nil, err
		}
	}
	return dtypes, nil
}

// presetLoadOptions is preset's formats in bench's load options.
func (o *BenchOptions) presetLoadOptions(preset string) model.LoadOptions {
	p, _ := presetOptions(preset)
	cdt, _ := cacheDType(o.CacheDType)
	opt := model.LoadOptions{CacheSpillDir: o.CacheSpill, CacheDType: cdt}
	opt.DType, opt.AttnDType, opt.FFNDType, opt.ExpertDType, opt.HeadDType, opt.GateDType =
		p.DType, p.AttnDType, p.FFNDType, p.ExpertDType, p.HeadDType, p.GateDType
	return opt
}

// budget is the memory model.Load or model.Random budgets for cfg in
// preset (the figure their memory check compares).
func (o *BenchOptions) budget(cfg *arch.Config, preset string) (int64, error) {
	mem, err := model.EstimateMemory(cfg, o.presetLoadOptions(preset), 2)
	return mem.Budgeted, err
}

// checkFits refuses a preset whose budget exceeds the available memory
// (avail ≤ 0: unknown, not checked), naming the preset's formats and what
// would fit: other presets, or fewer synthetic layers.
func (o *BenchOptions) checkFits(cfg *arch.Config, preset string, avail int64) error {
	if avail <= 0 {
		return nil
	}
	need, err := o.budget(cfg, preset)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	if need <= avail {
		return nil
	}
	what := o.Model
	if o.Synthetic {
		what = fmt.Sprintf("a synthetic %d-layer model", o.Layers)
	}
	doc := ""
	for _, p := range Presets {
		if p.Name == preset {
			doc = p.Doc
		}
	}
	var fit []string
	for _, p := range Presets {
		if b, err := o.budget(cfg, p.Name); err == nil && b <= avail {
			fit = append(fit, fmt.Sprintf("%s (%s)", p.Name, cli.HumanBytes(b)))
		}
	}
	hint := "no preset fits"
	if len(fit) > 0 {
		hint = "presets that fit: " + strings.Join(fit, ", ")
	}
	if o.Synthetic {
		n := 0
		for l := o.Layers - 1; l >= 1 && n == 0; l-- {
			if c, err := o.synthConfig(l); err == nil {
				if b, err := o.budget(c, preset); err == nil && b <= avail {
					n = l
				}
			}
		}
		if n > 0 {
			hint += fmt.Sprintf("; in %s, --layers %d or fewer fit", preset, n)
		}
	}
	return cli.Usagef("bench: %s in preset %s [%s] needs %s resident, but %s is available; %s",
		what, preset, doc, cli.HumanBytes(need), cli.HumanBytes(avail), hint)
}

// writableDir makes the folder of an output file (as its atomic write
// will) and checks, before any measuring, that it takes new files (""
// passes).
func writableDir(flag, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.Usagef("%s %s: folder %s not writable (%v)", flag, path, dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".krun-write-check-")
	if err != nil {
		return cli.Usagef("%s %s: folder %s not writable (%v)", flag, path, dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// startProfile starts the --cpuprofile CPU profile of one model's
// measurements (after its loading, before its closing) and returns the
// function that stops it and writes the file atomically: FILE itself for
// one model, FILE with the preset before its extension for several.
func (o *BenchOptions) startProfile(preset string, models int) (stop func() error, err error) {
	if o.CPUProfile == "" {
		return func() error { return nil }, nil
	}
	path := o.CPUProfile
	if models > 1 {
		ext := filepath.Ext(path)
		path = strings.TrimSuffix(path, ext) + "." + preset + ext
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("bench: --cpuprofile: %v", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := atomicfile.WriteBytes(path, buf.Bytes()); err != nil {
			return fmt.Errorf("bench: --cpuprofile: %w", err)
		}
		fmt.Fprintf(o.Err, "krun: CPU profile written to %s (go tool pprof %s)\n", path, path)
		return nil
	}, nil
}

// open builds or loads the model for one preset ("" for a .kt file).
func (o *BenchOptions) open(preset string) (*model.Model, string, error) {
	cdt, err := cacheDType(o.CacheDType)
	if err != nil {
		return nil, "", err
	}
	repack, err := ggufRepack(o.GGUFRepack)
	if err != nil {
		return nil, "", err
	}
	load, _ := loadMode(o.Load)
	opt := model.LoadOptions{NoVerify: o.NoVerify || o.verified, Weights: load, CacheSpillDir: o.CacheSpill, CacheDType: cdt,
		AvailableMemory: availableMemory(), GGUFRepack: repack, Chooser: o.chooser}
	if o.Synthetic {
		cfg, err := o.synthConfig(o.Layers)
		if err != nil {
			return nil, "", err
		}
		p, _ := presetOptions(preset)
		opt.DType, opt.AttnDType, opt.FFNDType, opt.ExpertDType, opt.HeadDType, opt.GateDType =
			p.DType, p.AttnDType, p.FFNDType, p.ExpertDType, p.HeadDType, p.GateDType
		fmt.Fprintf(o.Err, "krun: building a synthetic %d-layer model (%s)…\n", o.Layers, preset)
		m, err := model.Random(cfg, opt, 1)
		return m, fmt.Sprintf("synthetic-%dL", o.Layers), err
	}
	m, err := openModel(o.Model, preset, opt)
	return m, modelName(o.Model), err
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

// pagedNote is the stderr line's page-in part of a row that paged in.
// aboveBound is the fraction of a bound past which a row is marked: a
// rate above its read bound means the run read less than the bound counts
// (weights a prefill reuses from cache) or the ceiling measured low.
const aboveBound = 1.05

// boundPct formats a fraction of a bound, marking one above it.
func boundPct(f float64) string {
	if f > aboveBound {
		return fmt.Sprintf("%.0f%% (above the bound: fewer bytes read than counted, or a ceiling measured low)", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// cacheHit is the expert cache's hit fraction between two of its stats;
// nil without a cache or lookups.
func cacheHit(a, b model.ExpertCacheStats) *float64 {
	h, n := b.Hits-a.Hits, b.Hits-a.Hits+b.Misses-a.Misses
	if b.Slots == 0 || n <= 0 {
		return nil
	}
	f := float64(h) / float64(n)
	return &f
}

func pagedNote(r *BenchRow) string {
	if r.PageInsTok == nil || (*r.PageInsTok == 0 && (r.DiskBytesTok == nil || *r.DiskBytesTok == 0)) {
		return ""
	}
	s := fmt.Sprintf("; %.1f page-ins/token", *r.PageInsTok)
	if r.DiskBytesTok != nil {
		s += fmt.Sprintf(", %s/token read at %.2f GB/s", cli.HumanBytes(int64(*r.DiskBytesTok)), *r.DiskGBs)
	}
	if r.PagedBoundFrac > 0 {
		s += fmt.Sprintf(", %.0f%% of the paged bound (disk %.2f GB/s)", 100*r.PagedBoundFrac, r.DiskCeilingGBs)
	}
	if r.ExpertCacheHit != nil {
		s += fmt.Sprintf(", %.0f%% expert cache hits", 100**r.ExpertCacheHit)
	}
	return s
}

// lockHot runs --lock-hot: an untimed 64-token prefill to learn the
// routing, then each MoE layer's LockHot most-routed experts locked
// (model.LockHotExperts); a refusal by the OS is reported and measuring
// goes on with what was locked.
func (o *BenchOptions) lockHot(m *model.Model) error {
	if o.LockHot <= 0 {
		return nil
	}
	st := m.NewState(0)
	_, err := m.PrefillWith(st, benchIDs(64, m.Shapes.Vocab, 0), model.PrefillOptions{EveryRow: true}) // every layer's heat
	st.Free()
	if err != nil {
		return err
	}
	n, err := m.LockHotExperts(o.LockHot)
	if err != nil {
		fmt.Fprintf(o.Err, "krun: --lock-hot: %v; measuring with %s locked\n", err, cli.HumanBytes(n))
		return nil
	}
	fmt.Fprintf(o.Err, "krun: --lock-hot %d: %s of experts locked in RAM\n", o.LockHot, cli.HumanBytes(n))
	return nil
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

func (t *opTimes) Op(op string, layer, tokens int, d time.Duration) {
	t.fam[op] += d
	t.layer[opLayer{op, layer}] += d
}

// opsBreakdown times n decode tokens with the op timer on and compares
// each op family's time per token with its roof (its weight bytes per
// decode token at the read ceiling).
func opsBreakdown(m *model.Model, name, dt string, th, d, n int, ceiling float64) []OpRow {
	times := newOpTimes()
	if _, err := decodeRun(m, d, n, m.Shapes.Vocab, 99, times, nil); err != nil {
		return nil
	}
	bytes := m.DecodeWeightBytesByOp()
	rows := times.rows(OpRow{Model: name, DType: dt, Threads: th, Test: fmt.Sprintf("tg%d", n), TokensRun: n}, false)
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

// prefillBreakdown times one prefill of p tokens (after a context of d)
// with the op timer on: each op family's time per prompt token, then each
// layer's share of it.
func prefillBreakdown(m *model.Model, name, dt string, th, d, p int) ([]OpRow, error) {
	st := m.NewState(0)
	defer st.Free()
	lg := model.PrefillOptions{Logits: warmLogits(m.Shapes.Vocab)}
	if d > 0 {
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
	return times.rows(OpRow{Model: name, DType: dt, Threads: th, Test: fmt.Sprintf("pp%d", p), TokensRun: p}, true), nil
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
		if !layers {
			continue
		}
		var ls []int
		for k := range t.layer {
			if k.op == op && k.layer >= 0 {
				ls = append(ls, k.layer)
			}
		}
		if len(ls) < 2 {
			continue
		}
		slices.Sort(ls)
		for _, l := range ls {
			out = append(out, row(op, l, t.layer[opLayer{op, l}]))
		}
	}
	return out
}

// write prints the tables in o.Format.
func (o *BenchOptions) write(rows []BenchRow, ops []OpRow) error {
	switch o.Format {
	case "json":
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			CPU  string     `json:"cpu"`
			Rows []BenchRow `json:"results"`
			Ops  []OpRow    `json:"ops,omitempty"`
		}{cpu.Get().Brand + " (" + cpu.Fingerprint() + ")", rows, ops})
	case "csv":
		w := csv.NewWriter(o.Out)
		w.Write([]string{"model", "dtype", "params", "threads", "test", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "weight_bytes_per_token", "read_ceiling_gbs", "bound_frac",
			"page_ins_per_token", "disk_read_bytes_per_token", "disk_read_gbs", "prefetch", "disk_ceiling_gbs", "paged_bound_frac"})
		for _, r := range rows {
			w.Write([]string{r.Model, r.DType, r.Params, strconv.Itoa(r.Threads), r.Test, strconv.Itoa(r.NPrompt), strconv.Itoa(r.NGen), strconv.Itoa(r.Depth),
				f(r.Mean, 3), f(r.SD, 3), strconv.FormatInt(r.BytesTok, 10), f(r.CeilingGBs, 3), f(r.BoundFrac, 4),
				fOrNA(r.PageInsTok, 2), fOrNA(r.DiskBytesTok, 0), fOrNA(r.DiskGBs, 4), strconv.FormatBool(r.Prefetch), f(r.DiskCeilingGBs, 3), f(r.PagedBoundFrac, 4)})
		}
		if len(ops) > 0 {
			w.Write(nil)
			w.Write([]string{"model", "dtype", "threads", "test", "op", "layer", "ms_per_token", "share", "weight_bytes_per_token", "roof_ms_per_token", "roof_frac"})
			for _, r := range ops {
				w.Write([]string{r.Model, r.DType, strconv.Itoa(r.Threads), r.Test, r.Op, strconv.Itoa(r.Layer), f(r.MsPerTok, 4), f(r.Share, 4), strconv.FormatInt(r.BytesTok, 10), f(r.RoofMs, 4), f(r.RoofFrac, 4)})
			}
		}
		w.Flush()
		return w.Error()
	}
	var tab [][]string
	// a model's rows say what they paged in (a synthetic model's weights
	// are on the heap)
	paged := o.Model != ""
	for _, r := range rows {
		paged = paged || (r.PageInsTok != nil && *r.PageInsTok > 0)
	}
	for _, r := range rows {
		bound := ""
		if r.BoundFrac > 0 {
			bound = fmt.Sprintf("%s (%s/tok @ %.1f GB/s)", boundPct(r.BoundFrac), cli.HumanBytes(r.BytesTok), r.CeilingGBs)
		}
		row := []string{r.Model, r.DType, r.Params, strconv.Itoa(r.Threads), r.Test, fmt.Sprintf("%.2f ± %.2f", r.Mean, r.SD), bound}
		if paged {
			pin, disk, pb := fOrNA(r.PageInsTok, 1), "n/a", ""
			if r.DiskBytesTok != nil {
				disk = fmt.Sprintf("%s/tok @ %.2f GB/s", cli.HumanBytes(int64(*r.DiskBytesTok)), *r.DiskGBs)
			}
			if r.PagedBoundFrac > 0 {
				pb = fmt.Sprintf("%.0f%% (disk %.2f GB/s)", 100*r.PagedBoundFrac, r.DiskCeilingGBs)
			}
			row = append(row, map[bool]string{false: "off", true: "on"}[r.Prefetch], pin, disk, pb)
		}
		tab = append(tab, row)
	}
	head := []string{"model", "dtype", "params", "threads", "test", "t/s", "of bound"}
	if paged {
		head = append(head, "prefetch", "page-ins/tok", "disk read", "of paged bound")
	}
	if err := cli.Table(o.Out, o.Format, head, tab); err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	fmt.Fprintln(o.Out)
	tab = nil
	for _, r := range ops {
		roof, frac, wt := "-", "-", "-"
		if r.RoofMs > 0 {
			roof, frac = fmt.Sprintf("%.3f", r.RoofMs), fmt.Sprintf("%.0f%%", 100*r.RoofFrac)
		}
		if r.BytesTok > 0 {
			wt = cli.HumanBytes(r.BytesTok)
		}
		op := r.Op
		if r.Layer >= 0 {
			op = fmt.Sprintf("  %s L%d", r.Op, r.Layer)
		}
		tab = append(tab, []string{r.Model, r.DType, strconv.Itoa(r.Threads), r.Test, op, fmt.Sprintf("%.3f", r.MsPerTok),
			fmt.Sprintf("%.1f%%", 100*r.Share), wt, roof, frac})
	}
	return cli.Table(o.Out, o.Format, []string{"model", "dtype", "threads", "test", "op", "ms/token", "share", "weights/token", "roof ms", "of roof"}, tab)
}

func f(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// fOrNA is f of *x, or "n/a" for nil (a counter the OS does not give).
func fOrNA(x *float64, prec int) string {
	if x == nil {
		return "n/a"
	}
	return f(*x, prec)
}

// dtypeLabel names a model's formats: the base dtype, and the groups that
// differ from it ("q8 (experts q4)").
func dtypeLabel(o model.LoadOptions) string {
	var diff []string
	for _, g := range []struct {
		name string
		dt   kernel.DType
	}{{"attn", o.AttnDType}, {"ffn", o.FFNDType}, {"experts", o.ExpertDType}, {"head", o.HeadDType}} {
		if g.dt != o.DType {
			diff = append(diff, g.name+" "+string(g.dt))
		}
	}
	if len(diff) == 0 {
		return string(o.DType)
	}
	return string(o.DType) + " (" + strings.Join(diff, ", ") + ")"
}

// paramsLabel writes a parameter count as llama-bench does (2.45 B, 1.20 M).
func paramsLabel(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	}
	return fmt.Sprintf("%.2f M", float64(n)/1e6)
}
