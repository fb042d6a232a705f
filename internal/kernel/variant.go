package kernel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ktune/ktune/internal/cpu"
)

// Param is one tunable parameter: its allowed values and its default. All
// parameters are integers; enumerations name their values in Labels.
type Param struct {
	Name   string
	Doc    string
	Values []int
	Labels []string // optional names of Values, same length
	// Default is used when DefaultFn is nil.
	Default int
	// DefaultFn computes an analytic default (e.g. from cache sizes); its
	// result is snapped to the nearest allowed value.
	DefaultFn func(info *cpu.Info, s Shape) int
}

// Label names a value (the number itself when the param has no labels).
func (p *Param) Label(v int) string {
	for i, x := range p.Values {
		if x == v && i < len(p.Labels) {
			return p.Labels[i]
		}
	}
	return strconv.Itoa(v)
}

// Allowed reports whether v is one of the values.
func (p *Param) Allowed(v int) bool {
	for _, x := range p.Values {
		if x == v {
			return true
		}
	}
	return false
}

// Values maps parameter names to values.
type Values map[string]int

func (v Values) String() string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Itoa(v[k])
	}
	return strings.Join(parts, ",")
}

// Clone copies v.
func (v Values) Clone() Values {
	c := make(Values, len(v))
	for k, x := range v {
		c[k] = x
	}
	return c
}

// Config is how a variant runs: its thread count and parameter values.
type Config struct {
	Threads int    `json:"threads"`
	Params  Values `json:"params,omitempty"`
}

// Variant is one implementation of an op.
type Variant struct {
	Op        string  // "family.op"
	Name      string  // "avx512_vnni", "generic", "reference"
	Doc       string  // one line
	DTypes    []DType // dtypes served
	Class     Class   // accuracy class
	Requires  cpu.Set // CPU features needed (checked against the effective set)
	Reference bool    // the op's reference: checked against, never a candidate
	Priority  int     // among available variants the highest is the default
	Params    []Param // the tunable space
	Threaded  bool    // runs on the worker pool: the tuner sweeps Config.Threads
	// New prepares an instance (pack, allocate) for a problem built by the
	// op's NewProblem and a configuration (already validated).
	New func(p Problem, cfg Config) (Instance, error)
	// Check, if set, rejects parameter values that do not fit a shape.
	Check func(s Shape, cfg Config) error
	// Cost, if set, overrides the op's count for this variant.
	Cost func(s Shape, dt DType, cfg Config) Cost
	// Impl is the typed kernel the family's own dispatcher calls; the
	// family asserts its type.
	Impl any
}

// ID is "family.op/variant".
func (v *Variant) ID() string { return v.Op + "/" + v.Name }

// Available reports whether the effective CPU features allow the variant.
func (v *Variant) Available() bool { return cpu.HasAll(v.Requires) }

// Serves reports whether the variant serves dt.
func (v *Variant) Serves(dt DType) bool { return hasDType(v.DTypes, dt) }

// Param returns the named parameter, or nil.
func (v *Variant) Param(name string) *Param {
	for i := range v.Params {
		if v.Params[i].Name == name {
			return &v.Params[i]
		}
	}
	return nil
}

// DefaultConfig is the untuned configuration at a shape: one thread (or
// the given count for threaded variants) and every parameter's default.
func (v *Variant) DefaultConfig(s Shape, threads int) Config {
	if !v.Threaded || threads < 1 {
		threads = 1
	}
	var info *cpu.Info // only for a DefaultFn: cpu.Get copies the description
	vals := Values{}
	for _, p := range v.Params {
		d := p.Default
		if p.DefaultFn != nil {
			if info == nil {
				info = cpu.Get()
			}
			d = nearest(p.Values, p.DefaultFn(info, s))
		}
		vals[p.Name] = d
	}
	return Config{Threads: threads, Params: vals}
}

func nearest(vals []int, x int) int {
	best := vals[0]
	for _, v := range vals {
		if abs(v-x) < abs(best-x) {
			best = v
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Validate checks a configuration: every parameter known and allowed,
// none missing, threads ≥ 1, and the variant's own Check.
func (v *Variant) Validate(s Shape, cfg Config) error {
	if cfg.Threads < 1 {
		return fmt.Errorf("%s: threads %d < 1", v.ID(), cfg.Threads)
	}
	if !v.Threaded && cfg.Threads != 1 {
		return fmt.Errorf("%s: single-threaded, asked for %d threads", v.ID(), cfg.Threads)
	}
	for name, val := range cfg.Params {
		p := v.Param(name)
		if p == nil {
			return fmt.Errorf("%s: unknown parameter %q", v.ID(), name)
		}
		if !p.Allowed(val) {
			return fmt.Errorf("%s: parameter %s=%d not in %v", v.ID(), name, val, p.Values)
		}
	}
	for _, p := range v.Params {
		if _, ok := cfg.Params[p.Name]; !ok {
			return fmt.Errorf("%s: parameter %s missing", v.ID(), p.Name)
		}
	}
	if v.Check != nil {
		if err := v.Check(s, cfg); err != nil {
			return fmt.Errorf("%s: %v", v.ID(), err)
		}
	}
	return nil
}

// Space lists every valid parameter combination at a shape (threads not
// included: the tuner sweeps them separately), in a deterministic order.
func (v *Variant) Space(s Shape) []Values {
	out := []Values{{}}
	for _, p := range v.Params {
		var next []Values
		for _, base := range out {
			for _, x := range p.Values {
				c := base.Clone()
				c[p.Name] = x
				next = append(next, c)
			}
		}
		out = next
	}
	valid := out[:0]
	for _, vals := range out {
		if v.Check == nil || v.Check(s, Config{Threads: 1, Params: vals}) == nil {
			valid = append(valid, vals)
		}
	}
	return valid
}

// Instantiate validates cfg and prepares an instance for p.
func (v *Variant) Instantiate(p Problem, cfg Config) (Instance, error) {
	if !v.Available() {
		return nil, fmt.Errorf("%s: not available on this CPU (needs %s, effective %s)", v.ID(), v.Requires, cpu.Effective())
	}
	if !v.Serves(p.DType()) {
		return nil, fmt.Errorf("%s: does not serve dtype %s", v.ID(), p.DType())
	}
	if err := v.Validate(p.Shape(), cfg); err != nil {
		return nil, err
	}
	return v.New(p, cfg)
}

// CostAt counts one run's FLOPs and bytes.
func (v *Variant) CostAt(s Shape, dt DType, cfg Config) Cost {
	if v.Cost != nil {
		return v.Cost(s, dt, cfg)
	}
	if op := LookupOp(v.Op); op != nil && op.Cost != nil {
		return op.Cost(s, dt)
	}
	return Cost{}
}
