package model

import (
	"time"

	"github.com/ktune/ktune/internal/pool"
	"github.com/ktune/ktune/kernels/moe"
)

// Op families the forward pass reports to a OpTimer.
const (
	OpEmbed  = "embed"   // embedding lookup
	OpNorm   = "norm"    // the RMSNorms (input, post-attention, final)
	OpKDA    = "kda"     // a KDA mixer: its projections, conv, gates, recurrence, output projection
	OpMLA    = "mla"     // an MLA mixer: its projections and attention over the latent cache
	OpMoE    = "moe"     // a MoE block: router, routed experts, shared expert
	OpMLP    = "mlp"     // a dense SwiGLU MLP (gemm projections)
	OpLMHead = "lm_head" // the output projection
	OpOther  = "other"   // residual adds
)

// Ops lists the op families in forward order.
var Ops = []string{OpEmbed, OpNorm, OpKDA, OpMLA, OpMoE, OpMLP, OpLMHead, OpOther}

// OpTimer receives the wall time of each op of the forward pass: its
// family (Op… constants), the layer (−1 outside the layers) and the number
// of token rows it ran on. It is called on the forward pass's goroutine.
type OpTimer interface {
	Op(op string, layer, tokens int, d time.Duration)
}

// SetOpTimer installs p (nil: none) for later passes.
func (m *Model) SetOpTimer(p OpTimer) { m.opt.OpTimer, m.timing = p, timer{p} }

// SetThreads changes the number of threads later passes use (≤ 0: every
// usable CPU; more than the usable CPUs run as that many).
func (m *Model) SetThreads(n int) { m.opt.Threads = threadsFor(n) }

// threadsFor is the thread count a request runs on: every usable CPU for
// n ≤ 0, else n clamped to the worker pool's size (the usable CPUs).
func threadsFor(n int) int {
	if n <= 0 {
		return pool.Default().Size()
	}
	return pool.Default().Threads(n)
}

// timer calls a OpTimer around each op; with none it does nothing (not
// even read the clock).
type timer struct{ p OpTimer }

// start returns the time an op starts.
func (t timer) start() time.Time {
	if t.p == nil {
		return time.Time{}
	}
	return time.Now()
}

// lap reports the op that started at t0 and returns the next op's start.
func (t timer) lap(t0 time.Time, op string, layer, tokens int) time.Time {
	if t.p == nil {
		return t0
	}
	now := time.Now()
	t.p.Op(op, layer, tokens, now.Sub(t0))
	return now
}

// countExperts adds a MoE block's routing to layer l's expert counts.
func (m *Model) countExperts(l int, r *moe.Routing) {
	if r == nil {
		return
	}
	if m.hits == nil {
		m.hits = make([][]int64, len(m.Layers))
	}
	if m.hits[l] == nil {
		m.hits[l] = make([]int64, len(r.Count))
	}
	for e, c := range r.Count {
		m.hits[l][e] += int64(c)
	}
}

// ExpertCounts returns, per layer, how many token rows each routed expert
// has served since the model was made (nil for layers without MoE, or
// before any pass): the heat that decides which experts to lock in RAM.
func (m *Model) ExpertCounts() [][]int64 {
	out := make([][]int64, len(m.Layers))
	for l := range m.hits {
		out[l] = append([]int64(nil), m.hits[l]...)
	}
	return out
}

// ExpertCountsSince is ExpertCounts minus before (an earlier ExpertCounts):
// the tokens routed to each expert since then.
func (m *Model) ExpertCountsSince(before [][]int64) [][]int64 {
	out := m.ExpertCounts()
	for l := range out {
		for e := range out[l] {
			if l < len(before) && e < len(before[l]) {
				out[l][e] -= before[l][e]
			}
		}
	}
	return out
}
