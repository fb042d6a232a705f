// Package moe holds Kimi Linear's mixture-of-experts block (spec §6,
// golden README §3.5): the sigmoid router with its selection bias and
// grouped top-k, the token-to-expert permutation, and the grouped expert
// SwiGLU matmuls over quantized weights, plus the shared expert.
package moe

import (
	"fmt"
	"math"
)

// RouterConfig holds the routing parameters of the config.
type RouterConfig struct {
	Experts, TopK     int
	Groups, TopKGroup int     // num_expert_group, topk_group (1, 1 for Kimi)
	Renormalize       bool    // moe_renormalize
	Scale             float32 // routed_scaling_factor
}

// Validate checks the parameters.
func (c *RouterConfig) Validate() error {
	g := max(c.Groups, 1)
	if c.Experts < 1 || c.TopK < 1 || c.TopK > c.Experts || c.Experts%g != 0 || c.TopKGroup > g || (g > 1 && c.TopKGroup < 1) {
		return fmt.Errorf("moe: bad routing config %+v", *c)
	}
	if g > 1 && c.TopKGroup*(c.Experts/g) < c.TopK {
		return fmt.Errorf("moe: %d groups of %d experts cannot supply top-%d", c.TopKGroup, c.Experts/g, c.TopK)
	}
	return nil
}

// Route selects, for each of N tokens, TopK experts from the router
// logits [N×E] and the per-expert selection bias:
//
//	s = σ(logits); c = s + bias (selection only)
//	groups (if > 1): score = sum of the 2 largest c per group; keep TopKGroup groups
//	ids = the TopK largest c among allowed experts, in decreasing c (ties: lower id first)
//	w = s[ids], renormalised to sum 1 (+1e-20) if Renormalize and TopK > 1, × Scale
//
// ids and w are [N×TopK]; scores, if non-nil, receives s [N×E].
func Route(ids []int32, w []float32, scores []float32, logits, bias []float32, n int, c *RouterConfig) {
	route(ids, w, scores, logits, bias, n, c, &routeScratch{})
}

// routeScratch is Route's working memory, kept by a caller that routes
// again (BlockWeights.Forward keeps one per worker).
type routeScratch struct {
	s, sel, gscore []float32
	order, gorder  []int
}

// route is Route with its working memory in sc.
func route(ids []int32, w []float32, scores []float32, logits, bias []float32, n int, c *RouterConfig, sc *routeScratch) {
	E, K := c.Experts, c.TopK
	G := max(c.Groups, 1)
	per := E / G
	sc.s, sc.sel, sc.order = growSlice(sc.s, E), growSlice(sc.sel, E), growSlice(sc.order, K)
	sc.gscore, sc.gorder = growSlice(sc.gscore, G), growSlice(sc.gorder, G)
	s, sel, order, gscore, gorder := sc.s, sc.sel, sc.order, sc.gscore, sc.gorder
	for t := 0; t < n; t++ {
		for e := 0; e < E; e++ {
			s[e] = sigmoid(logits[t*E+e])
			sel[e] = s[e] + bias[e]
		}
		if scores != nil {
			copy(scores[t*E:(t+1)*E], s)
		}
		if G > 1 {
			for g := 0; g < G; g++ {
				a, b := float32(math.Inf(-1)), float32(math.Inf(-1))
				for _, v := range sel[g*per : (g+1)*per] {
					if v > a {
						a, b = v, a
					} else if v > b {
						b = v
					}
				}
				gscore[g] = a + b
				gorder[g] = g
			}
			// a stable insertion sort by decreasing score (a handful of
			// groups; sort.SliceStable allocates per call)
			for i := 1; i < G; i++ {
				for j := i; j > 0 && gscore[gorder[j]] > gscore[gorder[j-1]]; j-- {
					gorder[j], gorder[j-1] = gorder[j-1], gorder[j]
				}
			}
			for _, g := range gorder[c.TopKGroup:] {
				for e := g * per; e < (g+1)*per; e++ {
					sel[e] = float32(math.Inf(-1))
				}
			}
		}
		top := topK(order[:K], sel)
		var sum float32
		for k := 0; k < K; k++ {
			e := top[k]
			ids[t*K+k] = int32(e)
			w[t*K+k] = s[e]
			sum += s[e]
		}
		if c.Renormalize && K > 1 {
			for k := 0; k < K; k++ {
				w[t*K+k] /= sum + 1e-20
			}
		}
		for k := 0; k < K; k++ {
			w[t*K+k] *= c.Scale
		}
	}
}

// topK fills top (len K ≤ len(sel)) with the indices of the K largest
// values of sel in decreasing order, ties broken by the lower index (the
// order a stable sort by decreasing value gives); a NaN ranks below every
// number. One insertion pass over sel: O(E·K) compares in the worst case
// and about E when the list is full early, against the O(E log E) sort
// every prompt token paid before (a pp512 profile showed the stable sort
// at 1.4% of prefill).
func topK(top []int, sel []float32) []int {
	K, n := len(top), 0
	worse := func(a, b int) bool { // a ranks after b
		va, vb := sel[a], sel[b]
		switch an, bn := va != va, vb != vb; {
		case an && bn:
			return a > b
		case an || bn:
			return an
		}
		return va < vb || (va == vb && a > b)
	}
	for e := range sel {
		if n == K && worse(e, top[K-1]) {
			continue
		}
		i := min(n, K-1)
		for i > 0 && worse(top[i-1], e) {
			top[i] = top[i-1]
			i--
		}
		top[i] = e
		n = min(n+1, K)
	}
	return top
}

// Routing is the token-to-expert permutation of one batch: the N·TopK
// (token, expert) pairs grouped by expert with a counting sort, and the
// inverse map for the combine.
type Routing struct {
	N, K, E int
	IDs     []int32   // [N×K] expert of each slot
	W       []float32 // [N×K] weight of each slot
	Count   []int32   // [E] tokens per expert
	Offset  []int32   // [E+1] start of each expert's rows in Token
	Token   []int32   // [N·K] token of each expert-sorted row
	Slot    []int32   // [N·K] the slot (n·K+k) of each expert-sorted row
	next    []int32   // permute's working copy of Offset
	active  []int     // Forward's list of the active experts
}

// Permute builds the expert-grouped order of ids ([N×K], values < E).
func Permute(ids []int32, w []float32, n, k, e int) *Routing {
	r := &Routing{}
	r.permute(ids, w, n, k, e)
	return r
}

// permute is Permute into r, reusing its slices.
func (r *Routing) permute(ids []int32, w []float32, n, k, e int) {
	r.N, r.K, r.E, r.IDs, r.W = n, k, e, ids, w
	r.Count, r.Offset = growSlice(r.Count, e), growSlice(r.Offset, e+1)
	r.Token, r.Slot = growSlice(r.Token, n*k), growSlice(r.Slot, n*k)
	clear(r.Count)
	for _, id := range ids[:n*k] {
		r.Count[id]++
	}
	r.Offset[0] = 0
	for i := 0; i < e; i++ {
		r.Offset[i+1] = r.Offset[i] + r.Count[i]
	}
	r.next = append(r.next[:0], r.Offset[:e]...)
	next := r.next
	for slot, id := range ids[:n*k] {
		p := next[id]
		next[id]++
		r.Token[p] = int32(slot / k)
		r.Slot[p] = int32(slot)
	}
}

// Active lists the experts with at least one token, in id order.
func (r *Routing) Active() []int { return r.appendActive(nil) }

// appendActive appends the active experts to a.
func (r *Routing) appendActive(a []int) []int {
	for e, c := range r.Count {
		if c > 0 {
			a = append(a, e)
		}
	}
	return a
}

// LoadStats summarises the expert load: active experts, the largest and
// mean tokens per active expert, and the imbalance max/mean.
type LoadStats struct {
	Active    int     `json:"active"`
	Max       int     `json:"max"`
	Mean      float64 `json:"mean"`
	Imbalance float64 `json:"imbalance"`
}

// Stats returns the load statistics.
func (r *Routing) Stats() LoadStats {
	var st LoadStats
	total := 0
	for _, c := range r.Count {
		if c > 0 {
			st.Active++
			total += int(c)
			st.Max = max(st.Max, int(c))
		}
	}
	if st.Active > 0 {
		st.Mean = float64(total) / float64(st.Active)
		st.Imbalance = float64(st.Max) / st.Mean
	}
	return st
}

func sigmoid(z float32) float32 { return float32(1 / (1 + math.Exp(-float64(z)))) }
