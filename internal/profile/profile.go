// Package profile is the tuning profile: the per-machine file ktune writes
// (think FFTW wisdom) and the engine reads. It holds the schema, atomic
// writing, the resume journal, validation, and loading in the two modes:
// use (the runtime: anything wrong gives a warning and the defaults; a
// model carries it to the kernel families in kernel.Rules) and report
// (kprofile: any machine's profile, read as written). The engine links
// this package, not the tuner, the roofline or the plotting libraries.
package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cpu"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/internal/version"
)

// SchemaVersion is the profile format this build writes and uses. Older
// schemas are refused in use mode (warning, defaults).
const SchemaVersion = 1

// Profile is one machine's tuning result.
type Profile struct {
	Schema       int       `json:"schema"`
	KtuneVersion string    `json:"ktune_version"`
	GoVersion    string    `json:"go_version"`
	Created      time.Time `json:"created"`
	Fingerprint  string    `json:"fingerprint"`
	CPU          CPUInfo   `json:"cpu"`
	// Model names the architecture config the shapes came from.
	Model string `json:"model"`
	// Ceilings are the machine's measured roofs (roofline package JSON).
	Ceilings json.RawMessage `json:"ceilings,omitempty"`
	// Placements are, per thread budget, the thread placement that won
	// most multi-threaded entries (pool placement names: "compact",
	// "spread", "smt", "pcores"); Placement is the one of the largest
	// budget. The engine applies PlacementFor its thread count.
	Placement  string            `json:"placement,omitempty"`
	Placements []ThreadPlacement `json:"placements,omitempty"`
	// NUMA says what was done about memory policy ("one node: skipped").
	NUMA string `json:"numa,omitempty"`
	// Classes are the accuracy classes the run allowed.
	Classes []kernel.Class `json:"classes"`
	Entries []Entry        `json:"entries"`
	// Stats summarise the search.
	Stats Stats `json:"stats"`
	// Noisy says why the run's figures are suspect: ceilings that moved
	// during the run, other processes taking CPU time, quota throttling
	// (empty: a quiet run).
	Noisy []string `json:"noisy,omitempty"`
	// EndToEnd is the engine run with this profile and without it, ktune's
	// last step (nil: not run).
	EndToEnd *EndToEnd `json:"end_to_end,omitempty"`

	// choices caches Choose's answers once installed (the engine asks per
	// call); a pointer so that copies of a Profile stay plain values.
	choices *sync.Map
}

// CPUInfo is the detection summary a profile carries.
type CPUInfo struct {
	Vendor        string `json:"vendor"`
	Brand         string `json:"brand"`
	Arch          string `json:"arch"`
	Family        int    `json:"family"`
	Model         int    `json:"model"`
	Stepping      int    `json:"stepping"`
	LogicalCores  int    `json:"logical_cores"`
	PhysicalCores int    `json:"physical_cores"`
	NUMANodes     int    `json:"numa_nodes"`
	L1D           int64  `json:"l1d"`
	L2            int64  `json:"l2"`
	L3            int64  `json:"l3"`
	Features      string `json:"features"`
	Mask          string `json:"mask,omitempty"`
}

// Stats summarise a tuning run.
type Stats struct {
	WallSeconds float64 `json:"wall_seconds"`
	Budget      string  `json:"budget"`
	// Space is the number of (variant, parameters, threads, placement)
	// candidates over all entries; Measured how many were timed; Rejected
	// how many failed the correctness gate.
	Space    int `json:"space"`
	Measured int `json:"measured"`
	Rejected int `json:"rejected"`
}

// Entry is the result for one (op, dtype, accuracy class, shape, threads).
// Threads is the thread budget: the chosen configuration may use fewer when
// that was faster.
type Entry struct {
	Op         string       `json:"op"`
	DType      kernel.DType `json:"dtype"`
	Class      kernel.Class `json:"class"`
	ShapeClass string       `json:"shape_class"` // "decode-1", "prefill-512", "ctx-32K", ...
	Label      string       `json:"label,omitempty"`
	Shape      kernel.Shape `json:"shape"`
	Threads    int          `json:"threads"`
	Mem        string       `json:"mem,omitempty"` // "dram" when timed with cold weights
	// MemPolicy is the NUMA memory policy that won (multi-node machines).
	MemPolicy string `json:"mem_policy,omitempty"`

	Best      Result   `json:"best"`
	Default   *Result  `json:"default,omitempty"` // the untuned default's figure (nil: not in this class)
	RunnersUp []Result `json:"runners_up,omitempty"`
	Rejected  []Reject `json:"rejected,omitempty"`
	// Space and Measured count this entry's candidates.
	Space    int `json:"space"`
	Measured int `json:"measured"`
	// TuneSeconds is how long tuning this entry took (a resumed run adds
	// its journal's entries' to its own wall time).
	TuneSeconds float64 `json:"tune_seconds,omitempty"`
	// Confirm records how Best was confirmed against the untuned default
	// (nil: nothing challenged it, or an older profile).
	Confirm *Confirm `json:"confirm,omitempty"`
}

// EndToEnd is the engine timed with the profile and without it: a model
// (Model) run alternately both ways, Rounds rounds, at each thread budget
// and test (prompt processing ppN, generation tgN).
type EndToEnd struct {
	Model   string        `json:"model"`
	Rounds  int           `json:"rounds"`
	Rows    []EndToEndRow `json:"rows"`
	Verdict string        `json:"verdict"` // VerdictGain, VerdictNone or VerdictLoss
	// Busy says why the check ran on a busy machine (its figures are
	// suspect; "" when quiet).
	Busy string `json:"busy,omitempty"`
}

// EndToEndRow is one test at one thread budget.
type EndToEndRow struct {
	Test    string    `json:"test"` // "pp64", "pp512", "tg16"
	Threads int       `json:"threads"`
	Without float64   `json:"without_tps"` // tokens/s without the profile, the median over the rounds
	With    float64   `json:"with_tps"`    // with it
	Ratios  []float64 `json:"ratios"`      // with/without, per round
}

// The verdicts of an EndToEnd: some row faster in every round by more
// than EndToEndMargin and none slower so; none either way; some row slower
// in every round by more than the margin.
const (
	VerdictGain = "gain"
	VerdictNone = "no gain"
	VerdictLoss = "loss"
)

// EndToEndMargin is the least relative change, in every round, that makes
// a row a gain or a loss.
const EndToEndMargin = 0.03

// Judge sets the verdict from the rows.
func (e *EndToEnd) Judge() {
	gain, loss := false, false
	for _, r := range e.Rows {
		if len(r.Ratios) == 0 {
			continue
		}
		if slices.Max(r.Ratios) < 1-EndToEndMargin {
			loss = true
		}
		if slices.Min(r.Ratios) > 1+EndToEndMargin {
			gain = true
		}
	}
	switch {
	case loss:
		e.Verdict = VerdictLoss
	case gain:
		e.Verdict = VerdictGain
	default:
		e.Verdict = VerdictNone
	}
}

// Worst names the row of the least median ratio: "tg16 at 2 threads 0.91×".
func (e *EndToEnd) Worst() string {
	w := -1
	for i, r := range e.Rows {
		if w < 0 || r.Ratio() < e.Rows[w].Ratio() {
			w = i
		}
	}
	if w < 0 {
		return "no rows"
	}
	r := e.Rows[w]
	return fmt.Sprintf("%s at %d threads %.2f×", r.Test, r.Threads, r.Ratio())
}

// Gain summarises the record in a line: "end to end 1.02× (0.99–1.04×) over
// 6 rows, 3 rounds: no gain".
func (e *EndToEnd) Gain() string {
	var q []float64
	for _, r := range e.Rows {
		q = append(q, r.Ratio())
	}
	if len(q) == 0 {
		return "end to end: no rows"
	}
	slices.Sort(q)
	s := fmt.Sprintf("end to end %.2f× (%.2f–%.2f×) over %d rows, %d rounds: %s", q[len(q)/2], q[0], q[len(q)-1], len(q), e.Rounds, e.Verdict)
	if e.Busy != "" {
		s += " (measured on a busy machine)"
	}
	return s
}

// Ratio is a row's median ratio over the rounds (with/without).
func (r EndToEndRow) Ratio() float64 {
	if len(r.Ratios) == 0 {
		return 0
	}
	s := slices.Clone(r.Ratios)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// check checks the record's figures (nil is none).
func (e *EndToEnd) check() error {
	if e == nil {
		return nil
	}
	if e.Verdict != VerdictGain && e.Verdict != VerdictNone && e.Verdict != VerdictLoss {
		return fmt.Errorf("end_to_end: verdict %q", e.Verdict)
	}
	if e.Rounds < 1 || e.Rounds > 100 || len(e.Rows) > 1000 {
		return fmt.Errorf("end_to_end: %d rounds, %d rows", e.Rounds, len(e.Rows))
	}
	for _, r := range e.Rows {
		bad := func(x float64) bool { return !(x > 0) || math.IsInf(x, 0) }
		if bad(r.With) || bad(r.Without) || len(r.Ratios) != e.Rounds || r.Threads < 1 || r.Threads > MaxThreads {
			return fmt.Errorf("end_to_end: row %s threads=%d: %v with, %v without, %d ratios", r.Test, r.Threads, r.With, r.Without, len(r.Ratios))
		}
		for _, q := range r.Ratios {
			if bad(q) {
				return fmt.Errorf("end_to_end: row %s threads=%d: ratio %v", r.Test, r.Threads, q)
			}
		}
	}
	return nil
}

// Confirm is the check that keeps a profile from being worse than none:
// the base (the untuned default, or the search's winner where the default
// is of another class) and each challenger (the search's winner, the
// choice of a smaller thread budget) re-timed alternately, Rounds rounds;
// a challenger replaces the base only where it beat it in every round by
// more than Margin, and the fastest such one is chosen.
type Confirm struct {
	Base        string       `json:"base"` // ConfirmDefault or ConfirmSearch
	Rounds      int          `json:"rounds"`
	Margin      float64      `json:"margin"` // the relative gain each round had to show
	Challengers []Challenger `json:"challengers"`
	Chosen      string       `json:"chosen"` // Base, or the chosen challenger's Role
	// Busy says why the rounds ran on a busy machine (cpu.Busyness's
	// warning); a busy confirmation keeps the base.
	Busy string `json:"busy,omitempty"`
	// Skipped says why no round ran (the budget was spent): the base
	// stays, Rounds is 0.
	Skipped string `json:"skipped,omitempty"`
}

// Challenger is one candidate of a Confirm.
type Challenger struct {
	Role   string    `json:"role"` // ConfirmSearch or ConfirmFewerThreads
	Result Result    `json:"result"`
	Ratios []float64 `json:"ratios"` // its median seconds over the base's, per round
}

// The roles of a Confirm.
const (
	ConfirmDefault      = "default"       // the untuned default
	ConfirmSearch       = "search"        // the search's winner
	ConfirmFewerThreads = "fewer-threads" // the choice of a smaller thread budget
)

// Result is one measured candidate.
type Result struct {
	Variant   string        `json:"variant"`
	Params    kernel.Values `json:"params"`
	Threads   int           `json:"threads"`
	Placement string        `json:"placement,omitempty"`
	// Seconds per run: median and its confidence interval (benchmath).
	Median float64 `json:"median_s"`
	Lo     float64 `json:"ci_lo_s"`
	Hi     float64 `json:"ci_hi_s"`
	N      int     `json:"n"`
	// FLOPs and Bytes per run (the variant's cost count).
	FLOPs float64 `json:"flops"`
	Bytes float64 `json:"bytes"`
	// Footprint is the distinct bytes one run touches (0: Bytes).
	Footprint float64 `json:"footprint,omitempty"`
	// Stopped is set when the candidate was dropped early as clearly slower.
	Stopped bool `json:"stopped,omitempty"`
}

// CandidateKey names a candidate: its variant, parameters, thread count and
// placement.
func CandidateKey(variant string, params kernel.Values, threads int, pl pool.Placement) string {
	return fmt.Sprintf("%s %s t=%d %s", variant, params, threads, pl)
}

// CandidateKey names the candidate r measured (a placement left out or
// unknown reads as the pool's initial one).
func (r *Result) CandidateKey() string {
	pl, err := pool.ParsePlacement(r.Placement)
	if err != nil {
		pl = pool.Initial
	}
	return CandidateKey(r.Variant, r.Params, r.Threads, pl)
}

// KeepsDefault reports whether the entry's choice is the untuned default
// (nothing measured beat it, or nothing beat it in the confirmation
// rounds). The engine then runs its own default as it would without a
// profile, configured for the shape at hand: Choose defers to it.
func (e *Entry) KeepsDefault() bool {
	return e.Default != nil && e.Best.CandidateKey() == e.Default.CandidateKey()
}

// GFLOPs is the achieved rate; GBs the achieved traffic.
func (r Result) GFLOPs() float64 { return r.FLOPs / r.Median / 1e9 }

// GBs is the achieved memory traffic in GB/s.
func (r Result) GBs() float64 { return r.Bytes / r.Median / 1e9 }

// Reject records a candidate that failed the correctness gate.
type Reject struct {
	Variant string        `json:"variant"`
	Params  kernel.Values `json:"params"`
	Error   string        `json:"error"`
}

// FLOPsZero reports whether the entry's op counts no FLOPs (nothing to
// place on a roofline).
func (e *Entry) FLOPsZero() bool { return e.Best.FLOPs == 0 }

// Key identifies an entry.
func (e *Entry) Key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", e.Op, e.DType, e.Class, e.Shape, e.Threads)
}

// Speedup is the default's median over the best's (0 when unknown; 1
// when the best is the default).
func (e *Entry) Speedup() float64 {
	switch {
	case e.Default == nil || e.Best.Median <= 0:
		return 0
	case e.KeepsDefault(): // one candidate: its two figures differ by noise alone
		return 1
	}
	return e.Default.Median / e.Best.Median
}

// FileName is the profile's file name for a fingerprint.
func FileName(fingerprint string) string { return "ktune-profile-" + fingerprint + ".json" }

// DefaultDir is where ktune writes profiles and plots: the ktune folder
// under the user's config directory.
func DefaultDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		d = "."
	}
	return filepath.Join(d, "ktune")
}

// DefaultPath is this machine's profile path in DefaultDir.
func DefaultPath() string { return filepath.Join(DefaultDir(), FileName(cpu.Fingerprint())) }

// NewProfile starts a profile for this machine.
func NewProfile(model string, classes []kernel.Class) *Profile {
	info := cpu.Get()
	return &Profile{
		Schema: SchemaVersion, KtuneVersion: version.String(), GoVersion: version.Go(),
		Created: time.Now().UTC().Truncate(time.Second), Fingerprint: info.Fingerprint(),
		CPU: CPUInfo{Vendor: info.Vendor, Brand: info.Brand, Arch: info.Arch, Family: info.Family, Model: info.Model,
			Stepping: info.Stepping, LogicalCores: info.LogicalCores, PhysicalCores: info.PhysicalCores,
			NUMANodes: max(len(info.NUMA), 1), L1D: info.Cache.L1D, L2: info.Cache.L2, L3: info.Cache.L3,
			Features: info.Effective.String(), Mask: info.Mask},
		Model: model, Classes: classes,
	}
}

// Sort orders entries by op, dtype, shape class, shape, class and threads.
func (p *Profile) Sort() {
	sort.SliceStable(p.Entries, func(i, j int) bool {
		a, b := &p.Entries[i], &p.Entries[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if a.DType != b.DType {
			return a.DType < b.DType
		}
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		if sa, sb := a.Shape.String(), b.Shape.String(); sa != sb {
			return shapeLess(a.Shape, b.Shape)
		}
		if a.Class != b.Class {
			return a.Class < b.Class
		}
		return a.Threads < b.Threads
	})
}

func shapeLess(a, b kernel.Shape) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].Value != b[i].Value {
			return a[i].Value < b[i].Value
		}
	}
	return len(a) < len(b)
}

// Put adds or replaces the entry with e's key.
func (p *Profile) Put(e Entry) {
	for i := range p.Entries {
		if p.Entries[i].Key() == e.Key() {
			p.Entries[i] = e
			return
		}
	}
	p.Entries = append(p.Entries, e)
}

// Write writes p atomically as indented JSON.
func (p *Profile) Write(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}

// Read reads a profile as written (report mode: any machine, any variant
// names); it fails only when the file cannot be read or parsed.
func Read(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, b)
}

// parse is Read of the bytes b of the file at path.
func parse(path string, b []byte) (*Profile, error) {
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: not a ktune profile (corrupt JSON?): %v", path, err)
	}
	if p.Schema == 0 || p.Fingerprint == "" {
		return nil, fmt.Errorf("%s: not a ktune profile (no schema or fingerprint)", path)
	}
	return &p, nil
}

// Load reads a profile for use on this machine. Problems that make the
// whole file unusable — unreadable, corrupt, another schema, another
// fingerprint — return a nil profile and a warning; entries that fail
// Entry.Check (a variant or parameter this build no longer has, a thread
// count out of range, a figure that is not finite) or name a variant this
// CPU cannot run are dropped with a warning each. kprofile shares these
// checks through Validate. The caller falls back to the defaults for
// whatever is missing; Load never panics.
func Load(path string) (p *Profile, warnings []string) {
	defer func() {
		if r := recover(); r != nil {
			p, warnings = nil, append(warnings, fmt.Sprintf("%s: unusable profile (%v); using defaults", path, r))
		}
	}()
	p, err := Read(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("%v; using defaults", err)}
	}
	if err := p.checkSchema(); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v (re-run ktune); using defaults", path, err)}
	}
	if fp := cpu.Fingerprint(); p.Fingerprint != fp {
		return nil, []string{fmt.Sprintf("%s: profile is for CPU %s, this is %s (run ktune here); using defaults", path, p.Fingerprint, fp)}
	}
	if err := p.EndToEnd.check(); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v; using defaults", path, err)}
	}
	kept := p.Entries[:0]
	for _, e := range p.Entries {
		if err := e.usable(); err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v; using defaults there", path, entryError(&e, err)))
			continue
		}
		kept = append(kept, e)
	}
	p.Entries = kept
	return p, warnings
}

// MaxThreads bounds the thread counts of a profile entry: a budget above
// it is a corrupt entry, not a bigger machine.
const MaxThreads = 1 << 16

// Validate checks a profile as written (Read), on any machine, with the
// checks Load makes that do not depend on this CPU: the schema (whole is
// set, and the entries are not looked at), then each entry (Entry.Check),
// one error per bad entry naming it. kprofile warns with these and refuses
// to export a profile that has any; Load adds the fingerprint and this
// CPU's features.
func (p *Profile) Validate() (whole error, entries []error) {
	if err := p.checkSchema(); err != nil {
		return err, nil
	}
	if err := p.EndToEnd.check(); err != nil {
		return err, nil
	}
	seen := map[string]bool{}
	for i := range p.Entries {
		e := &p.Entries[i]
		if err := e.Check(p.CPU.Arch); err != nil {
			entries = append(entries, entryError(e, err))
		}
		if k := e.Key(); seen[k] {
			entries = append(entries, entryError(e, errors.New("a second entry for this op, dtype, class, shape and thread budget")))
		} else {
			seen[k] = true
		}
	}
	return nil, entries
}

func (p *Profile) checkSchema() error {
	if p.Schema != SchemaVersion {
		return fmt.Errorf("profile schema %d, this build reads %d", p.Schema, SchemaVersion)
	}
	return nil
}

// entryError names the entry a problem is about.
func entryError(e *Entry, err error) error {
	return fmt.Errorf("entry %s %s %s threads=%d: %w", e.Op, e.DType, e.Shape, e.Threads, err)
}

// Check checks an entry of a profile from a machine of architecture arch
// ("amd64", "arm64"; "" for this build's): its thread counts (1 to
// MaxThreads), that its figures are finite (a positive median), that its op
// exists and takes its shape, and, when arch is this build's (whose
// registry holds that architecture's variants), that its variant exists,
// serves its dtype and its parameters lie within the variant's space.
// Whether this CPU can run the variant is not checked (Load does).
func (e *Entry) Check(arch string) error {
	if e.Threads < 1 || e.Threads > MaxThreads {
		return fmt.Errorf("thread budget %d: want 1 to %d", e.Threads, MaxThreads)
	}
	if e.Best.Threads < 0 || e.Best.Threads > e.Threads {
		return fmt.Errorf("chosen threads %d: want at most the budget %d", e.Best.Threads, e.Threads)
	}
	if err := checkFigures("best", &e.Best, true); err != nil {
		return err
	}
	if e.Default != nil {
		if err := checkFigures("default", e.Default, false); err != nil {
			return err
		}
	}
	if err := e.Confirm.check(); err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	op := kernel.LookupOp(e.Op)
	if op == nil {
		return fmt.Errorf("stale op: unknown op %q", e.Op)
	}
	if err := op.Check(e.Shape); err != nil {
		return err
	}
	if arch != "" && arch != runtime.GOARCH {
		return nil // another architecture's variants are not in this build
	}
	v, err := kernel.Lookup(e.Op + "/" + e.Best.Variant)
	if err != nil {
		return fmt.Errorf("stale variant: %v", err)
	}
	if !v.Serves(e.DType) {
		return fmt.Errorf("variant %s does not serve %s", v.ID(), e.DType)
	}
	if err := v.Validate(e.Shape, e.config()); err != nil {
		return fmt.Errorf("stale parameters: %v", err)
	}
	return nil
}

// checkFigures wants a finite median (positive when positive is set) and
// finite, non-negative counts.
// check checks a Confirm's figures (nil is none).
func (c *Confirm) check() error {
	if c == nil {
		return nil
	}
	if c.Base != ConfirmDefault && c.Base != ConfirmSearch {
		return fmt.Errorf("base %q: want %q or %q", c.Base, ConfirmDefault, ConfirmSearch)
	}
	if c.Skipped != "" {
		if c.Rounds != 0 || len(c.Challengers) != 0 || c.Chosen != c.Base {
			return fmt.Errorf("skipped (%s) but %d rounds, %d challengers, chosen %q", c.Skipped, c.Rounds, len(c.Challengers), c.Chosen)
		}
		return nil
	}
	if c.Rounds < 1 || c.Rounds > 100 || len(c.Challengers) > 8 {
		return fmt.Errorf("%d rounds, %d challengers: want 1 to 100 rounds, at most 8 challengers", c.Rounds, len(c.Challengers))
	}
	if math.IsNaN(c.Margin) || c.Margin < 0 || c.Margin >= 1 {
		return fmt.Errorf("margin %v: want 0 to 1", c.Margin)
	}
	chosen := c.Chosen == c.Base
	for _, ch := range c.Challengers {
		if ch.Role != ConfirmSearch && ch.Role != ConfirmFewerThreads || ch.Role == c.Base {
			return fmt.Errorf("challenger role %q", ch.Role)
		}
		if len(ch.Ratios) != c.Rounds {
			return fmt.Errorf("challenger %s: %d ratios for %d rounds", ch.Role, len(ch.Ratios), c.Rounds)
		}
		for _, r := range ch.Ratios {
			if !(r > 0) || math.IsInf(r, 0) {
				return fmt.Errorf("challenger %s: ratio %v: want a positive finite number", ch.Role, r)
			}
		}
		if err := checkFigures("challenger "+ch.Role, &ch.Result, true); err != nil {
			return err
		}
		chosen = chosen || c.Chosen == ch.Role
	}
	if !chosen {
		return fmt.Errorf("chosen %q is neither the base nor a challenger", c.Chosen)
	}
	return nil
}

func checkFigures(what string, r *Result, positive bool) error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) || x < 0 }
	switch {
	case bad(r.Median) || positive && r.Median == 0:
		return fmt.Errorf("%s median %v s: want a positive finite time", what, r.Median)
	case bad(r.Lo) || bad(r.Hi):
		return fmt.Errorf("%s interval [%v, %v] s: want finite non-negative times", what, r.Lo, r.Hi)
	case bad(r.FLOPs) || bad(r.Bytes) || bad(r.Footprint):
		return fmt.Errorf("%s counts (%v FLOPs, %v bytes, %v footprint): want finite non-negative numbers", what, r.FLOPs, r.Bytes, r.Footprint)
	}
	return nil
}

// usable checks that this build and CPU can run the entry's choice: Check
// at this architecture, and the variant's features effective here.
func (e *Entry) usable() error {
	if err := e.Check(""); err != nil {
		return err
	}
	v, err := kernel.Lookup(e.Op + "/" + e.Best.Variant)
	if err != nil {
		return fmt.Errorf("stale variant: %v", err)
	}
	if !v.Available() {
		return fmt.Errorf("variant %s needs %s, not effective here", v.ID(), v.Requires)
	}
	return nil
}

func (e *Entry) config() kernel.Config {
	return kernel.Config{Threads: max(e.Best.Threads, 1), Params: e.Best.Params.Clone()}
}

// Choose implements kernel.Chooser: among the entries for op and dtype in
// an allowed class, the nearest shape and thread budget (the largest
// budget ≤ threads, else the smallest), then the fastest class there; an
// entry that kept the untuned default, or one farther than
// MaxShapeDistance from the call's shape, answers nothing (ok=false), so
// that the engine runs its default exactly as without a profile. The
// configuration is validated at the caller's shape by kernel.Choose.
func (p *Profile) Choose(op string, dt kernel.DType, s kernel.Shape, threads int, classes []kernel.Class) (kernel.Choice, bool) {
	cache := p.choices
	if cache == nil {
		return p.choose(op, dt, s, threads, classes)
	}
	key := op + "|" + string(dt) + "|" + s.String() + "|" + strconv.Itoa(threads) + "|" + kernel.ClassesKey(classes)
	if c, ok := cache.Load(key); ok {
		r := c.(choice)
		return r.c, r.ok
	}
	c, ok := p.choose(op, dt, s, threads, classes)
	cache.Store(key, choice{c, ok})
	return c, ok
}

type choice struct {
	c  kernel.Choice
	ok bool
}

func (p *Profile) choose(op string, dt kernel.DType, s kernel.Shape, threads int, classes []kernel.Class) (kernel.Choice, bool) {
	var best *Entry
	bestD := math.Inf(1)
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Op != op || e.DType != dt || !slices.Contains(classes, e.Class) {
			continue
		}
		d := shapeDistance(e.Shape, s) + threadDistance(e.Threads, threads)
		if d < bestD-1e-9 || (math.Abs(d-bestD) <= 1e-9 && e.Best.Median < best.Best.Median) {
			best, bestD = e, d
		}
	}
	if best == nil || best.KeepsDefault() || shapeDistance(best.Shape, s) > MaxShapeDistance {
		return kernel.Choice{}, false
	}
	v, err := kernel.Lookup(op + "/" + best.Best.Variant)
	if err != nil {
		return kernel.Choice{}, false
	}
	cfg := best.config()
	cfg.Threads = min(cfg.Threads, threads)
	if !v.Threaded {
		cfg.Threads = 1
	}
	return kernel.Choice{Variant: v, Config: cfg}, true
}

// MaxShapeDistance is how far (shapeDistance: a factor of 4 in one
// dimension, or of 2 in two) a call's shape may lie from the nearest
// entry's for the entry's choice to be used; farther, the engine runs its
// default. A choice measured on the MoE experts' gate/up at 16 rows of
// 1024 was otherwise applied to the dense layer's at 512 rows of 9216
// (distance 5.2), where it made prefill 8–15% slower end to end.
const MaxShapeDistance = 2.0

// shapeDistance is Σ |log2(a/b)| over the keys; a key missing from either
// counts as far.
func shapeDistance(a, b kernel.Shape) float64 {
	if len(a) != len(b) {
		return 1e6
	}
	d := 0.0
	for i := range a {
		if a[i].Key != b[i].Key {
			return 1e6
		}
		x, y := max(a[i].Value, 1), max(b[i].Value, 1)
		d += math.Abs(math.Log2(float64(x) / float64(y)))
	}
	return d
}

// threadDistance prefers the largest budget not above the asked count.
func threadDistance(budget, asked int) float64 {
	if budget <= asked {
		return 0.01 * float64(asked-budget)
	}
	return 100 + float64(budget-asked)
}

// Install loads the profile named by KTUNE_PROFILE (a path; "off" for
// none), else this machine's profile in DefaultDir when it exists, and
// installs it (InstallFrom).
func Install() (p *Profile, path, info string, warnings []string) {
	return InstallFrom(os.Getenv("KTUNE_PROFILE"))
}

// InstallFrom loads the profile at path ("off" or "none": none; "": this
// machine's profile in DefaultDir when it exists) and installs its thread
// placement on the default pool (Install). It returns the profile (nil for
// none), which the caller gives the models it loads as their kernel
// chooser (model.LoadOptions.Chooser), the path used ("" for none), what
// was loaded (Describe) and the warnings to show. A profile found in DefaultDir that ktune marked
// noisy (tuned while the machine was busy) is not used: a profile named
// by path is, with a warning.
func InstallFrom(path string) (p *Profile, used, info string, warnings []string) {
	named := path != ""
	switch {
	case path == "off" || path == "none":
		return nil, "", "", nil
	case path == "":
		path = DefaultPath()
		if _, err := os.Stat(path); err != nil {
			return nil, "", "", nil
		}
	}
	p, warns := Load(path)
	if p == nil {
		return nil, "", "", warns
	}
	if e := p.EndToEnd; e != nil && e.Verdict == VerdictLoss {
		if !named {
			return nil, "", "", append(warns, fmt.Sprintf("%s: ktune's end-to-end check found the engine slower with it than without (%s); not used: run ktune again, or name it (--profile %s, or KTUNE_PROFILE) to use it",
				path, e.Worst(), path))
		}
		warns = append(warns, fmt.Sprintf("%s: ktune's end-to-end check found the engine slower with it than without (%s); used because it was named", path, e.Worst()))
	}
	if len(p.Noisy) > 0 {
		if !named {
			return nil, "", "", append(warns, fmt.Sprintf("%s: tuned while the machine was busy (%s); not used: run ktune again on a quiet machine, or name it (--profile %s, or KTUNE_PROFILE) to use it",
				path, p.Noisy[0], path))
		}
		warns = append(warns, fmt.Sprintf("%s: tuned while the machine was busy (%s); used because it was named", path, p.Noisy[0]))
	}
	p.Install()
	kernel.Debugf("profile %s: %d entries", path, len(p.Entries))
	return p, path, p.Describe(path), warns
}

// Describe is one line on the profile at path: its choices and how they
// were confirmed against the untuned default (ConfirmCounts).
func (p *Profile) Describe(path string) string {
	s := fmt.Sprintf("tuning profile %s: %d choices", path, len(p.Entries))
	if c := p.ConfirmCounts(); c.Challenged > 0 {
		s += fmt.Sprintf("; of %d challenged in %d alternating rounds, %d beat the default, %d kept it, %d took a smaller thread budget's choice",
			c.Challenged, c.Rounds, c.Tuned, c.Kept, c.Fewer)
		if c.Busy > 0 {
			s += fmt.Sprintf(" (%d kept their base: the machine was busy)", c.Busy)
		}
		if c.Skipped > 0 {
			s += fmt.Sprintf(" (%d kept the default unconfirmed: the budget ran out)", c.Skipped)
		}
	} else {
		s += " (not confirmed against the default: tuned by an older ktune)"
	}
	if p.EndToEnd != nil {
		s += "; " + p.EndToEnd.Gain()
	}
	if len(p.Noisy) > 0 {
		s += "; marked noisy"
	}
	return s
}

// ConfirmCounts counts the entries by how their Confirm ended.
type ConfirmCounts struct {
	Challenged int // entries with a Confirm
	Rounds     int // the most rounds one ran
	Tuned      int // a challenger replaced the untuned default
	Kept       int // the untuned default stayed
	Fewer      int // a smaller thread budget's choice was taken
	Busy       int // the rounds ran on a busy machine (the base kept)
	Skipped    int // no time was left to confirm (the default kept)
}

// ConfirmCounts counts p's entries by their Confirm.
func (p *Profile) ConfirmCounts() ConfirmCounts {
	var c ConfirmCounts
	for _, e := range p.Entries {
		x := e.Confirm
		if x == nil {
			continue
		}
		c.Challenged++
		c.Rounds = max(c.Rounds, x.Rounds)
		if x.Busy != "" {
			c.Busy++
		}
		if x.Skipped != "" {
			c.Skipped++
		}
		switch {
		case x.Chosen == x.Base && x.Base == ConfirmDefault:
			c.Kept++
		case x.Chosen == ConfirmFewerThreads:
			c.Fewer++
		case x.Chosen != x.Base:
			c.Tuned++
		}
	}
	return c
}

// ThreadPlacement is the placement chosen for one thread budget.
type ThreadPlacement struct {
	Threads   int    `json:"threads"`
	Placement string `json:"placement"`
}

// PlacementFor is the placement for a thread count: that of the largest
// budget not above it (else the smallest), else Placement.
func (p *Profile) PlacementFor(threads int) string {
	best := -1
	for i, tp := range p.Placements {
		if best < 0 || threadDistance(tp.Threads, threads) < threadDistance(p.Placements[best].Threads, threads) {
			best = i
		}
	}
	if best < 0 {
		return p.Placement
	}
	return p.Placements[best].Placement
}

var (
	installedMu sync.Mutex
	installed   *Profile
)

// Install makes p the profile whose placement the default pool follows
// (the pool is the process's), applied for the pool's size (UsePlacement
// changes it for another count), and fixes its entries. Its kernel choices
// go to the models given it as their chooser, not the process.
func (p *Profile) Install() (restore func()) {
	p.choices = new(sync.Map) // entries are fixed from here on
	installedMu.Lock()
	prev := installed
	installed = p
	installedMu.Unlock()
	applyPlacement(p.PlacementFor(pool.Default().Size()), pool.Default().Size())
	return func() {
		installedMu.Lock()
		installed = prev
		installedMu.Unlock()
	}
}

// UsePlacement applies the installed profile's placement for a thread
// count (the engine calls it when it knows how many threads it runs); no
// profile, nothing.
func UsePlacement(threads int) {
	installedMu.Lock()
	p := installed
	installedMu.Unlock()
	if p != nil {
		applyPlacement(p.PlacementFor(threads), threads)
	}
}

// ApplyPlacement applies p's placement for a thread count to the default
// pool (as UsePlacement does for the installed profile).
func (p *Profile) ApplyPlacement(threads int) { applyPlacement(p.PlacementFor(threads), threads) }

// applyPlacement sets the default pool's placement by name for a thread
// count; a placement that cannot hold that many threads (pcores past the
// performance cores) falls back to compact. "" leaves it.
func applyPlacement(name string, threads int) {
	if name == "" {
		return
	}
	pl, err := pool.ParsePlacement(name)
	if err != nil {
		return
	}
	if !pool.Default().Fits(pl, threads) {
		pl = pool.Compact
	}
	if pool.Default().Placement() != pl {
		pool.Default().SetPlacement(pl)
	}
}

// Summary is a one-line description for logs.
func (p *Profile) Summary() string {
	ops := map[string]bool{}
	for _, e := range p.Entries {
		ops[e.Op] = true
	}
	names := make([]string, 0, len(ops))
	for o := range ops {
		names = append(names, o)
	}
	sort.Strings(names)
	return fmt.Sprintf("%s: %d entries for %s (ktune %s, %s)", p.Fingerprint, len(p.Entries), strings.Join(names, ", "), p.KtuneVersion, p.Created.Format(time.DateOnly))
}

// WriteJSON writes p to w (export and tests).
func (p *Profile) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}
