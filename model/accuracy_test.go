// Accuracy budgets of the engine on the golden tiny models: per weight preset
// and accuracy class, the logits against the golden float64 logits.
package model_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ktune/ktune/cli/krun"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/kernels/gemm"
	"github.com/ktune/ktune/model"
)

// accClass is an accuracy class the engine runs with (LoadOptions.Classes).
type accClass struct {
	Name string
	// Pin is the class run wherever it serves a matrix (classChooser);
	// the other matrices run f32.
	Pin kernel.Class
	// Serves are the weight formats whose arithmetic the class changes; a
	// preset with none of them runs exactly the f32 row, so has no row.
	Serves []kernel.DType
}

// accClasses: f32 activations everywhere, and int8 activations (one scale
// per group of 32) for the quantized matrices (Q8, Q6, Q5, Q4, Q3, Q2 and the K formats), which is the engine's default
// (kernel.DefaultClasses) on CPUs with an int8 dot product. bf16act is
// opt-in (no engine command enables it), exists only on CPUs with
// AVX512_BF16 or BFDOT and has no pure-Go variant, so a row for it would
// change with the machine; it is not tabulated.
var accClasses = []accClass{
	{"f32", kernel.ClassF32, nil},
	{"int8act", kernel.ClassInt8Act, []kernel.DType{kernel.Q8, kernel.Q6, kernel.Q5, kernel.Q4, kernel.Q3, kernel.Q2, kernel.Q6K, kernel.Q5K, kernel.Q4K, kernel.Q3K}},
}

// accBudget bounds the relative RMS (‖got−golden‖₂/‖golden‖₂) of a run's
// prompt logits [T,V] and decode logits [n,V] against the golden float64
// logits.
type accBudget struct{ Prompt, Decode float64 }

// tolPortable bounds the same-arithmetic checks: the same arithmetic as
// the pure-Go kernels of the class (generic, generic_int8), in another
// summation order.
//
//   - f32 class: the relative RMS between the run's logits (prompt and
//     decode each) and the same engine's on the pure-Go kernels
//     (classChooser.Portable). Measured 2026-12-01: at most 1.5e-6 under
//     AVX-512, AVX2 and purego.
//   - int8act class: the relative RMS of every gemm call's output against
//     the pure-Go variant of its class on the same operands (gemm.SetShadow;
//     callCheck). Whole runs cannot be compared: a 1e-7 difference
//     anywhere (an f32 sum in another order) can move an activation across
//     an int8 rounding boundary, and the logits then differ by the weight
//     format's error for that one value, not by the arithmetic's: the q3
//     preset's int8act run is 0.0078 off its portable run at every
//     position, while no call differs by more than 3e-7 (measured
//     2026-12-01, AVX-512 VNNI). The whole-run distance is reported
//     ("vs portable" in the table), not asserted.
//
// 1e-5 is the float32 summation-order bound of the engine's other
// same-arithmetic check (tolQuantPipeline), not a measured budget: any
// damage it must see (1% noise: 1e-2) is three orders above it.
const tolPortable = 1e-5

// accBudgets are the budgets per golden tiny model (keyed by the SHA-256 of
// its input_ids, generated_ids, logits and decode_logits, first 16 hex
// digits; tinyGolden.id) and per "preset/class".
// Each is today's measured figure plus a margin of at most 25%, so a
// regression of more than that fails. A golden folder of other data has no
// measured budgets: there only the finiteness, greedy-id and same-arithmetic
// checks are asserted, and the figures are logged.
//
// Measured on 2026-12-01 (AMD EPYC, 2 threads) under three kernel sets:
// AVX-512 with VNNI, KTUNE_MAX_ISA=avx2, and -tags purego; the figure
// quoted is the largest of the three. The quantized rows are the weight
// (and activation) format's error and agree to 4 digits across the three
// (their kernels differ by ~1e-6 relative), so their margin is 10%. The
// f32 and bf16 rows are float32 rounding (1e-6, ±20% between the kernel
// sets), so their margin is 25%.
var accBudgets = map[string]map[string]accBudget{
	// ../shared/golden/tiny_model (4 layers, hidden 256, vocabulary 512)
	"59de5031c5a6fd55": {
		"f32/f32": {
			Prompt: 1.32e-6, // measured 1.056e-6 (purego; 9.72e-7 AVX-512), +25%
			Decode: 1.37e-6, // measured 1.103e-6 (purego; 8.37e-7 AVX-512), +24%
		},
		"bf16/f32": { // the checkpoint is BF16: bf16 packing is lossless
			Prompt: 1.32e-6, // measured 1.056e-6 (purego; 9.74e-7 AVX-512), +25%
			Decode: 1.37e-6, // measured 1.103e-6 (purego; 8.33e-7 AVX-512), +24%
		},
		"q8/f32": {
			Prompt: 0.0236, // measured 0.02148, +9.9%
			Decode: 0.406,  // measured 0.3697 (one step 0.75 off, the others ≤ 0.05), +9.8%
		},
		"q8/int8act": {
			Prompt: 0.138, // measured 0.1255 (one position 0.42 off, the others ≤ 0.04), +10%
			Decode: 0.404, // measured 0.3675, +9.9%
		},
		"q4/f32": {
			Prompt: 0.228, // measured 0.2081, +9.6%
			Decode: 0.430, // measured 0.3918, +9.7%
		},
		"q4/int8act": {
			Prompt: 0.253, // measured 0.2302, +9.9%
			Decode: 0.431, // measured 0.3927, +9.8%
		},
		"q4-all/f32": {
			Prompt: 0.585, // measured 0.5324, +9.9%
			Decode: 0.614, // measured 0.5583, +10%
		},
		"q4-all/int8act": {
			Prompt: 0.566, // measured 0.5151, +9.9%
			Decode: 0.594, // measured 0.5406, +9.9%
		},
		"q4-mix/f32": {
			Prompt: 0.559, // measured 0.5081, +10%
			Decode: 0.689, // measured 0.6266, +10%
		},
		"q4-mix/int8act": {
			Prompt: 0.559, // measured 0.5085, +9.9%
			Decode: 0.656, // measured 0.5968, +9.9%
		},
		"q6/f32": {
			Prompt: 0.126,  // measured 0.1146, +9.9%
			Decode: 0.0874, // measured 0.07947, +10%
		},
		"q6/int8act": {
			Prompt: 0.0858, // measured 0.07805, +9.9%
			Decode: 0.0884, // measured 0.08042, +9.9%
		},
		"q3/f32": {
			Prompt: 0.486, // measured 0.4422, +9.9%
			Decode: 0.350, // measured 0.3189, +9.8%
		},
		"q3/int8act": {
			Prompt: 0.548, // measured 0.4982 (AVX2; 0.498 AVX-512 and purego), +10%
			Decode: 0.533, // measured 0.4853, +9.8%
		},
		"q4k/f32": {
			Prompt: 0.211, // measured 0.1922, +9.8%
			Decode: 0.438, // measured 0.3982, +10%
		},
		"q4k/int8act": {
			Prompt: 0.215, // measured 0.1952 (AVX2, purego; 0.1948 AVX-512), +10%
			Decode: 0.438, // measured 0.3979, +10%
		},
		"q4k-m/f32": {
			Prompt: 0.342, // measured 0.3109, +10%
			Decode: 0.478, // measured 0.4341, +10%
		},
		"q4k-m/int8act": {
			Prompt: 0.345, // measured 0.3132 (AVX-512; 0.3128 AVX2, purego), +10%
			Decode: 0.477, // measured 0.4337, +10%
		},
		"q3k/f32": {
			Prompt: 0.437, // measured 0.3972, +10%
			Decode: 0.320, // measured 0.2912, +9.9%
		},
		"q3k/int8act": {
			Prompt: 0.437, // measured 0.3973, +10%
			Decode: 0.324, // measured 0.2949 (AVX-512; 0.2948 AVX2, 0.2946 purego), +9.9%
		},
		"q2/f32": {
			Prompt: 0.695, // measured 0.632, +10%
			Decode: 0.699, // measured 0.6359, +9.9%
		},
		"q2/int8act": {
			Prompt: 0.699, // measured 0.6361, +9.9%
			Decode: 0.700, // measured 0.6372 (AVX2, purego; 0.6368 AVX-512), +9.9%
		},
	},
}

// tinyGolden is one golden tiny_model folder.
type tinyGolden struct {
	f       *golden.File
	id      string // accBudgets key: a hash of the golden ids and logits
	T, V, n int
	prompt  []int32   // [T] input_ids (batch row 0)
	gen     []int32   // [n] generated_ids
	logits  []float32 // [T,V]
	decode  []float32 // [n,V]
}

func loadTinyGolden(t *testing.T) []*tinyGolden {
	t.Helper()
	var out []*tinyGolden
	for _, f := range golden.Load(t, golden.TinyModel) {
		g := &tinyGolden{f: f}
		d := f.Dims(t, "logits")
		g.T, g.V = d[1], d[2]
		g.n = f.Dims(t, "generated_ids")[1]
		for _, x := range f.I64(t, "input_ids")[:g.T] {
			g.prompt = append(g.prompt, int32(x))
		}
		for _, x := range f.I64(t, "generated_ids")[:g.n] {
			g.gen = append(g.gen, int32(x))
		}
		g.logits = f.F32(t, "logits")[:g.T*g.V]
		g.decode = f.F32(t, "decode_logits")[:g.n*g.V]
		h := sha256.New()
		for _, v := range [][]float32{f.F32(t, "logits"), f.F32(t, "decode_logits")} {
			binary.Write(h, binary.LittleEndian, v)
		}
		for _, v := range [][]int64{f.I64(t, "input_ids"), f.I64(t, "generated_ids")} {
			binary.Write(h, binary.LittleEndian, v)
		}
		g.id = hex.EncodeToString(h.Sum(nil)[:8])
		out = append(out, g)
	}
	return out
}

// engineOut is a run of the golden protocol: the prompt's logits at every
// position, then the logits of each greedy id fed as one decode step.
type engineOut struct {
	logits []float32 // [T,V]
	decode []float32 // [n,V]
}

func runEngine(t *testing.T, g *tinyGolden, opt model.LoadOptions) engineOut {
	t.Helper()
	m, err := model.Load(g.f.Dir(), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close() // before the next Load: a Chooser is process-wide
	st := m.NewState(0)
	var r engineOut
	if r.logits, err = m.PrefillWith(st, g.prompt, model.PrefillOptions{AllLogits: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range g.gen {
		lg, err := m.Decode([]*model.State{st}, []int32{id})
		if err != nil {
			t.Fatal(err)
		}
		r.decode = append(r.decode, lg[0]...)
	}
	return r
}

// classChooser pins the arithmetic of a run: wherever a variant of class
// Pin serves an op and weight format it runs the best available one, else
// the best f32-class one. Portable restricts both to the pure-Go variants
// (generic, generic_int8, generic_chunk): the same arithmetic as the fast
// kernels in another order. Without a pin, DefaultClasses would run int8
// activations only where the CPU has an int8 dot product (VNNI, AMX, SDOT)
// and f32 elsewhere, so a row would mean different things on different
// machines.
type classChooser struct {
	Pin      kernel.Class
	Portable bool
}

func (c classChooser) Choose(op string, dt kernel.DType, s kernel.Shape, threads int, classes []kernel.Class) (kernel.Choice, bool) {
	for _, cl := range []kernel.Class{c.Pin, kernel.ClassF32} {
		for _, v := range kernel.Candidates(op, dt, []kernel.Class{cl}) { // best first
			if c.Portable && !strings.HasPrefix(v.Name, "generic") {
				continue
			}
			return kernel.Choice{Variant: v, Config: v.DefaultConfig(s, threads)}, true
		}
	}
	return kernel.Choice{}, false
}

// accFigures are what checkLogits measures.
type accFigures struct {
	Prompt, Decode float64 // relative RMS vs the golden logits
	Portable       float64 // the larger relative RMS (prompt, decode) vs the portable run
	Calls          int     // int8act: gemm calls compared with their pure-Go variant
	CallRMS        float64 // int8act: the largest relative RMS of one call vs its pure-Go variant
	Steps          int     // greedy steps: the prompt's end, each decode step but the last
	Checked        int     // steps whose golden margin exceeds the logit error there
	Agree          int     // steps whose greedy id is the golden one
}

// checkLogits is the accuracy check of one run, got, against the golden
// data g and the portable run of the same preset and class, and, for
// int8act (calls non-nil), the run's gemm calls against their pure-Go
// variants. It returns the figures and every failure (none: the run
// passes):
//   - every logit finite;
//   - relative RMS of the prompt and decode logits vs golden within b
//     (b nil: no measured budget for this golden data, not asserted);
//   - at each greedy step, the id is the golden one wherever the golden
//     top-1/top-2 margin exceeds the largest |logit error| at that step,
//     and that error is finite;
//   - f32: relative RMS vs the portable run within tolPortable;
//   - int8act: every call's relative RMS vs its pure-Go variant within
//     tolPortable (tolPortable says why not the whole run).
//
// The last is what sees small damage on a coarse format: q4-all is ~50%
// off the golden logits, so 1% of noise moves its error by 0.01%, far
// inside any budget, but the portable comparison pins the arithmetic to
// 1e-5.
func checkLogits(g *tinyGolden, got, portable engineOut, calls *callCheck, b *accBudget) (f accFigures, fails []string) {
	failf := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }
	if len(got.logits) != g.T*g.V || len(got.decode) != g.n*g.V {
		failf("%d prompt and %d decode logits, want %d×%d and %d×%d", len(got.logits), len(got.decode), g.T, g.V, g.n, g.V)
		return f, fails
	}
	for _, x := range []struct {
		name string
		v    []float32
	}{{"prompt logits", got.logits}, {"decode logits", got.decode}} {
		for i, v := range x.v {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				failf("%s[%d] = %v: not finite", x.name, i, v)
				break
			}
		}
	}
	f.Prompt, f.Decode = model.RelRMS(got.logits, g.logits), model.RelRMS(got.decode, g.decode)
	if b != nil {
		if !(f.Prompt <= b.Prompt) {
			failf("prompt logits: relative RMS vs golden %.3g exceeds the budget %.3g", f.Prompt, b.Prompt)
		}
		if !(f.Decode <= b.Decode) {
			failf("decode logits: relative RMS vs golden %.3g exceeds the budget %.3g", f.Decode, b.Decode)
		}
	}
	V := g.V
	for i := 0; i < g.n; i++ {
		var s, want []float32
		if i == 0 {
			s, want = got.logits[(g.T-1)*V:g.T*V], g.logits[(g.T-1)*V:g.T*V]
		} else {
			s, want = got.decode[(i-1)*V:i*V], g.decode[(i-1)*V:i*V]
		}
		f.Steps++
		id, e, mg := model.Argmax(s), maxAbsErr(s, want), margin(want)
		if id == int(g.gen[i]) {
			f.Agree++
		}
		switch {
		case !(e < math.Inf(1)):
			failf("greedy step %d: logit error %v, so its id %d cannot be checked", i, e, id)
		case mg > e:
			f.Checked++
			if id != int(g.gen[i]) {
				failf("greedy step %d: id %d, want %d: the golden margin %.3g exceeds the logit error %.3g", i, id, g.gen[i], mg, e)
			}
		}
	}
	f.Portable = max(model.RelRMS(got.logits, portable.logits), model.RelRMS(got.decode, portable.decode)) // NaN if either is
	if calls == nil {
		if !(f.Portable <= tolPortable) {
			failf("relative RMS %.3g vs the same engine on the portable kernels exceeds %.g", f.Portable, tolPortable)
		}
		return f, fails
	}
	f.Calls, f.CallRMS = calls.n, calls.worst
	if !(calls.worst <= tolPortable) {
		failf("gemm call %s: relative RMS %.3g vs its pure-Go variant on the same operands exceeds %.g", calls.worstAt, calls.worst, tolPortable)
	}
	return f, fails
}

// coarseGridCheck is the int8act budget's wrong-but-fast candidate: the
// activations on one scale per 256 values (ggml's Q8_K grid, which would
// spare the Q4 kernels' per-group activation-scale multiply, ~9% of the
// dense q4 GEMMs' time) instead of one per 32. The same-arithmetic call
// check cannot see it (the pure-Go variant quantizes the same way), so the
// budget must: the run must fail it. Asserted for q4 and q4k, the formats
// whose kernels it would speed up (measured on the golden tiny model:
// prompt 0.2305 → 0.2649 against a budget of 0.253 for q4, 0.1948 →
// 0.2386 against 0.215 for q4k).
func coarseGridCheck(t *testing.T, g *tinyGolden, row accRow, portable engineOut, b *accBudget) {
	t.Helper()
	opt := row.opt
	opt.Chooser = classChooser{Pin: row.pin}
	restore := gemm.SetActBlock(256)
	coarse := runEngine(t, g, opt)
	restore()
	f, fails := checkLogits(g, coarse, portable, new(callCheck), b)
	if !slices.ContainsFunc(fails, func(s string) bool { return strings.Contains(s, "exceeds the budget") }) {
		t.Errorf("mutation: activations on one scale per 256 values pass the budget %+v (prompt %.4g, decode %.4g)", *b, f.Prompt, f.Decode)
		return
	}
	t.Logf("mutation: activations on one scale per 256 values fail the budget: prompt %.4g, decode %.4g", f.Prompt, f.Decode)
}

// callCheck gathers the int8act same-arithmetic check over one run: every
// gemm call of a variant that is not pure Go against the pure-Go variant of
// its class on the same operands (gemm.SetShadow). It also damages each
// call's output (a NaN; +1% relative Gaussian noise) and counts the
// damaged calls the bound would have passed: its mutation check.
type callCheck struct {
	mu        sync.Mutex
	n         int     // calls compared
	worst     float64 // largest relative RMS (NaN if any)
	worstAt   string
	nanPass   int // calls with a NaN planted that the bound passed
	noisy     int // calls with noise planted (those with a non-zero output)
	noisePass int // of which the bound passed
}

// relDist is ‖a−b‖₂/‖b‖₂ in float64 (0 for a = b, +Inf for b = 0 ≠ a, NaN
// if any value is).
func relDist(a, b []float32) float64 {
	var num, den float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	if num == 0 {
		return 0
	}
	return math.Sqrt(num / den)
}

func (c *callCheck) see(s *gemm.ShadowCall) {
	d := relDist(s.Got, s.Want)
	bad := slices.Clone(s.Got)
	bad[len(bad)/2] = float32(math.NaN())
	nanPass := relDist(bad, s.Want) <= tolPortable
	c.mu.Lock()
	defer c.mu.Unlock()
	rng := rand.New(rand.NewPCG(uint64(c.n), 23))
	c.n++
	if !(d <= c.worst) {
		c.worst, c.worstAt = d, fmt.Sprintf("%s/%s %s m=%d n=%d k=%d", s.Op, s.Variant, s.DType, s.M, s.N, s.K)
	}
	if nanPass {
		c.nanPass++
	}
	if slices.ContainsFunc(s.Want, func(v float32) bool { return v != 0 }) {
		copy(bad, s.Got)
		for i := range bad {
			bad[i] *= float32(1 + 0.01*rng.NormFloat64())
		}
		c.noisy++
		if relDist(bad, s.Want) <= tolPortable {
			c.noisePass++
		}
	}
}

// maxAbsErr is max |got[i]−want[i]|, NaN if any difference is NaN.
func maxAbsErr(got, want []float32) float64 {
	m := 0.0
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) {
			return math.NaN()
		}
		m = max(m, d)
	}
	return m
}

// margin is the gap between the two largest values.
func margin(v []float32) float64 {
	a, b := math.Inf(-1), math.Inf(-1)
	for _, x := range v {
		switch f := float64(x); {
		case f > a:
			a, b = f, a
		case f > b:
			b = f
		}
	}
	return a - b
}

// accRow is one preset × class.
type accRow struct {
	Preset, Class string
	pin           kernel.Class
	opt           model.LoadOptions // Classes set, Chooser not
}

func (r accRow) key() string { return r.Preset + "/" + r.Class }

// accRows are the rows of every engine preset (krun.Presets) and class.
func accRows() []accRow {
	var rows []accRow
	for _, p := range krun.Presets {
		used := presetDTypes(p.Formats)
		for _, c := range accClasses {
			if c.Serves != nil && !slices.ContainsFunc(c.Serves, func(d kernel.DType) bool { return slices.Contains(used, d) }) {
				continue
			}
			opt := model.LoadOptions{Formats: p.Formats}
			opt.Classes = []kernel.Class{kernel.ClassF32}
			if c.Pin != kernel.ClassF32 {
				opt.Classes = append(opt.Classes, c.Pin)
			}
			rows = append(rows, accRow{p.Name, c.Name, c.Pin, opt})
		}
	}
	return rows
}

// presetDTypes are the weight formats a preset's formats use.
func presetDTypes(o model.Formats) []kernel.DType {
	dt := o.DType
	if dt == "" {
		dt = kernel.F32
	}
	out := []kernel.DType{dt}
	for _, d := range []kernel.DType{o.AttnDType, o.FFNDType, o.ExpertDType, o.HeadDType, o.GateDType} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// TestAccuracy asserts each preset's and class's budget on every golden tiny
// model, checks that checkLogits fails on the run's own logits once damaged
// (a NaN; +1% relative Gaussian noise), and checks the accuracy table
// (docs/accuracy.md, and the README's copy) against this run's figures.
func TestAccuracy(t *testing.T) {
	update := os.Getenv("KTUNE_UPDATE_ACCURACY") == "1"
	var secs []accSection
	for _, g := range loadTinyGolden(t) {
		t.Run(g.f.Name(), func(t *testing.T) {
			budgets, measured := accBudgets[g.id]
			if !measured {
				t.Logf("golden data %s (%s) has no measured budgets: checking finiteness, greedy ids and the portable kernels only", g.id, g.f.Path)
			}
			var lines []accLine
			for _, row := range accRows() {
				t.Run(row.key(), func(t *testing.T) {
					var b *accBudget
					bb, ok := budgets[row.key()]
					if ok {
						b = &bb
					}
					opt := row.opt
					opt.Chooser = classChooser{Pin: row.pin}
					var calls *callCheck
					if row.pin != kernel.ClassF32 {
						calls = new(callCheck)
						gemm.SetShadow(calls.see)
					}
					got := runEngine(t, g, opt)
					gemm.SetShadow(nil)
					opt.Chooser = classChooser{Pin: row.pin, Portable: true}
					portable := runEngine(t, g, opt)
					f, fails := checkLogits(g, got, portable, calls, b)
					t.Logf("%s %s: prompt %.4g, decode %.4g (budget %+v), vs portable %.3g (%d calls, worst %.3g), greedy %d/%d (%d asserted)",
						row.Preset, row.Class, f.Prompt, f.Decode, bb, f.Portable, f.Calls, f.CallRMS, f.Agree, f.Steps, f.Checked)
					if measured && !ok {
						t.Errorf("no budget for preset %s, class %s on golden data %s: add today's figures above plus a stated margin (≤ 25%%) to accBudgets", row.Preset, row.Class, g.id)
					}
					for _, s := range fails {
						t.Error(s)
					}
					lines = append(lines, accLine{row, f, b})
					mutationCheck(t, g, got, portable, calls, b)
					if b != nil && row.pin == kernel.ClassInt8Act && (row.Preset == "q4" || row.Preset == "q4k") {
						coarseGridCheck(t, g, row, portable, b)
					}
				})
			}
			if measured || update {
				secs = append(secs, accSection{g, lines})
			}
		})
	}
	if len(secs) > 0 && !t.Failed() {
		checkAccuracyDoc(t, secs)
	}
}

// mutationCheck damages a passing run's logits and asserts that checkLogits
// reports a failure for each damage.
//
// For int8act (calls non-nil) the logits are not compared with the
// portable run (tolPortable), so noise on them is not what the check must
// see; the damage is planted in each gemm call's output instead (callCheck)
// and every damaged call must fail the call bound.
func mutationCheck(t *testing.T, g *tinyGolden, got, portable engineOut, calls *callCheck, b *accBudget) {
	t.Helper()
	clone := func() engineOut {
		return engineOut{slices.Clone(got.logits), slices.Clone(got.decode)}
	}
	noise := func(v []float32, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 19))
		for i := range v {
			v[i] *= float32(1 + 0.01*rng.NormFloat64())
		}
	}
	type mutation struct {
		name   string
		damage func(*engineOut)
	}
	muts := []mutation{
		{"NaN in one prompt logit", func(r *engineOut) { r.logits[len(r.logits)/2+7] = float32(math.NaN()) }},
		{"NaN in one decode logit", func(r *engineOut) { r.decode[len(r.decode)-g.V+3] = float32(math.NaN()) }},
		{"+Inf in one prompt logit", func(r *engineOut) { r.logits[3] = float32(math.Inf(1)) }},
	}
	if calls == nil {
		muts = append(muts,
			mutation{"+1% noise on the prompt logits", func(r *engineOut) { noise(r.logits, 1) }},
			mutation{"+1% noise on the decode logits", func(r *engineOut) { noise(r.decode, 2) }})
	} else {
		switch {
		case calls.n == 0:
			t.Logf("no gemm call ran a variant that is not pure Go: the run is the portable one, the call check has nothing to compare")
		case calls.nanPass > 0:
			t.Errorf("mutation: a NaN planted in a call's output passes the call check in %d of %d calls", calls.nanPass, calls.n)
		case calls.noisy == 0 || calls.noisePass > 0:
			t.Errorf("mutation: +1%% noise planted in a call's output passes the call check in %d of %d calls", calls.noisePass, calls.noisy)
		default:
			t.Logf("mutations: a NaN in each of %d calls and +1%% noise on each of %d fail the call check", calls.n, calls.noisy)
		}
	}
	for _, m := range muts {
		r := clone()
		m.damage(&r)
		if _, fails := checkLogits(g, r, portable, calls, b); len(fails) == 0 {
			t.Errorf("mutation %q: the accuracy check still passes", m.name)
		} else {
			t.Logf("mutation %q fails the check: %s", m.name, strings.Join(fails, "; "))
		}
	}
}

// accLine is one row of the accuracy table.
type accLine struct {
	row accRow
	f   accFigures
	b   *accBudget
}

// accSection is the accuracy table of one golden tiny model.
type accSection struct {
	g     *tinyGolden
	lines []accLine
}

// The accuracy table is generated between these markers in docs/accuracy.md
// and in README.md.
const (
	accBegin = "<!-- accuracy:begin (generated by TestAccuracy, model/accuracy_test.go) -->"
	accEnd   = "<!-- accuracy:end -->"
)

var accDocs = []string{"../docs/accuracy.md", "../README.md"}

// cells are a table row's cells: preset, activations, prompt figure and
// budget, decode figure and budget, greedy ids agreeing/steps (asserted),
// and the whole run's relative RMS vs the pure-Go run (accFigures.Portable).
func (l accLine) cells() []string {
	budget := func(v float64) string {
		if l.b == nil {
			return "none"
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	var bp, bd float64
	if l.b != nil {
		bp, bd = l.b.Prompt, l.b.Decode
	}
	return []string{l.row.Preset, l.row.Class,
		strconv.FormatFloat(l.f.Prompt, 'g', 4, 64), budget(bp),
		strconv.FormatFloat(l.f.Decode, 'g', 4, 64), budget(bd),
		fmt.Sprintf("%d/%d (%d)", l.f.Agree, l.f.Steps, l.f.Checked),
		strconv.FormatFloat(l.f.Portable, 'g', 3, 64)}
}

// accBlock renders the sections as the text between the markers.
func accBlock(secs []accSection) string {
	var w strings.Builder
	for _, s := range secs {
		fmt.Fprintf(&w, "\nGolden tiny model `%s` (%d prompt tokens, %d greedy steps, vocabulary %d):\n\n", s.g.id, s.g.T, s.g.n, s.g.V)
		w.WriteString("| preset | activations | prompt logits | budget | decode logits | budget | greedy ids (asserted) | vs pure-Go run |\n")
		w.WriteString("|---|---|--:|--:|--:|--:|--:|--:|\n")
		for _, l := range s.lines {
			w.WriteString("| " + strings.Join(l.cells(), " | ") + " |\n")
		}
	}
	return w.String() + "\n"
}

// checkAccuracyDoc checks that docs/accuracy.md and README.md hold this
// run's accuracy table between the markers, or with KTUNE_UPDATE_ACCURACY=1
// writes it there. Only the figures may differ from this run, each by no
// more than it can between machines: a figure is a distance to the golden
// logits, so by the triangle inequality two runs' figures differ by at most
// their distance to each other, which is at most the sum of their
// distances to the pure-Go run (the table's last column; the pure-Go
// kernels give the same run on every amd64 machine), times 1+figure: for
// the f32 rows, where the check asserts it, 2·tolPortable; for int8act
// rows, whatever an int8 rounding flip moved (tolPortable). Plus half a
// unit of each printed last digit.
func checkAccuracyDoc(t *testing.T, secs []accSection) {
	t.Helper()
	want := accBlock(secs)
	update := os.Getenv("KTUNE_UPDATE_ACCURACY") == "1"
	for _, path := range accDocs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("accuracy table: %v (KTUNE_UPDATE_ACCURACY=1 go test ./model -run TestAccuracy writes it)", err)
			continue
		}
		text := string(raw)
		i, j := strings.Index(text, accBegin), strings.Index(text, accEnd)
		if i < 0 || j < i {
			t.Errorf("%s: no accuracy table between %q and %q", path, accBegin, accEnd)
			continue
		}
		got := text[i+len(accBegin) : j]
		if update {
			if got != want {
				if err := os.WriteFile(path, []byte(text[:i+len(accBegin)]+want+text[j:]), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: accuracy table rewritten", path)
			}
			continue
		}
		if err := accFresh(got, secs); err != nil {
			t.Errorf("%s: the accuracy table is stale: %v; regenerate it with KTUNE_UPDATE_ACCURACY=1 go test ./model -run TestAccuracy. This run's table:\n%s", path, err, want)
		}
	}
}

// accFresh compares a table block with this run's sections (see
// checkAccuracyDoc).
func accFresh(block string, secs []accSection) error {
	rows := map[string][][]string{} // golden id -> table rows
	var id string
	for _, ln := range strings.Split(block, "\n") {
		if rest, ok := strings.CutPrefix(ln, "Golden tiny model `"); ok {
			id, _, _ = strings.Cut(rest, "`")
			continue
		}
		if !strings.HasPrefix(ln, "| ") || strings.HasPrefix(ln, "| preset ") {
			continue
		}
		c := strings.Split(strings.Trim(ln, "| "), " | ")
		rows[id] = append(rows[id], c)
	}
	for _, s := range secs {
		doc := rows[s.g.id]
		if len(doc) != len(s.lines) {
			return fmt.Errorf("golden tiny model %s: %d rows, this run has %d", s.g.id, len(doc), len(s.lines))
		}
		for k, l := range s.lines {
			now, d := l.cells(), doc[k]
			if len(d) != len(now) {
				return fmt.Errorf("golden %s row %d: %d cells, want %d", s.g.id, k, len(d), len(now))
			}
			// the figures of two runs differ by at most their distance,
			// which is at most the sum of their distances to the pure-Go
			// run, the same on every machine (f32: each ≤ tolPortable)
			dist, err := strconv.ParseFloat(d[7], 64)
			if err != nil {
				return fmt.Errorf("%s/%s: %q: %v", l.row.Preset, l.row.Class, d[7], err)
			}
			dist = max(2*tolPortable, dist+halfULP(d[7])+l.f.Portable)
			for c := range now {
				if c == 7 {
					continue
				}
				if c != 2 && c != 4 {
					if d[c] != now[c] {
						return fmt.Errorf("%s/%s: %q, this run %q", l.row.Preset, l.row.Class, d[c], now[c])
					}
					continue
				}
				fig := l.f.Prompt
				if c == 4 {
					fig = l.f.Decode
				}
				v, err := strconv.ParseFloat(d[c], 64)
				if err != nil {
					return fmt.Errorf("%s/%s: %q: %v", l.row.Preset, l.row.Class, d[c], err)
				}
				if slack := dist*(1+fig) + halfULP(d[c]); !(math.Abs(v-fig) <= slack) {
					return fmt.Errorf("%s/%s: %s, this run %.4g", l.row.Preset, l.row.Class, d[c], fig)
				}
			}
		}
	}
	return nil
}

// halfULP is half a unit in the last printed digit of a decimal number
// such as "0.02148" or "9.716e-07".
func halfULP(s string) float64 {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	dec := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		dec = len(mant) - i - 1
	}
	return 0.5 * math.Pow10(exp-dec)
}

// TestAccuracyDocFresh: accFresh accepts the table it renders and rejects a
// figure moved by more than the machine spread, a changed budget, a
// changed greedy count and a missing row.
func TestAccuracyDocFresh(t *testing.T) {
	g := &tinyGolden{id: "0123456789abcdef", T: 12, n: 4, V: 512}
	b := &accBudget{Prompt: 0.585, Decode: 0.614}
	secs := []accSection{{g, []accLine{
		{accRow{Preset: "q8", Class: "f32"}, accFigures{Prompt: 0.02148, Decode: 0.3697, Steps: 4, Checked: 3, Agree: 3, Portable: 1.2e-6}, &accBudget{0.0236, 0.406}},
		{accRow{Preset: "q4-all", Class: "int8act"}, accFigures{Prompt: 0.5324, Decode: 0.5583, Steps: 4, Agree: 1, Portable: 1.6e-7}, b},
		{accRow{Preset: "q3", Class: "int8act"}, accFigures{Prompt: 0.498, Decode: 0.4853, Steps: 4, Agree: 2, Portable: 0.00781}, b},
		{accRow{Preset: "f32", Class: "f32"}, accFigures{Prompt: 9.716e-7, Decode: 8.367e-7, Steps: 4, Checked: 4, Agree: 4, Portable: 1.07e-6}, &accBudget{1.32e-6, 1.37e-6}},
	}}}
	block := accBlock(secs)
	if err := accFresh(block, secs); err != nil {
		t.Fatalf("its own table is stale: %v\n%s", err, block)
	}
	for _, c := range []struct{ name, from, to string }{
		{"a figure 1% off", "| 0.5324 |", "| 0.5377 |"},
		{"the old README's q4-all", "| 0.5324 |", "| 0.41 |"},
		{"a budget", "| 0.0236 |", "| 0.03 |"},
		{"a greedy count", "| 3/4 (3) |", "| 4/4 (3) |"},
		{"a missing row", "| q8 | f32 | 0.02148 | 0.0236 | 0.3697 | 0.406 | 3/4 (3) | 1.2e-06 |\n", ""},
		{"an int8act figure moved by more than its flip distance", "| 0.498 |", "| 0.53 |"},
		{"another golden model", "0123456789abcdef", "fedcba9876543210"},
	} {
		stale := strings.Replace(block, c.from, c.to, 1)
		if stale == block {
			t.Fatalf("%s: %q not in the table:\n%s", c.name, c.from, block)
		}
		if err := accFresh(stale, secs); err == nil {
			t.Errorf("%s: a stale table passes", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	// figures at the f32 rounding level may differ between kernel sets,
	// and an int8act figure by its distance to the pure-Go run
	if err := accFresh(strings.Replace(block, "| 9.716e-07 |", "| 1.056e-06 |", 1), secs); err != nil {
		t.Errorf("another machine's f32 figure: %v", err)
	}
	if err := accFresh(strings.Replace(block, "| 0.498 |", "| 0.505 |", 1), secs); err != nil {
		t.Errorf("another machine's int8act figure, within the flip distance: %v", err)
	}
}
