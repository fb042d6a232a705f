package kernel

import (
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/ktune/ktune/internal/cpu"
)

var (
	regMu    sync.RWMutex
	ops      = map[string]*Op{}
	variants = map[string][]*Variant{} // by op
	forced   = map[string]*Variant{}   // by op, for tests
	defaults = map[defaultKey]*Variant{}
	defGen   uint64
)

type defaultKey struct {
	op      string
	dt      DType
	classes string
}

// RegisterOp adds an op. Registering a name twice panics (a programming error).
func RegisterOp(o *Op) {
	regMu.Lock()
	defer regMu.Unlock()
	if !strings.Contains(o.Name, ".") {
		panic("kernel: op name must be family.op: " + o.Name)
	}
	if _, dup := ops[o.Name]; dup {
		panic("kernel: op registered twice: " + o.Name)
	}
	ops[o.Name] = o
}

// Register adds a variant. A duplicate ID, a second reference, or a
// variant without New panics (programming errors caught by any test run).
func Register(v *Variant) {
	regMu.Lock()
	defer regMu.Unlock()
	if v.New == nil || v.Op == "" || v.Name == "" || len(v.DTypes) == 0 || v.Class == "" {
		panic("kernel: incomplete variant " + v.ID())
	}
	for _, w := range variants[v.Op] {
		if w.Name == v.Name {
			panic("kernel: variant registered twice: " + v.ID())
		}
		if w.Reference && v.Reference {
			panic("kernel: second reference for " + v.Op)
		}
	}
	for i := range v.Params {
		p := &v.Params[i]
		if len(p.Values) == 0 || (len(p.Labels) != 0 && len(p.Labels) != len(p.Values)) || (p.DefaultFn == nil && !p.Allowed(p.Default)) {
			panic(fmt.Sprintf("kernel: %s: bad parameter %s", v.ID(), p.Name))
		}
	}
	variants[v.Op] = append(variants[v.Op], v)
	sortVariants(variants[v.Op])
	defaults = map[defaultKey]*Variant{}
	regGen.Add(1)
}

// Ops lists the registered ops sorted by name.
func Ops() []*Op {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]*Op, 0, len(ops))
	for _, o := range ops {
		out = append(out, o)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// LookupOp returns the op, or nil.
func LookupOp(name string) *Op {
	regMu.RLock()
	defer regMu.RUnlock()
	return ops[name]
}

// Variants lists every variant registered for op in this binary, available
// or not: by priority, the reference last.
func Variants(op string) []*Variant {
	regMu.RLock()
	defer regMu.RUnlock()
	return append([]*Variant(nil), variants[op]...)
}

// All lists every registered variant, grouped by op name.
func All() []*Variant {
	var out []*Variant
	for _, o := range Ops() {
		out = append(out, Variants(o.Name)...)
	}
	return out
}

// Reference returns the op's reference variant, or nil.
func Reference(op string) *Variant {
	for _, v := range Variants(op) {
		if v.Reference {
			return v
		}
	}
	return nil
}

// Lookup finds a variant by ID ("family.op/variant").
func Lookup(id string) (*Variant, error) {
	op, name, ok := strings.Cut(id, "/")
	if !ok {
		return nil, fmt.Errorf("bad variant id %q: want family.op/variant", id)
	}
	for _, v := range Variants(op) {
		if v.Name == name {
			return v, nil
		}
	}
	if LookupOp(op) == nil {
		return nil, fmt.Errorf("unknown op %q", op)
	}
	return nil, fmt.Errorf("op %s has no variant %q in this build", op, name)
}

// Candidates are the variants the tuner may time for op and dtype: available
// on the effective CPU, not the reference, serving dt, of an allowed class
// (nil classes: DefaultClasses).
func Candidates(op string, dt DType, classes []Class) []*Variant {
	if classes == nil {
		classes = DefaultClasses
	}
	var out []*Variant
	for _, v := range Variants(op) {
		if !v.Reference && v.Available() && v.Serves(dt) && hasClass(classes, v.Class) {
			out = append(out, v)
		}
	}
	return out
}

func hasClass(cs []Class, c Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// ClassesKey is a compact map key for a list of classes (hot paths call
// Default and Choose per kernel call; fmt would allocate and format).
func ClassesKey(classes []Class) string {
	n := 0
	for _, c := range classes {
		n += len(c) + 1
	}
	b := make([]byte, 0, n)
	for _, c := range classes {
		b = append(b, c...)
		b = append(b, ',')
	}
	return string(b)
}

// Default is the variant the dispatcher uses without a profile: a forced
// variant if a test set one, else the highest-priority candidate, else the
// reference. The choice is cached until the effective CPU set changes.
// KTUNE_DEBUG=1 logs each new choice.
func Default(op string, dt DType, classes ...Class) *Variant {
	if len(classes) == 0 {
		classes = DefaultClasses
	}
	g := cpu.Generation()
	key := defaultKey{op, dt, ClassesKey(classes)}
	regMu.RLock()
	if f := forced[op]; f != nil {
		regMu.RUnlock()
		return f
	}
	v, ok := defaults[key]
	fresh := defGen == g
	regMu.RUnlock()
	if ok && fresh {
		return v
	}
	cands := Candidates(op, dt, classes)
	if len(cands) > 0 {
		v = cands[0]
	} else {
		v = Reference(op)
	}
	regMu.Lock()
	if defGen != g {
		defaults = map[defaultKey]*Variant{}
		defGen = g
	}
	defaults[key] = v
	regMu.Unlock()
	if v != nil {
		Debugf("default for %s dtype=%s classes=%v: %s", op, dt, classes, v.Name)
	}
	return v
}

// DefaultAt is the variant that runs op at shape s without a profile's
// choice: a forced variant if a test set one, else the op's own rule at s
// (Op.DefaultAt), else Default.
func DefaultAt(op string, dt DType, s Shape, classes ...Class) *Variant {
	if len(classes) == 0 {
		classes = DefaultClasses
	}
	regMu.RLock()
	f, o := forced[op], ops[op]
	regMu.RUnlock()
	if f == nil && o != nil && o.DefaultAt != nil {
		if v := o.DefaultAt(s, dt, classes); v != nil {
			Debugf("default for %s dtype=%s classes=%v at %s: %s (the family's rule)", op, dt, classes, s, v.Name)
			return v
		}
	}
	return Default(op, dt, classes...)
}

// Force makes Default return the named variant for op until restore is
// called (tests and benchmarks of a family's typed dispatcher).
func Force(op, name string) (restore func(), err error) {
	v, err := Lookup(op + "/" + name)
	if err != nil {
		return nil, err
	}
	if !v.Available() {
		return nil, fmt.Errorf("%s: not available (needs %s)", v.ID(), v.Requires)
	}
	regMu.Lock()
	prev := forced[op]
	forced[op] = v
	regGen.Add(1)
	regMu.Unlock()
	return func() {
		regMu.Lock()
		forced[op] = prev
		regGen.Add(1)
		regMu.Unlock()
	}, nil
}

var debug = os.Getenv("KTUNE_DEBUG") != "" && os.Getenv("KTUNE_DEBUG") != "0"

// Debugf logs to stderr when KTUNE_DEBUG is set.
func Debugf(format string, args ...any) {
	if debug {
		log.Printf("ktune: "+format, args...)
	}
}
