package roofline

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cpu"
)

// Schema is the version of the Ceilings JSON layout.
const Schema = 1

// Ceilings are a machine's measured limits: compute peaks per ISA and data
// type, the core clock, and bandwidth per memory level, each per thread
// count. It is what `ktune roofline` writes and a tuning profile embeds.
// Compute figures are in GFLOP/s (GOP/s for integer ceilings), bandwidth
// in GB/s (10⁹ bytes per second).
type Ceilings struct {
	Schema      int       `json:"schema"`
	Fingerprint string    `json:"fingerprint"`
	CPU         string    `json:"cpu"`
	Arch        string    `json:"arch"`
	Measured    time.Time `json:"measured"`
	Quick       bool      `json:"quick"`
	// ClockGHz is the core clock measured with a dependent add chain on
	// one thread (0 where no clock kernel exists); NominalGHz is what the
	// CPU or OS reports.
	ClockGHz   float64 `json:"clock_ghz"`
	NominalGHz float64 `json:"nominal_ghz"`
	// Cache is what detection reported (bytes, -1 unknown): L1d and L2 per
	// core, L3 shared.
	Cache   cpu.Cache        `json:"cache"`
	Threads []int            `json:"threads"`
	Compute []ComputeCeiling `json:"compute"`
	Sweeps  []BandwidthSweep `json:"bandwidth"`
}

// ComputeCeiling is one compute microkernel's rate at one thread count.
type ComputeCeiling struct {
	Name    string  `json:"name"`  // "avx512_fma_f32"
	DType   string  `json:"dtype"` // f32, f64, int8, bf16
	ISA     string  `json:"isa"`   // the features it needs, "avx512f,avx512_vnni"
	Threads int     `json:"threads"`
	GFLOPS  float64 `json:"gflops"` // GFLOP/s, or GOP/s for int8
	// PerCycle is operations per core cycle per thread at the measured clock.
	PerCycle float64 `json:"per_cycle,omitempty"`
}

// Unit is "GOP/s" for integer ceilings, else "GFLOP/s".
func (c ComputeCeiling) Unit() string {
	if strings.HasPrefix(c.DType, "int") {
		return "GOP/s"
	}
	return "GFLOP/s"
}

// Bandwidth kinds.
const (
	KindRead  = "read"  // 4 interleaved sequential streams, vector loads
	KindWrite = "write" // regular vector stores (write-allocate)
	KindCopy  = "copy"  // dst = src, regular stores
	KindTriad = "triad" // a = b + s·c (f32), regular stores
)

// Kinds lists the bandwidth kinds in measurement order.
var Kinds = []string{KindRead, KindWrite, KindCopy, KindTriad}

// Levels are the memory levels plateaus are reported for.
var Levels = []string{"L1", "L2", "L3", "DRAM"}

// BandwidthSweep is one kind at one thread count over working-set sizes.
type BandwidthSweep struct {
	Kind     string    `json:"kind"`
	Threads  int       `json:"threads"`
	Points   []BWPoint `json:"points"`
	Plateaus []Plateau `json:"plateaus"`
}

// BWPoint is the rate at one working set (all arrays of the kind
// together, over all threads). Bytes moved count each array once (STREAM's
// rule: copy 2, triad 3 per element; write-allocate reads not counted).
type BWPoint struct {
	Bytes int64   `json:"bytes"`
	GBs   float64 `json:"gbs"`
	// Streams is, for the read kind, the interleaved stream count that
	// read fastest (the figure is the best of 1, 2, 4 and 8).
	Streams int `json:"streams,omitempty"`
}

// Plateau is the bandwidth of one memory level: the median of the sweep's
// points whose working sets fall in [Lo, Hi], a window well inside the
// level (from the detected cache sizes, scaled by the thread count for the
// private L1 and L2).
type Plateau struct {
	Level string `json:"level"`
	// CacheBytes is the capacity of the level for this thread count
	// (threads × per-core size for L1/L2; -1 unknown, 0 for DRAM).
	CacheBytes int64   `json:"cache_bytes"`
	Lo         int64   `json:"lo"`
	Hi         int64   `json:"hi"`
	GBs        float64 `json:"gbs"`
	Points     int     `json:"points"`
	// Note says when the window had no point and a neighbour was used.
	Note string `json:"note,omitempty"`
}

// classDType maps kernel accuracy classes to the data type of their
// compute ceiling.
var classDType = map[string]string{"int8act": "int8", "bf16act": "bf16", "": "f32"}

// PeakFLOPs returns the best compute ceiling (GFLOP/s or GOP/s) for what
// at a thread count. what is a ceiling name ("avx512_fma_f32"), a data
// type ("f32", "f64", "int8", "bf16") or a kernel accuracy class ("f32",
// "int8act", "bf16act"; "" means f32). For a thread count that was not
// measured, the nearest measured count below (else the smallest) is
// scaled linearly. It returns 0 when nothing matches.
func (c *Ceilings) PeakFLOPs(what string, threads int) float64 {
	dt := what
	if d, ok := classDType[what]; ok {
		dt = d
	}
	best := 0.0
	byName := map[string][]ComputeCeiling{}
	for _, cc := range c.Compute {
		if cc.Name == what || cc.DType == dt {
			byName[cc.Name] = append(byName[cc.Name], cc)
		}
	}
	for _, list := range byName {
		if v := scaleThreads(list, threads); v > best {
			best = v
		}
	}
	return best
}

func scaleThreads(list []ComputeCeiling, threads int) float64 {
	i := NearestThreads(len(list), func(i int) int { return list[i].Threads }, threads)
	if i < 0 || list[i].Threads < 1 {
		return 0
	}
	return list[i].GFLOPS * float64(threads) / float64(list[i].Threads)
}

// NearestThreads returns the index of the entry with the largest thread
// count not above threads, else the one with the smallest; -1 if n is 0.
func NearestThreads(n int, at func(i int) int, threads int) int {
	below, smallest := -1, -1
	for i := 0; i < n; i++ {
		t := at(i)
		if t <= threads && (below < 0 || t > at(below)) {
			below = i
		}
		if smallest < 0 || t < at(smallest) {
			smallest = i
		}
	}
	if below >= 0 {
		return below
	}
	return smallest
}

// Bandwidth returns the read plateau (GB/s) of a level ("L1", "L2", "L3",
// "DRAM"; case-insensitive) at a thread count: the DRAM read ceiling is
// what kernel points are placed under by default. A level may name a kind
// too, "triad/DRAM". Unmeasured thread counts take the nearest measured
// count below (else the smallest); 0 when nothing matches.
func (c *Ceilings) Bandwidth(level string, threads int) float64 {
	kind := KindRead
	if k, l, ok := strings.Cut(level, "/"); ok {
		kind, level = k, l
	}
	return c.BandwidthOf(kind, level, threads)
}

// BandwidthOf is Bandwidth for a given kind.
func (c *Ceilings) BandwidthOf(kind, level string, threads int) float64 {
	s := c.Sweep(kind, threads)
	if s == nil {
		return 0
	}
	for _, p := range s.Plateaus {
		if strings.EqualFold(p.Level, level) {
			return p.GBs
		}
	}
	return 0
}

// Sweep returns the sweep of kind at the nearest measured thread count
// not above threads (else the smallest), or nil.
func (c *Ceilings) Sweep(kind string, threads int) *BandwidthSweep {
	var idx []int
	for i := range c.Sweeps {
		if c.Sweeps[i].Kind == kind {
			idx = append(idx, i)
		}
	}
	j := NearestThreads(len(idx), func(j int) int { return c.Sweeps[idx[j]].Threads }, threads)
	if j < 0 {
		return nil
	}
	return &c.Sweeps[idx[j]]
}

// Roof is the attainable rate (GFLOP/s) at arithmetic intensity ai
// (FLOPs per byte) for threads threads: the lower of the compute ceiling
// named by compute (see PeakFLOPs) and ai times the DRAM read bandwidth.
func (c *Ceilings) Roof(ai float64, threads int, compute string) float64 {
	return math.Min(c.PeakFLOPs(compute, threads), ai*c.Bandwidth("DRAM", threads))
}

// MaxThreads is the largest measured thread count.
func (c *Ceilings) MaxThreads() int {
	m := 0
	for _, t := range c.Threads {
		m = max(m, t)
	}
	return m
}

// ComputeAt lists the compute ceilings at a thread count, fastest first.
func (c *Ceilings) ComputeAt(threads int) []ComputeCeiling {
	var out []ComputeCeiling
	for _, cc := range c.Compute {
		if cc.Threads == threads {
			out = append(out, cc)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GFLOPS > out[j].GFLOPS })
	return out
}

// Validate checks the invariants a reader relies on.
func (c *Ceilings) Validate() error {
	if c.Schema != Schema {
		return fmt.Errorf("roofline: ceilings schema %d, want %d", c.Schema, Schema)
	}
	for _, g := range []struct {
		name string
		v    float64
	}{{"clock_ghz", c.ClockGHz}, {"nominal_ghz", c.NominalGHz}} {
		if !(g.v >= 0) || math.IsInf(g.v, 0) || g.v > 100 { // 0: not measured, not reported
			return fmt.Errorf("roofline: %s %v: want 0 (unknown) or a clock in GHz", g.name, g.v)
		}
	}
	for _, cc := range c.Compute {
		if cc.Name == "" || cc.Threads < 1 || !(cc.GFLOPS > 0) || math.IsInf(cc.GFLOPS, 0) {
			return fmt.Errorf("roofline: bad compute ceiling %+v", cc)
		}
	}
	for _, s := range c.Sweeps {
		if s.Threads < 1 || len(s.Points) == 0 {
			return fmt.Errorf("roofline: empty %s sweep at %d threads", s.Kind, s.Threads)
		}
		for i, p := range s.Points {
			if p.Bytes <= 0 || !(p.GBs > 0) || math.IsInf(p.GBs, 0) || i > 0 && p.Bytes <= s.Points[i-1].Bytes {
				return fmt.Errorf("roofline: bad %s point %d at %d threads: %+v", s.Kind, i, s.Threads, p)
			}
		}
	}
	return nil
}

// JSON returns the ceilings as indented JSON.
func (c *Ceilings) JSON() ([]byte, error) { return json.MarshalIndent(c, "", "  ") }

// ParseCeilings reads JSON written by JSON or Save and validates it.
func ParseCeilings(b []byte) (*Ceilings, error) {
	var c Ceilings
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("roofline: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Load reads ceilings from a file.
func Load(path string) (*Ceilings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCeilings(b)
}

// Save writes the ceilings as JSON atomically (a temporary file in the
// same folder, then a rename).
func (c *Ceilings) Save(path string) error {
	b, err := c.JSON()
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}
