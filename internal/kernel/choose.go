package kernel

import (
	"sync/atomic"
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
				Debugf("chose %s for %s dtype=%s threads=%d: %s %s", ch.Variant.Name, op, dt, threads, s, ch.Config.Params)
				return ch
			}
		}
	}
	v := Default(op, dt, classes...)
	if v == nil {
		return Choice{}
	}
	return Choice{Variant: v, Config: v.DefaultConfig(s, threads)}
}

func usable(ch Choice, dt DType, s Shape, classes []Class) bool {
	v := ch.Variant
	if !v.Available() || !v.Serves(dt) || (!v.Reference && !hasClass(classes, v.Class)) {
		return false
	}
	return v.Validate(s, ch.Config) == nil
}
