package kernel

import (
	"reflect"
	"sync"

	"github.com/ktune/ktune/internal/cpu"
)

// A Choice is a variant and its configuration for one call of an op.
type Choice struct {
	Variant *Variant
	Config  Config
}

// A Chooser picks the variant and configuration for an op at a shape, thread
// count and set of allowed accuracy classes: a tuning profile
// (profile.Load), carried in a caller's Rules; ok=false falls back to the
// defaults.
// Implementations must be safe for concurrent use and must only return
// variants that are available, serve dt, belong to an allowed class and
// validate at s.
type Chooser interface {
	Choose(op string, dt DType, s Shape, threads int, classes []Class) (c Choice, ok bool)
}

// Rules are what one caller's kernel choices follow (a model's, a
// benchmark's): its tuning profile's Chooser (nil: the defaults) and the
// accuracy classes it allows (none: DefaultClasses). A model holds its own
// and passes them down with its calls, as it does its thread count: two
// models in one process choose apart, and closing one changes nothing for
// another. A Chooser kept in Rules should be comparable (a pointer):
// ChooseDims keeps its answers per chooser.
type Rules struct {
	Chooser Chooser
	Classes []Class
}

// WithClasses is r allowing the given classes instead (the same chooser).
func (r Rules) WithClasses(classes ...Class) Rules {
	r.Classes = classes
	return r
}

// classes are the allowed classes, DefaultClasses for none.
func (r Rules) classes() []Class {
	if len(r.Classes) == 0 {
		return DefaultClasses
	}
	return r.Classes
}

// Choose is the defaults' answer (or a test's forced variant) for op at s:
// Rules{Classes: classes}.Choose, for callers that follow no profile (the
// tuner's candidates, the roofline's points, tests).
func Choose(op string, dt DType, s Shape, threads int, classes ...Class) Choice {
	return Rules{Classes: classes}.Choose(op, dt, s, threads)
}

// Choose is how kernel families' high-level entry points pick what to run:
// a forced variant (tests) with its default configuration; else r's
// Chooser's pick when it has one that validates here; else DefaultAt (the
// family's untuned rule at s) with DefaultConfig.
func (r Rules) Choose(op string, dt DType, s Shape, threads int) Choice {
	classes := r.classes()
	if threads < 1 {
		threads = 1
	}
	regMu.RLock()
	f := forced[op]
	regMu.RUnlock()
	if f == nil && r.Chooser != nil {
		if ch, ok := r.Chooser.Choose(op, dt, s, threads, classes); ok && ch.Variant != nil && usable(ch, dt, s, classes) {
			Debugf("chose %s for %s dtype=%s threads=%d: %s %s (the profile's)", ch.Variant.Name, op, dt, threads, s, ch.Config.Params)
			return ch
		}
	}
	v := DefaultAt(op, dt, s, classes...)
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

// ChooseDims is r.Choose at MakeShape(keys, vals...) for the hot paths (a
// decode step dispatches every matmul of every layer): each answer is kept
// per chooser until a forced variant, a registration or the effective CPU
// features change, so a repeated call neither builds the shape nor asks
// the chooser, and does not allocate. It assumes what the Chooser
// interface implies: a chooser's answer depends on its arguments alone.
// keys must be the same for every call of one op. The answers share their
// Config.Params: callers must not modify them.
func (r Rules) ChooseDims(op string, dt DType, keys []string, vals []int, threads int) Choice {
	classes := r.classes()
	if threads < 1 {
		threads = 1
	}
	if len(vals) > len(choiceKey{}.dims) || len(classes) > len(choiceKey{}.classes) ||
		r.Chooser != nil && !reflect.TypeOf(r.Chooser).Comparable() {
		return r.Choose(op, dt, MakeShape(keys, vals...), threads)
	}
	k := choiceKey{chooser: r.Chooser, op: op, dt: dt, nd: len(vals), threads: threads, nc: len(classes)}
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
	c = r.Choose(op, dt, MakeShape(keys, vals...), threads)
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
	chooser Chooser
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
