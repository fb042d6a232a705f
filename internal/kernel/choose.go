package kernel

import (
	"sync"
	"sync/atomic"

	"github.com/ktune/ktune/internal/cpu"
)

// A Choice is a variant and its configuration for one call of an op.
type Choice struct {
	Variant *Variant
	Config  Config
}

// A Chooser picks the variant and configuration for an op at a shape, thread
// count and set of allowed accuracy classes. The runtime installs one built
// from a tuning profile (profile.Load); ok=false falls back to the defaults.
// Implementations must be safe for concurrent use and must only return
// variants that are available, serve dt, belong to an allowed class and
// validate at s.
type Chooser interface {
	Choose(op string, dt DType, s Shape, threads int, classes []Class) (c Choice, ok bool)
}

type chooserBox struct{ c Chooser }

var chooser atomic.Pointer[chooserBox]

// SetChooser installs c (nil: none) for every later Choose call and returns
// a function restoring the previous one.
func SetChooser(c Chooser) (restore func()) {
	prev := chooser.Swap(&chooserBox{c})
	regGen.Add(1) // typed dispatchers re-select
	return func() { chooser.Store(prev); regGen.Add(1) }
}

// CurrentChooser returns the installed chooser, or nil.
func CurrentChooser() Chooser {
	if b := chooser.Load(); b != nil {
		return b.c
	}
	return nil
}

// Choose is how kernel families' high-level entry points pick what to run:
// a forced variant (tests) with its default configuration; else the
// installed Chooser's pick when it has one that validates here; else
// Default with DefaultConfig. classes empty means DefaultClasses.
func Choose(op string, dt DType, s Shape, threads int, classes ...Class) Choice {
	if len(classes) == 0 {
		classes = DefaultClasses
	}
	if threads < 1 {
		threads = 1
	}
	regMu.RLock()
	f := forced[op]
	regMu.RUnlock()
	if f == nil {
		if c := CurrentChooser(); c != nil {
			if ch, ok := c.Choose(op, dt, s, threads, classes); ok && ch.Variant != nil && usable(ch, dt, s, classes) {
				Debugf("chose %s for %s dtype=%s threads=%d: %s %s (the profile's)", ch.Variant.Name, op, dt, threads, s, ch.Config.Params)
				return ch
			}
		}
	}
	v := Default(op, dt, classes...)
	if v == nil {
		return Choice{}
	}
	ch := Choice{Variant: v, Config: v.DefaultConfig(s, threads)}
	if f == nil && debug {
		Debugf("chose %s for %s dtype=%s threads=%d: %s %s (the default: no profile choice)", v.Name, op, dt, threads, s, ch.Config.Params)
	}
	return ch
}

func usable(ch Choice, dt DType, s Shape, classes []Class) bool {
	v := ch.Variant
	if !v.Available() || !v.Serves(dt) || (!v.Reference && !hasClass(classes, v.Class)) {
		return false
	}
	return v.Validate(s, ch.Config) == nil
}

// ChooseDims is Choose at MakeShape(keys, vals...) for the hot paths (a
// decode step dispatches every matmul of every layer): each answer is kept
// until the chooser, a forced variant, a registration or the effective CPU
// features change, so a repeated call neither builds the shape nor asks
// the chooser, and does not allocate. It assumes what the Chooser
// interface implies: a chooser's answer depends on its arguments alone.
// keys must be the same for every call of one op. The answers share their
// Config.Params: callers must not modify them.
func ChooseDims(op string, dt DType, keys []string, vals []int, threads int, classes ...Class) Choice {
	if len(classes) == 0 {
		classes = DefaultClasses
	}
	if threads < 1 {
		threads = 1
	}
	if len(vals) > len(choiceKey{}.dims) || len(classes) > len(choiceKey{}.classes) {
		return Choose(op, dt, MakeShape(keys, vals...), threads, classes...)
	}
	k := choiceKey{op: op, dt: dt, nd: len(vals), threads: threads, nc: len(classes)}
	copy(k.dims[:], vals)
	copy(k.classes[:], classes)
	cg, rg := cpu.Generation(), regGen.Load()
	choices.mu.RLock()
	c, ok := choices.m[k]
	fresh := choices.cpuGen == cg && choices.regGen == rg
	choices.mu.RUnlock()
	if ok && fresh {
		return c
	}
	c = Choose(op, dt, MakeShape(keys, vals...), threads, classes...)
	choices.mu.Lock()
	if choices.m == nil || choices.cpuGen != cg || choices.regGen != rg {
		// c was chosen at or after (cg, rg): kept under them, a later
		// change of either makes it stale.
		choices.m = map[choiceKey]Choice{}
		choices.cpuGen, choices.regGen = cg, rg
	}
	if len(choices.m) < maxChoices {
		choices.m[k] = c
	}
	choices.mu.Unlock()
	return c
}

// choiceKey identifies one ChooseDims answer (dims and classes beyond nd
// and nc are zero).
type choiceKey struct {
	op      string
	dt      DType
	dims    [6]int
	nd      int
	threads int
	classes [4]Class
	nc      int
}

// maxChoices bounds the cache (prefill chunks of every length at every
// shape would otherwise grow it without end); beyond it answers are
// computed each time.
const maxChoices = 4096

var choices struct {
	mu             sync.RWMutex
	cpuGen, regGen uint64
	m              map[choiceKey]Choice
}
