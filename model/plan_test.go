package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model/kfile"
)

// bruteFit is the least cost of one item per group within room (Inf when
// nothing fits), by trying every combination.
func bruteFit(groups [][]fitItem, room int64) float64 {
	best := math.Inf(1)
	var rec func(g int, bytes int64, cost float64)
	rec = func(g int, bytes int64, cost float64) {
		if bytes > room {
			return
		}
		if g == len(groups) {
			best = min(best, cost)
			return
		}
		for _, it := range groups[g] {
			rec(g+1, bytes+it.bytes, cost+it.cost)
		}
	}
	rec(0, 0, 0)
	return best
}

func fitCost(groups [][]fitItem, picks []int) (int64, float64) {
	var b int64
	var c float64
	for g, p := range picks {
		b += groups[g][p].bytes
		c += groups[g][p].cost
	}
	return b, c
}

// TestSolveFitBruteForce: on random small knapsacks the solver's picks fit
// and cost exactly what the best combination costs; a room below the
// smallest combination is refused.
func TestSolveFitBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		ng, nc := 1+r.IntN(6), 1+r.IntN(5)
		groups := make([][]fitItem, ng)
		var least, most int64
		for g := range groups {
			lo, hi := int64(math.MaxInt64), int64(0)
			for range nc {
				it := fitItem{bytes: 1 + r.Int64N(1000), cost: r.Float64() * 100}
				groups[g] = append(groups[g], it)
				lo, hi = min(lo, it.bytes), max(hi, it.bytes)
			}
			least, most = least+lo, most+hi
		}
		room := least - 5 + r.Int64N(most-least+10)
		picks, ok := solveFit(groups, room)
		want := bruteFit(groups, room)
		if math.IsInf(want, 1) {
			if ok {
				t.Fatalf("trial %d: room %d < least %d accepted", trial, room, least)
			}
			continue
		}
		if !ok {
			t.Fatalf("trial %d: room %d (least %d) refused", trial, room, least)
		}
		b, c := fitCost(groups, picks)
		if b > room || math.Abs(c-want) > 1e-9*max(1, want) {
			t.Fatalf("trial %d: picks %v: %d bytes of %d, cost %g; brute force %g", trial, picks, b, room, c, want)
		}
	}
}

// TestSolveFitRounded: with a coarse unit (the 48B model's case) the picks
// still fit and stay close to the optimum.
func TestSolveFitRounded(t *testing.T) {
	defer func(u int64) { fitUnits = u }(fitUnits)
	fitUnits = 50
	r := rand.New(rand.NewPCG(3, 4))
	var worst float64
	for trial := range 200 {
		groups := make([][]fitItem, 5)
		var least, most int64
		for g := range groups {
			lo, hi := int64(math.MaxInt64), int64(0)
			for range 4 {
				it := fitItem{bytes: 100 + r.Int64N(10000), cost: r.Float64() * 100}
				groups[g] = append(groups[g], it)
				lo, hi = min(lo, it.bytes), max(hi, it.bytes)
			}
			least, most = least+lo, most+hi
		}
		room := least + r.Int64N(most-least+1)
		picks, ok := solveFit(groups, room)
		if !ok {
			t.Fatalf("trial %d: refused", trial)
		}
		b, c := fitCost(groups, picks)
		want := bruteFit(groups, room)
		if b > room || c < want-1e-9 {
			t.Fatalf("trial %d: %d bytes of %d, cost %g below the optimum %g", trial, b, room, c, want)
		}
		worst = max(worst, (c-want)/max(want, 1e-9))
	}
	t.Logf("worst excess over the optimum at 50 units: %.2f%%", 100*worst)
}

// toyConfig is a small Kimi Linear config: 4 layers (3 KDA, 1 MLA), a dense
// first layer and 3 MoE layers of 8 experts.
func toyConfig() *arch.Config {
	c := arch.Kimi48B()
	c.Source = "toy"
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.IntermediateSize = 256, 64, 4, 96
	c.NumAttentionHeads, c.NumKeyValueHeads, c.KVLoraRank, c.QKNopeHeadDim, c.QKRopeHeadDim, c.VHeadDim = 2, 2, 32, 16, 16, 16
	c.LinearAttn = arch.LinearAttnConfig{NumHeads: 2, HeadDim: 32, ShortConvKernelSize: 4, KDALayers: []int{1, 2, 3}, FullAttnLayers: []int{4}}
	c.NumExperts, c.NumExpertsPerToken, c.MoEIntermediateSize = 8, 2, 32
	c.BOSTokenID, c.EOSTokenID, c.PadTokenID, c.ModelMaxLength = 1, 2, 255, 4096
	return c
}

// brutePlan is the least objective over every combination of p's groups'
// choices within the room PlanFit had.
func brutePlan(p *FitPlan) float64 {
	groups := make([][]fitItem, len(p.Groups))
	for i, g := range p.Groups {
		for _, c := range g.Choices {
			groups[i] = append(groups[i], fitItem{c.Bytes, c.Cost})
		}
	}
	return bruteFit(groups, p.Budget-p.Reserve-(p.Resident-p.Weights()))
}

// TestPlanFitToyBruteForce: on the toy config the plan is the optimum of
// brute force at budgets from the smallest to beyond the largest, fits,
// and its resident bytes are EstimateMemory's.
func TestPlanFitToyBruteForce(t *testing.T) {
	defer func(u int64) { fitUnits = u }(fitUnits)
	fitUnits = 1 << 22 // a unit of 1 byte below 4 MiB of room: exact
	cfg := toyConfig()
	opt := FitOptions{Reserve: -1, Context: 256}
	small, err := PlanFit(cfg, 1<<40, FitOptions{Reserve: -1, Context: 256, Formats: []kernel.DType{kernel.Q2}}) // the smallest format
	if err != nil {
		t.Fatal(err)
	}
	big, err := PlanFit(cfg, 1<<40, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(big.Groups) != 8 {
		t.Fatalf("%d groups, want 8 (lm_head, attention, gates, dense, shared, 3 × experts)", len(big.Groups))
	}
	lo, hi := small.Resident, big.Resident
	if hi >= fitUnits {
		t.Fatalf("the toy's largest plan is %d bytes: not exact at %d units", hi, fitUnits)
	}
	if _, err := PlanFit(cfg, lo-1, opt); !errors.As(err, new(*FitError)) {
		t.Fatalf("budget 1 byte under the smallest plan: %v, want a *FitError", err)
	}
	prev := math.Inf(1)
	for i := 0; i <= 12; i++ {
		budget := lo + (hi-lo)*int64(i)/12
		p, err := PlanFit(cfg, budget, opt)
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		want := brutePlan(p)
		if math.Abs(p.Error-want) > 1e-9*max(want, 1e-12) {
			t.Errorf("budget %d: plan error %g, brute-force optimum %g", budget, p.Error, want)
		}
		if p.Resident > budget {
			t.Errorf("budget %d: resident %d", budget, p.Resident)
		}
		if p.Error > prev {
			t.Errorf("budget %d: error %g above the smaller budget's %g", budget, p.Error, prev)
		}
		prev = p.Error
		mem, err := EstimateMemory(cfg, p.Opt, 2)
		if err != nil || mem.Budgeted != p.Resident {
			t.Errorf("budget %d: EstimateMemory %d (%v), plan resident %d", budget, mem.Budgeted, err, p.Resident)
		}
	}
	if big.Error != 0 || big.RMS() != 0 {
		t.Errorf("unbounded budget: error %g, want 0 (bf16 everywhere)", big.Error)
	}
	for _, g := range big.Groups {
		if g.Chosen().DType != kernel.BF16 {
			t.Errorf("unbounded budget, bf16 source: %s is %s, want bf16 (f32 is no better)", g.Name, g.Chosen().DType)
		}
	}
}

// TestPlanFit48B: the 48B model at 32K context does not fit 16 GiB (and
// says what does), fits 24, 32 and 64 GiB with less error as the budget
// grows, and spends bits on the head, attention and edge layers first.
func TestPlanFit48B(t *testing.T) {
	cfg := arch.Kimi48B()
	var fe *FitError
	_, err := PlanFit(cfg, 16<<30, FitOptions{})
	if !errors.As(err, &fe) {
		t.Fatalf("16 GiB: %v, want a *FitError", err)
	}
	t.Logf("16 GiB: %v", err)
	if _, err := PlanFit(cfg, fe.MinBudget, FitOptions{}); err != nil {
		t.Errorf("the minimum budget %d it names: %v", fe.MinBudget, err)
	}
	if _, err := PlanFit(cfg, fe.MinBudget-1, FitOptions{}); err == nil {
		t.Errorf("a byte under the minimum budget %d fits", fe.MinBudget)
	}
	prev := math.Inf(1)
	for _, gb := range []int64{24, 32, 48, 64} {
		p, err := PlanFit(cfg, gb<<30, FitOptions{})
		if err != nil {
			t.Fatalf("%d GiB: %v", gb, err)
		}
		if p.Resident > p.Budget-p.Reserve || p.Reserve != min(3<<30, p.Budget*15/100) {
			t.Errorf("%d GiB: resident %d, reserve %d", gb, p.Resident, p.Reserve)
		}
		if !(p.Error < prev) {
			t.Errorf("%d GiB: error %g not below %g", gb, p.Error, prev)
		}
		prev = p.Error
		mem, err := EstimateMemory(cfg, p.Opt, 2)
		if err != nil || mem.Budgeted != p.Resident {
			t.Errorf("%d GiB: EstimateMemory %d (%v), plan %d", gb, mem.Budgeted, err, p.Resident)
		}
		// no group is less accurate than a middle layer's experts where it matters more
		mid := p.Groups[slices.IndexFunc(p.Groups, func(g FitGroup) bool { return g.Name == "experts.13" })].Chosen().RelErr
		for _, g := range p.Groups {
			if g.Importance >= 2*mid && g.Chosen().RelErr > mid {
				t.Errorf("%d GiB: %s (importance %g) is %s, less accurate than experts.13's", gb, g.Name, g.Importance, g.Chosen().DType)
			}
		}
		t.Logf("%d GiB: resident %.2f GiB, error %.4g, rms %.4f", gb, float64(p.Resident)/(1<<30), p.Error, p.RMS())
	}
}

// TestPlanFitConvertLoad converts the golden tiny model under plans whose
// routed experts mix formats and checks that the file records them per
// tensor, loads and runs, and that the loader's heap is EstimateMemory's.
func TestPlanFitConvertLoad(t *testing.T) {
	dir := tinyDir(t)
	cfg, err := arch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	opt := FitOptions{Reserve: -1, Context: 64, Formats: []kernel.DType{kernel.BF16, kernel.Q8, kernel.Q4, kernel.Q3}}
	small, err := PlanFit(cfg, 1<<40, FitOptions{Reserve: -1, Context: 64, Formats: []kernel.DType{kernel.Q3}})
	if err != nil {
		t.Fatal(err)
	}
	big, err := PlanFit(cfg, 1<<40, opt)
	if err != nil {
		t.Fatal(err)
	}
	var p *FitPlan
	for i := 1; i < 40 && p == nil; i++ {
		q, err := PlanFit(cfg, small.Resident+(big.Resident-small.Resident)*int64(i)/40, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Opt.ExpertDTypeByLayer) > 0 && q.Opt.SharedDType != q.Opt.FFNDType {
			p = q
		}
	}
	if p == nil {
		t.Fatal("no budget gives mixed expert formats and a shared expert apart from the dense MLP")
	}
	t.Logf("plan: %+v", p.Opt)
	out := filepath.Join(t.TempDir(), "fit.kt")
	if err := ConvertFile(dir, out, p.Opt, map[string]string{"preset": "fit"}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := kfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := f.Header.Table.Meta; m[MetaExpertDType] != string(AsStored) || m[MetaFFNDType] != string(AsStored) {
		t.Errorf("meta %v: want experts and ffn %q", m, AsStored)
	}
	for _, spec := range mustPlan(t, cfg, p.Opt) {
		if spec.Kind != Packed {
			continue
		}
		tt, ok := f.Header.Lookup(spec.Name, kfile.LayoutPacked)
		if !ok || tt.DType != string(spec.DType) {
			t.Errorf("%s: stored %v, plan %s", spec.Name, tt, spec.DType)
		}
	}
	f.Close()
	m, err := LoadFile(out, LoadOptions{Runtime: Runtime{Threads: 2}, Memory: Memory{AvailableMemory: -1, CacheDType: p.Opt.CacheDType}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	logits, err := m.Prefill(m.NewState(0), []int32{1, 5, 9, 300})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite logits")
		}
	}
	// converted on the fly with the same options: the heap is the estimate
	lo := p.Opt
	lo.AvailableMemory, lo.Threads = -1, 2
	mc, err := Load(dir, lo)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	est, _ := EstimateMemory(cfg, lo, 2)
	if mc.Memory().WeightsHeap != est.WeightsHeap {
		t.Errorf("loaded heap %d, estimate %d", mc.Memory().WeightsHeap, est.WeightsHeap)
	}
	l2, err := mc.Prefill(mc.NewState(0), []int32{1, 5, 9, 300})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l2 {
		if math.Abs(float64(l2[i]-logits[i])) > 1e-3*(1+math.Abs(float64(logits[i]))) {
			t.Fatalf("logit %d: file %g, checkpoint %g", i, logits[i], l2[i])
		}
	}
}

func mustPlan(t *testing.T, cfg *arch.Config, opt LoadOptions) []TensorSpec {
	t.Helper()
	specs, err := TensorSpecs(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// TestExpertDTypeByLayerChecked: a layer without routed experts, or a
// format the loader does not know, is refused.
func TestExpertDTypeByLayerChecked(t *testing.T) {
	cfg := toyConfig()
	for _, o := range []LoadOptions{
		{Formats: Formats{ExpertDTypeByLayer: map[int]kernel.DType{0: kernel.Q4}}}, // layer 0 is dense
		{Formats: Formats{ExpertDTypeByLayer: map[int]kernel.DType{9: kernel.Q4}}},
		{Formats: Formats{ExpertDTypeByLayer: map[int]kernel.DType{1: "q7"}}},
		{Formats: Formats{SharedDType: "q7"}},
	} {
		if _, err := EstimateMemory(cfg, o, 2); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := EstimateMemory(cfg, LoadOptions{Formats: Formats{ExpertDTypeByLayer: map[int]kernel.DType{1: kernel.Q4}, SharedDType: kernel.Q8}}, 2); err != nil {
		t.Error(err)
	}
}

// TestPlanFormats evaluates presets as plans: one format everywhere has
// that format's error as its RMS, and the resident bytes are
// EstimateMemory's; a plan at a preset's size is at most its error.
func TestPlanFormats(t *testing.T) {
	cfg := arch.Kimi48B()
	all4, err := PlanFormats(cfg, LoadOptions{Formats: Formats{DType: kernel.Q4, GateDType: kernel.Q4}}, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(all4.RMS()-0.0859) > 1e-12 {
		t.Errorf("every group q4: RMS %g, want 0.0859", all4.RMS())
	}
	q4 := LoadOptions{Formats: Formats{DType: kernel.Q8, ExpertDType: kernel.Q4}}
	p, err := PlanFormats(cfg, q4, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q4.MaxTokens, q4.CacheDType = 32768, kernel.BF16
	mem, _ := EstimateMemory(cfg, q4, 2)
	if p.Resident != mem.Budgeted {
		t.Errorf("q4 preset: resident %d, EstimateMemory %d", p.Resident, mem.Budgeted)
	}
	fit, err := PlanFit(cfg, p.MinBudget(0), FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Error > p.Error {
		t.Errorf("plan at the q4 preset's budget: error %g above the preset's %g", fit.Error, p.Error)
	}
	t.Logf("q4 preset: %.2f GiB, rms %.4f; a plan in its budget %.2f GiB: rms %.4f", float64(p.Resident)/(1<<30), p.RMS(),
		float64(p.MinBudget(0))/(1<<30), fit.RMS())
	if _, err := PlanFormats(cfg, LoadOptions{Formats: Formats{DType: AsStored}}, FitOptions{}); err == nil {
		t.Error("stored formats accepted")
	}
}

// TestMinBudget: the least budget whose default reserve leaves need bytes,
// exact where the reserve is 15% (one byte less does not leave need), and
// neither overflowing nor looping for needs near the int64 limit (a plan of
// 10⁸ sequences once spun here with a negative budget).
func TestMinBudget(t *testing.T) {
	for _, need := range []int64{1, 1000, 1 << 30, 17<<30 - 1, 17 << 30, 17<<30 + 1, 40 << 30, 1 << 50, 1<<61 + 12345, math.MaxInt64/100 + 1, math.MaxInt64 - 3<<30, math.MaxInt64} {
		b := minBudget(need, 0)
		if b < need || b-DefaultReserve(b) < need && b != math.MaxInt64 {
			t.Errorf("minBudget(%d) = %d leaves %d", need, b, b-DefaultReserve(b))
		}
		if b != math.MaxInt64 && (b-1)-DefaultReserve(b-1) >= need {
			t.Errorf("minBudget(%d) = %d, but %d leaves enough", need, b, b-1)
		}
	}
	if b := minBudget(math.MaxInt64-5, 1<<30); b != math.MaxInt64 {
		t.Errorf("minBudget near the limit with a reserve = %d", b)
	}
}
