// Memory-budget planner: the weight format of each tensor group that fits
// a machine's memory with the least expected error (docs/plan.md).

package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/quant"
)

// FitFormat is a weight format the planner may choose, with its measured
// error.
type FitFormat struct {
	DType kernel.DType
	// RelErr is the relative RMS weight error ‖Ŵ−W‖₂/‖W‖₂ of packing f32
	// Gaussian rows (256×4096) with max-abs scales, RelErrSearch with the
	// scale search of LoadOptions.QuantSearch (docs/quant-error.md; bf16's
	// is its rounding, f32's 0).
	RelErr, RelErrSearch float64
}

// FitFormats is the planner's format table. A format the loader does not
// accept (LoadOptions' dtype check) is left out of plans, so a format added
// here joins them once the engine serves it. q4 with a min is not listed:
// conversion from a checkpoint packs q4 without one.
var FitFormats = []FitFormat{
	{kernel.F32, 0, 0},
	{kernel.BF16, 0.00166, 0.00166},
	{kernel.Q8, 0.0053, 0.0048},
	{kernel.Q6K, 0.0192, 0.0169},
	{kernel.Q6, 0.0213, 0.0196},
	{kernel.Q5K, 0.0381, 0.0340},
	{kernel.Q5, 0.0427, 0.0400},
	{kernel.Q4K, 0.0784, 0.0695},
	{kernel.Q4, 0.0859, 0.0808},
	{kernel.Q3K, 0.1678, 0.1446},
	{kernel.Q3, 0.1745, 0.163},
	{kernel.Q2, 0.3217, 0.3006},
}

// FitClass is a kind of tensor group the planner gives one format.
type FitClass string

// The groups' classes. The embedding table takes no format (it stays in
// its checkpoint dtype); the MoE router, norms, conv taps, biases and MLA's
// kv_b_proj are always f32 (FitPlan.Fixed).
const (
	FitHead      FitClass = "lm_head"
	FitAttention FitClass = "attention" // KDA q/k/v/o, MLA q/kv_a/o, all layers (LoadOptions.AttnDType)
	FitGates     FitClass = "gates"     // KDA f_a/f_b, g_a/g_b, b_proj (GateDType)
	FitDense     FitClass = "dense"     // the dense MLPs (FFNDType)
	FitShared    FitClass = "shared"    // the shared experts (SharedDType)
	FitExperts   FitClass = "experts"   // one MoE layer's routed experts (ExpertDTypeByLayer)
)

// FitSensitivity weighs each class's squared error in the planner's
// objective, beyond how many of its weights a token reads: the head
// (its error lands on the logits directly) and the attention and gate
// projections (their error enters the recurrent KDA state and every later
// token) count double.
var FitSensitivity = map[FitClass]float64{
	FitHead: 2, FitAttention: 2, FitGates: 2, FitDense: 1, FitShared: 1, FitExperts: 1,
}

// FitEdgeLayers and FitEdgeWeight: the dense MLP and routed experts of the
// first and of the last FitEdgeLayers layers weigh FitEdgeWeight times more
// (the first layers' errors pass through every later layer; the last ones
// feed the head with nothing after them to wash them out).
const (
	FitEdgeLayers = 2
	FitEdgeWeight = 2.0
)

// FitOptions are PlanFit's assumptions about how the model will run.
type FitOptions struct {
	// Context is the tokens per sequence the MLA cache is budgeted for
	// (default 32768, capped at model_max_length).
	Context int
	// Seqs is the sequences run at once (default 1).
	Seqs int
	// CacheDType is the MLA cache format (default BF16).
	CacheDType kernel.DType
	// Reserve is memory left to the OS and other programs (0:
	// DefaultReserve(budget); negative: none).
	Reserve int64
	// Search plans with the searched scales' errors (convert --search).
	Search bool
	// SourceDType is the checkpoint's weight dtype (default BF16: bf16 is
	// then exact and f32 no better, so f32 is never chosen).
	SourceDType kernel.DType
	// EmbedBytes is the size of one embedding value as stored (default 2).
	EmbedBytes int
	// CountEmbedding counts the embedding table as resident. By default it
	// is not: it is read in place, one row per token, so only the rows of
	// the tokens in use are ever paged in (as EstimateMemory counts it).
	CountEmbedding bool
	// Formats restricts the candidates (nil: every loadable FitFormats).
	Formats []kernel.DType
}

// DefaultReserve is the memory a plan leaves to the OS by default: 15% of
// the budget, at most 3 GiB.
func DefaultReserve(budget int64) int64 { return min(3<<30, budget/100*15) } // (budget·15 overflows for exabytes)

// FitChoice is one candidate format of a group.
type FitChoice struct {
	DType  kernel.DType
	Bytes  int64   // the group's packed bytes in DType
	RelErr float64 // the format's relative RMS weight error (FitFormats)
	Cost   float64 // Importance·Params·RelErr²: the group's term of the objective
}

// FitGroup is a set of matrices the plan gives one format.
type FitGroup struct {
	Name  string // "lm_head", "attention", "gates", "dense", "shared" or "experts.L"
	Class FitClass
	Layer int // the routed experts' layer (0-based); −1 for the other classes
	// Params is the group's weights; Importance weighs their squared error:
	// FitSensitivity × FitEdgeWeight (edge layers) × the share of the
	// group's weights a token reads (top-k/experts for routed experts, else 1).
	Params     int64
	Importance float64
	Choices    []FitChoice // the candidates, most accurate first (dominated ones dropped)
	Pick       int         // the chosen index into Choices
}

// Chosen is the group's chosen format.
func (g *FitGroup) Chosen() FitChoice { return g.Choices[g.Pick] }

// FitPlan is a memory-budget plan: a format per group, and what the model
// then keeps resident.
type FitPlan struct {
	Budget, Reserve int64
	Context, Seqs   int
	CacheDType      kernel.DType
	Groups          []FitGroup
	// Fixed are the weights that take no format choice: f32 norms, conv
	// taps, A_log, dt_bias, router and score bias, MLA's kv_b_proj.
	Fixed int64
	// Embedding is the embedding table, kept in its checkpoint dtype and
	// read in place (mapped); in Resident only with CountEmbedding.
	Embedding      int64
	CountEmbedding bool
	// KDAState and MLACache are the states of Seqs sequences of Context
	// tokens.
	KDAState, MLACache int64
	// Resident is every group's bytes + Fixed (+ Embedding) + KDAState +
	// MLACache: what the model keeps in memory, at most Budget − Reserve.
	Resident int64
	// Smallest is Resident with every group in its smallest format.
	Smallest int64
	// Error is the objective, Σ Importance·Params·RelErr² over the groups.
	Error float64
	// Opt holds the plan's formats (and the cache budget) as LoadOptions:
	// ConvertFile with it writes the plan; EstimateMemory(cfg, Opt, …)
	// .Budgeted is Resident less a counted embedding.
	Opt LoadOptions

	search bool // FitOptions.Search
}

// Weights is the bytes of the groups.
func (p *FitPlan) Weights() int64 {
	var n int64
	for i := range p.Groups {
		n += p.Groups[i].Chosen().Bytes
	}
	return n
}

// RMS is the plan's effective relative weight error: the square root of
// Error over Σ Importance·Params, so that a plan of one format everywhere
// has that format's RelErr.
func (p *FitPlan) RMS() float64 {
	var w float64
	for i := range p.Groups {
		w += p.Groups[i].Importance * float64(p.Groups[i].Params)
	}
	if w == 0 {
		return 0
	}
	return math.Sqrt(p.Error / w)
}

// FitError is PlanFit's refusal of a budget that even the smallest formats
// do not fit.
type FitError struct {
	Budget, Reserve int64
	Smallest        int64        // the smallest plan's resident bytes
	SmallestDType   kernel.DType // the smallest format
	MinBudget       int64        // the least budget that fits it (with the reserve rule)
	Plan            *FitPlan     // the smallest plan (its Resident is Smallest)
}

func (e *FitError) Error() string {
	p := e.Plan
	return fmt.Sprintf("model: does not fit in %s: even every matrix %s needs %s resident (weights %s, KDA state %s, MLA cache %s for %d × %d tokens) + %s reserved for the OS; give at least %s, a shorter context or fewer sequences",
		gib(e.Budget), e.SmallestDType, gib(e.Smallest), gib(e.Smallest-p.KDAState-p.MLACache), gib(p.KDAState), gib(p.MLACache),
		p.Seqs, p.Context, gib(e.Reserve), gib(e.MinBudget))
}

// gib formats a size in GiB, MiB or KiB.
func gib(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return mib(n)
	}
	return kib(n)
}

// FitFormatsFor returns the FitFormats the loader accepts, restricted to
// only when it is not empty.
func FitFormatsFor(only []kernel.DType) []FitFormat {
	var out []FitFormat
	for _, f := range FitFormats {
		p := LoadOptions{Formats: Formats{DType: f.DType}}
		if p.defaults(&arch.Config{}) != nil || len(only) > 0 && !slices.Contains(only, f.DType) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// fitClass is the group class of a linear named as in arch.Shapes.Linears
// ("" for the f32 ones: the router, MLA's kv_b_proj).
func fitClass(name string) FitClass {
	switch name {
	case "kda.q_proj", "kda.k_proj", "kda.v_proj", "kda.o_proj", "mla.q_proj", "mla.kv_a_proj_with_mqa", "mla.o_proj":
		return FitAttention
	case "kda.f_a_proj", "kda.f_b_proj", "kda.g_a_proj", "kda.g_b_proj", "kda.b_proj":
		return FitGates
	case "dense.gate_proj", "dense.up_proj", "dense.down_proj":
		return FitDense
	case "moe.shared.gate_proj", "moe.shared.up_proj", "moe.shared.down_proj":
		return FitShared
	case "moe.expert.w1", "moe.expert.w2", "moe.expert.w3":
		return FitExperts
	case "lm_head":
		return FitHead
	}
	return ""
}

// PlanFit chooses a format per tensor group of cfg — lm_head, attention,
// KDA gates, dense MLP, shared experts, and the routed experts of each MoE
// layer — so that the resident weights, the KDA state and the MLA cache of
// opt.Seqs sequences of opt.Context tokens, and the reserve fit in budget
// bytes, with the least Σ Importance·Params·RelErr² (see FitGroup). It
// solves the choice as a knapsack by dynamic programming over the bytes
// (in units of at most 1/131072 of the room; a pass over the rounding's
// slack then upgrades what still fits), which is exact when the room is
// under 131072 bytes and within a unit per group of it otherwise. A budget
// even the smallest formats exceed is a *FitError.
func PlanFit(cfg *arch.Config, budget int64, opt FitOptions) (*FitPlan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if budget <= 0 {
		return nil, fmt.Errorf("model: memory budget %d: want a positive size", budget)
	}
	opt = opt.withDefaults(cfg)
	reserve := opt.Reserve
	switch {
	case reserve == 0:
		reserve = DefaultReserve(budget)
	case reserve < 0:
		reserve = 0
	}
	formats := FitFormatsFor(opt.Formats)
	if len(formats) == 0 {
		return nil, fmt.Errorf("model: no weight format to plan with (asked for %v)", opt.Formats)
	}
	groups := fitGroups(cfg, formats, opt, nil)

	p := &FitPlan{Budget: budget, Reserve: reserve, Context: opt.Context, Seqs: opt.Seqs, CacheDType: opt.CacheDType,
		Groups: groups, CountEmbedding: opt.CountEmbedding, search: opt.Search}
	for i := range groups {
		groups[i].Pick = len(groups[i].Choices) - 1
	}
	if err := p.setBase(cfg, opt); err != nil {
		return nil, err
	}
	p.Smallest = p.Resident
	base := p.Resident - p.Weights()

	room := budget - reserve - base // for the groups
	items := make([][]fitItem, len(groups))
	for i, g := range groups {
		for _, c := range g.Choices {
			items[i] = append(items[i], fitItem{c.Bytes, c.Cost})
		}
	}
	picks, ok := solveFit(items, room)
	if !ok {
		p.finish(cfg, base)
		smallest := formats[len(formats)-1].DType
		for _, f := range formats {
			if quant.BytesPerWeight(f.DType, false) < quant.BytesPerWeight(smallest, false) {
				smallest = f.DType
			}
		}
		return nil, &FitError{Budget: budget, Reserve: reserve, Smallest: p.Smallest, SmallestDType: smallest,
			MinBudget: minBudget(p.Smallest, opt.Reserve), Plan: p}
	}
	for i := range groups {
		groups[i].Pick = picks[i]
	}
	sortTies(groups)
	p.finish(cfg, base)
	return p, nil
}

// sortTies gives, among routed-expert groups of equal importance (equal
// shapes, so interchangeable), the more accurate formats to the earlier
// layers: the same cost and bytes, in a plan that reads in order.
func sortTies(groups []FitGroup) {
	by := map[float64][]int{}
	for i := range groups {
		if groups[i].Class == FitExperts {
			by[groups[i].Importance] = append(by[groups[i].Importance], i)
		}
	}
	for _, idx := range by {
		picks := make([]int, len(idx))
		for j, i := range idx {
			picks[j] = groups[i].Pick
		}
		slices.Sort(picks)
		for j, i := range idx {
			groups[i].Pick = picks[j]
		}
	}
}

// withDefaults fills in opt's defaults for cfg (the reserve's rule stays).
func (opt FitOptions) withDefaults(cfg *arch.Config) FitOptions {
	if opt.Context <= 0 {
		opt.Context = 32768
		if cfg.ModelMaxLength > 0 {
			opt.Context = min(opt.Context, cfg.ModelMaxLength)
		}
	}
	if opt.Seqs <= 0 {
		opt.Seqs = 1
	}
	if opt.CacheDType == "" {
		opt.CacheDType = kernel.BF16
	}
	if opt.SourceDType == "" {
		opt.SourceDType = kernel.BF16
	}
	if opt.EmbedBytes <= 0 {
		opt.EmbedBytes = 2
	}
	return opt
}

// setBase sets the embedding, the fixed f32 weights, the states (from
// EstimateMemory under the current picks) and finishes the plan.
func (p *FitPlan) setBase(cfg *arch.Config, opt FitOptions) error {
	s := cfg.Shapes()
	p.Embedding = int64(s.Vocab) * int64(s.Hidden) * int64(opt.EmbedBytes)
	mem, err := EstimateMemory(cfg, p.options(cfg), 2)
	if err != nil {
		return err
	}
	p.KDAState = int64(p.Seqs) * mem.KDAStatePerSeq
	p.MLACache = int64(p.Seqs) * int64(p.Context) * mem.MLACachePerToken
	p.Fixed = mem.Budgeted - p.KDAState - p.MLACache - p.Weights()
	base := p.Fixed + p.KDAState + p.MLACache
	if p.CountEmbedding {
		base += p.Embedding
	}
	p.finish(cfg, base)
	return nil
}

// minBudget is the least budget whose reserve (the rule of FitOptions.Reserve)
// leaves need bytes.
func minBudget(need, reserve int64) int64 {
	switch {
	case reserve > 0:
		return need + min(reserve, math.MaxInt64-need)
	case reserve < 0:
		return need
	}
	// budget − min(3 GiB, 15% budget) ≥ need
	if need > math.MaxInt64-3<<30 {
		return math.MaxInt64
	}
	if need > math.MaxInt64/100 { // need·100 would overflow; 15% is far past 3 GiB
		return need + 3<<30
	}
	if b := (need*100 + 84) / 85; DefaultReserve(b) < 3<<30 {
		for b-DefaultReserve(b) < need {
			b++
		}
		// the reserve's rounding down can leave room a few bytes lower
		for (b-1)-DefaultReserve(b-1) >= need {
			b--
		}
		return b
	}
	return need + 3<<30
}

// finish sets Opt, Resident and Error from the picks.
func (p *FitPlan) finish(cfg *arch.Config, base int64) {
	p.Opt = p.options(cfg)
	p.Resident = base + p.Weights()
	p.Error = 0
	for i := range p.Groups {
		p.Error += p.Groups[i].Chosen().Cost
	}
}

// options are the LoadOptions of the current picks: each class's format,
// the routed experts' most common one as ExpertDType and the others in
// ExpertDTypeByLayer.
func (p *FitPlan) options(cfg *arch.Config) LoadOptions {
	o := LoadOptions{Conversion: Conversion{QuantSearch: p.search}, Memory: Memory{CacheDType: p.CacheDType, MaxSeqs: p.Seqs, MaxTokens: p.Context}}
	count := map[kernel.DType]int{}
	for i := range p.Groups {
		g := &p.Groups[i]
		dt := g.Chosen().DType
		switch g.Class {
		case FitHead:
			o.HeadDType = dt
		case FitAttention:
			o.AttnDType = dt
		case FitGates:
			o.GateDType = dt
		case FitDense:
			o.FFNDType = dt
		case FitShared:
			o.SharedDType = dt
		case FitExperts:
			count[dt]++
		}
	}
	for _, f := range FitFormats { // the most common, ties to the more accurate
		if count[f.DType] > count[o.ExpertDType] {
			o.ExpertDType = f.DType
		}
	}
	for i := range p.Groups {
		if g := &p.Groups[i]; g.Class == FitExperts && g.Chosen().DType != o.ExpertDType {
			if o.ExpertDTypeByLayer == nil {
				o.ExpertDTypeByLayer = map[int]kernel.DType{}
			}
			o.ExpertDTypeByLayer[g.Layer] = g.Chosen().DType
		}
	}
	// the base format: attention's (a model without one keeps f32)
	o.DType = o.AttnDType
	if o.DType == "" {
		o.DType = kernel.F32
	}
	if o.FFNDType == "" { // no dense layer: the shared experts' format names the group
		o.FFNDType = o.SharedDType
	}
	return o
}

// PlanFormats evaluates fixed formats — a preset's, o's — as a plan of
// PlanFit's groups, with no budget: each group's one choice is the format
// o gives it (Budget 0; MinBudget gives the least budget that fits it
// with opt's reserve rule). A format FitFormats does not list is an error.
func PlanFormats(cfg *arch.Config, o LoadOptions, opt FitOptions) (*FitPlan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := o.defaults(cfg); err != nil {
		return nil, err
	}
	opt = opt.withDefaults(cfg)
	of := func(c FitClass, layer int) kernel.DType {
		switch c {
		case FitHead:
			return o.HeadDType
		case FitAttention:
			return o.AttnDType
		case FitGates:
			return o.GateDType
		case FitDense:
			return o.FFNDType
		case FitShared:
			return o.SharedDType
		}
		return o.expertDType(layer)
	}
	groups := fitGroups(cfg, FitFormats, opt, of)
	for _, g := range groups {
		if len(g.Choices) != 1 {
			return nil, fmt.Errorf("model: %s: format %s is not in the planner's table", g.Name, of(g.Class, g.Layer))
		}
	}
	p := &FitPlan{Context: opt.Context, Seqs: opt.Seqs, CacheDType: opt.CacheDType, Groups: groups,
		CountEmbedding: opt.CountEmbedding, search: opt.Search, Reserve: opt.Reserve}
	if err := p.setBase(cfg, opt); err != nil {
		return nil, err
	}
	return p, nil
}

// MinBudget is the least budget that holds p's Resident with the reserve
// rule of FitOptions.Reserve (reserve: that option).
func (p *FitPlan) MinBudget(reserve int64) int64 { return minBudget(p.Resident, reserve) }

// fitGroups lists cfg's groups with their candidate formats; with only
// set, each group's one candidate is the format only gives it.
func fitGroups(cfg *arch.Config, formats []FitFormat, opt FitOptions, only func(FitClass, int) kernel.DType) []FitGroup {
	s := cfg.Shapes()
	edge := func(l int) float64 {
		if l < FitEdgeLayers || l >= s.Layers-FitEdgeLayers {
			return FitEdgeWeight
		}
		return 1
	}
	type part struct {
		n, k  int
		count int64
	}
	var order []FitClass
	parts := map[FitClass][]part{}
	for _, l := range s.Linears() {
		c := fitClass(l.Name)
		if c == "" {
			continue
		}
		stored := int64(l.Stored)
		if c == FitHead && s.TiedEmbeddings {
			stored = 1 // converted from the embedding table
		}
		if c == FitExperts {
			stored = int64(s.Experts) // per layer
		}
		if _, ok := parts[c]; !ok {
			order = append(order, c)
		}
		parts[c] = append(parts[c], part{l.N, l.K, stored})
	}
	// the dense MLP's weight: its layers' edge weight (layer 0 in Kimi)
	denseEdge, nDense := 0.0, 0
	for l := range s.Layers {
		if !cfg.IsMoE(l) {
			denseEdge += edge(l)
			nDense++
		}
	}
	var groups []FitGroup
	add := func(name string, c FitClass, layer int, imp float64, ps []part) {
		g := FitGroup{Name: name, Class: c, Layer: layer, Importance: imp}
		for _, x := range ps {
			g.Params += x.count * int64(x.n) * int64(x.k)
		}
		for _, f := range formats {
			if only != nil && f.DType != only(c, layer) {
				continue
			}
			e := f.RelErr
			if opt.Search {
				e = f.RelErrSearch
			}
			if f.DType == opt.SourceDType || f.DType == kernel.F32 && opt.SourceDType == kernel.BF16 {
				e = 0 // the checkpoint's own values (f32 widens bf16 exactly)
			}
			ch := FitChoice{DType: f.DType, RelErr: e, Cost: imp * float64(g.Params) * e * e}
			for _, x := range ps {
				ch.Bytes += x.count * quant.Size(f.DType, x.n, x.k, false)
			}
			g.Choices = append(g.Choices, ch)
		}
		if only == nil {
			g.Choices = undominated(g.Choices)
		}
		groups = append(groups, g)
	}
	for _, c := range order {
		imp := FitSensitivity[c]
		switch c {
		case FitExperts:
			for l := range s.Layers {
				if cfg.IsMoE(l) {
					add(fmt.Sprintf("experts.%d", l), c, l, imp*edge(l)*float64(s.TopK)/float64(s.Experts), parts[c])
				}
			}
			continue
		case FitDense:
			imp *= denseEdge / float64(max(nDense, 1))
		}
		add(string(c), c, -1, imp, parts[c])
	}
	return groups
}

// undominated drops the choices another beats or equals on both bytes and
// cost (keeping the first of equals), and sorts the rest by bytes, most
// first (so the least error first).
func undominated(cs []FitChoice) []FitChoice {
	var out []FitChoice
	for i, c := range cs {
		dom := false
		for j, d := range cs {
			if j != i && d.Bytes <= c.Bytes && d.Cost <= c.Cost && (d.Bytes < c.Bytes || d.Cost < c.Cost || j < i) {
				dom = true
				break
			}
		}
		if !dom {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b FitChoice) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return 0
	})
	return out
}

// fitItem is one choice of a group in the knapsack.
type fitItem struct {
	bytes int64
	cost  float64
}

// fitUnits is the resolution of solveFit's dynamic program: the room is
// cut into at most this many units.
var fitUnits int64 = 1 << 17

// solveFit picks one item per group minimising Σ cost under Σ bytes ≤
// room; ok is false when even the smallest items exceed room. The program
// runs over ⌈bytes/unit⌉ (so its picks always fit); a greedy pass then
// spends the rounding's slack on the upgrades with the most cost saved
// per byte. Among picks of equal cost it takes the fewest bytes.
func solveFit(groups [][]fitItem, room int64) ([]int, bool) {
	var least int64
	for _, g := range groups {
		m := g[0].bytes
		for _, it := range g {
			m = min(m, it.bytes)
		}
		least += m
	}
	if least > room {
		return nil, false
	}
	unit := max(1, (room+fitUnits-1)/fitUnits)
	U := int(room / unit)
	w := func(b int64) int { return int((b + unit - 1) / unit) }
	ws := make([][]int, len(groups))
	for gi, g := range groups {
		for _, it := range g {
			ws[gi] = append(ws[gi], w(it.bytes))
		}
	}
	inf := math.Inf(1)
	dp := make([]float64, U+1) // dp[u]: least cost of the groups so far in ≤ u units
	next := make([]float64, U+1)
	choice := make([][]uint8, len(groups))
	for gi, g := range groups {
		ch := make([]uint8, U+1)
		for u := 0; u <= U; u++ {
			best, bc := inf, 0
			for c, it := range g {
				if wu := ws[gi][c]; wu <= u && dp[u-wu] != inf {
					// ties to the fewer bytes
					if v := dp[u-wu] + it.cost; v < best || v == best && it.bytes < g[bc].bytes {
						best, bc = v, c
					}
				}
			}
			next[u], ch[u] = best, uint8(bc)
		}
		choice[gi] = ch
		dp, next = next, dp
	}
	picks := make([]int, len(groups))
	if dp[U] == inf { // the rounding lost the fit: start from the smallest
		for gi, g := range groups {
			for c, it := range g {
				if it.bytes < g[picks[gi]].bytes {
					picks[gi] = c
				}
			}
		}
	} else {
		u := U
		tol := 1e-12 * math.Abs(dp[U])
		for u > 0 && dp[u-1] <= dp[U]+tol {
			u--
		}
		for gi := len(groups) - 1; gi >= 0; gi-- {
			c := int(choice[gi][u])
			picks[gi] = c
			u -= w(groups[gi][c].bytes)
		}
	}
	// spend the slack the rounding left
	used := int64(0)
	for gi, c := range picks {
		used += groups[gi][c].bytes
	}
	for {
		bg, bc, bestRate := -1, 0, 0.0
		for gi, g := range groups {
			cur := g[picks[gi]]
			for c, it := range g {
				extra, saved := it.bytes-cur.bytes, cur.cost-it.cost
				if saved <= 0 || used+extra > room {
					continue
				}
				rate := math.Inf(1)
				if extra > 0 {
					rate = saved / float64(extra)
				}
				if rate > bestRate {
					bg, bc, bestRate = gi, c, rate
				}
			}
		}
		if bg < 0 {
			return picks, true
		}
		used += groups[bg][bc].bytes - groups[bg][picks[bg]].bytes
		picks[bg] = bc
	}
}
