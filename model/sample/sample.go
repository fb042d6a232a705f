// Package sample picks the next token from logits: greedy, temperature, top-k, top-p, min-p
// and a repetition penalty, with a seeded deterministic RNG.
//
// The order is Hugging Face's (and vLLM's): repetition penalty, temperature, top-k, top-p,
// min-p, then a draw. (llama.cpp applies top-k/top-p before temperature; with temperature 1
// the two agree.) The rules, exactly:
//
//   - Repetition penalty p (HF RepetitionPenaltyLogitsProcessor, llama.cpp penalty_repeat):
//     for each distinct id in the last RepeatLastN ids of history (all of it when 0), a logit
//     l > 0 becomes l/p and a logit l <= 0 becomes l·p. Ids outside the logits are ignored.
//   - Temperature <= 0 means greedy: the largest logit, the lowest id on a tie. Otherwise
//     logits are divided by the temperature and softmaxed.
//   - Top-k keeps the k largest (ties to the lower id); top-p keeps, in that order, each token
//     whose predecessors' probability mass is below TopP (so at least one, and the smallest
//     prefix reaching TopP); min-p keeps tokens with probability >= MinP·(largest probability).
//   - The draw walks the kept tokens in order against one uniform number from a PCG generator
//     seeded with Seed, so a seed and a sequence of calls give the same tokens on every run.
//
// NaN logits are never chosen: they are treated as -Inf, as are -Inf logits. When no logit
// is left (all NaN or -Inf), TrySample returns ErrNoCandidate and Sample panics with it. +Inf
// logits win outright: if any are present, the draw is uniform among them.
package sample

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Config selects the sampling rule. The zero value is greedy decoding.
type Config struct {
	Temperature   float32 // <= 0: greedy
	TopK          int     // keep the TopK most likely; 0: off
	TopP          float32 // nucleus mass in (0, 1); 0 or >= 1: off
	MinP          float32 // keep p >= MinP·pmax, in [0, 1]; 0: off
	RepeatPenalty float32 // > 0; 1 or 0: off; > 1 discourages repeats
	RepeatLastN   int     // penalise only the last RepeatLastN ids of history; 0: all of it
	Seed          uint64
}

// Greedy reports whether the config decodes greedily.
func (c Config) Greedy() bool { return !(c.Temperature > 0) }

// Validate reports a parameter outside its range.
func (c Config) Validate() error {
	bad := func(name string, v any) error { return fmt.Errorf("sample: %s = %v out of range", name, v) }
	switch {
	case isNaN32(c.Temperature) || math.IsInf(float64(c.Temperature), 1):
		return bad("temperature", c.Temperature)
	case c.TopK < 0:
		return bad("top-k", c.TopK)
	case isNaN32(c.TopP) || c.TopP < 0:
		return bad("top-p", c.TopP)
	case isNaN32(c.MinP) || c.MinP < 0 || c.MinP > 1:
		return bad("min-p", c.MinP)
	case isNaN32(c.RepeatPenalty) || c.RepeatPenalty < 0 || math.IsInf(float64(c.RepeatPenalty), 0):
		return bad("repeat penalty", c.RepeatPenalty)
	case c.RepeatLastN < 0:
		return bad("repeat-last-n", c.RepeatLastN)
	}
	return nil
}

// ErrNoCandidate means every logit was NaN or -Inf.
var ErrNoCandidate = errors.New("sample: no candidate token: every logit is NaN or -Inf")

// Sampler draws tokens under one Config. It keeps scratch buffers and the RNG, so one
// Sampler serves one sequence at a time (not safe for concurrent use).
type Sampler struct {
	cfg   Config
	rng   *rand.Rand
	buf   []float32
	cands []cand
	seen  map[int32]struct{}
}

// cand is one candidate token: its (tempered) logit and unnormalised probability.
type cand struct {
	id    int32
	logit float64
	p     float64
}

// better orders candidates: larger logit first, lower id on a tie.
func better(a, b cand) bool { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id) }

func cmpCand(a, b cand) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// New returns a Sampler for cfg.
func New(cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sampler{cfg: cfg, seen: map[int32]struct{}{}}
	s.Reseed(cfg.Seed)
	return s, nil
}

// Reseed restarts the RNG from seed.
func (s *Sampler) Reseed(seed uint64) {
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
}

// Config returns the sampler's config.
func (s *Sampler) Config() Config { return s.cfg }

// Sample returns the next token id for logits (one per vocabulary id) given the ids so far.
// logits is not modified. It panics with ErrNoCandidate when every logit is NaN or -Inf.
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	id, err := s.TrySample(logits, history)
	if err != nil {
		panic(err)
	}
	return id
}

// TrySample is Sample returning ErrNoCandidate instead of panicking.
func (s *Sampler) TrySample(logits []float32, history []int32) (int32, error) {
	l := s.penalised(logits, history)
	if s.cfg.Greedy() {
		return argmax(l)
	}
	kept, err := s.filter(l)
	if err != nil {
		return -1, err
	}
	return s.draw(kept), nil
}

// penalised returns logits with the repetition penalty applied (a copy when it applies).
func (s *Sampler) penalised(logits []float32, history []int32) []float32 {
	p := s.cfg.RepeatPenalty
	if p == 0 || p == 1 || len(history) == 0 {
		return logits
	}
	if n := s.cfg.RepeatLastN; n > 0 && len(history) > n {
		history = history[len(history)-n:]
	}
	s.buf = append(s.buf[:0], logits...)
	clear(s.seen)
	for _, id := range history {
		if id < 0 || int(id) >= len(s.buf) {
			continue
		}
		if _, dup := s.seen[id]; dup {
			continue
		}
		s.seen[id] = struct{}{}
		if v := s.buf[id]; v > 0 {
			s.buf[id] = v / p
		} else {
			s.buf[id] = v * p // NaN stays NaN, -Inf stays -Inf, 0 stays 0
		}
	}
	return s.buf
}

// argmax returns the id of the largest logit, the lowest id on a tie, skipping NaN.
func argmax(l []float32) (int32, error) {
	best := int32(-1)
	for i, v := range l {
		if isNaN32(v) || math.IsInf(float64(v), -1) {
			continue
		}
		if best < 0 || v > l[best] {
			best = int32(i)
		}
	}
	if best < 0 {
		return -1, ErrNoCandidate
	}
	return best, nil
}

// partialTopP is how many leading candidates are selected first when top-p runs without
// top-k; only if they hold less than TopP of the mass is the whole vocabulary sorted.
const partialTopP = 512

// filter applies temperature, top-k, top-p and min-p to l and returns the kept candidates,
// in the order the draw walks them, with unnormalised probabilities.
func (s *Sampler) filter(l []float32) ([]cand, error) {
	cfg := s.cfg
	invT := 1 / float64(cfg.Temperature)
	c := s.cands[:0]
	for i, v := range l {
		if isNaN32(v) || math.IsInf(float64(v), -1) {
			continue
		}
		c = append(c, cand{id: int32(i), logit: float64(v) * invT})
	}
	s.cands = c
	if len(c) == 0 {
		return nil, ErrNoCandidate
	}
	sorted := false
	if cfg.TopK > 0 && cfg.TopK < len(c) {
		c = selectTop(c, cfg.TopK)
		sorted = true
	}
	total, pmax := softmax(c)

	if cfg.TopP > 0 && cfg.TopP < 1 {
		target := float64(cfg.TopP) * total
		if !sorted {
			// The nucleus is a prefix of the sorted order, so if the best partialTopP already
			// hold the target mass, the rest need not be sorted.
			if len(c) > partialTopP {
				top := selectTop(slices.Clone(c), partialTopP)
				if mass(top) >= target {
					c = top
				} else {
					slices.SortFunc(c, cmpCand)
				}
			} else {
				slices.SortFunc(c, cmpCand)
			}
		}
		acc := 0.0
		for i := range c {
			if acc >= target {
				c = c[:i]
				break
			}
			acc += c[i].p
		}
	}
	if cfg.MinP > 0 {
		floor := float64(cfg.MinP) * pmax
		kept := c[:0]
		for _, x := range c {
			if x.p >= floor {
				kept = append(kept, x)
			}
		}
		c = kept
	}
	return c, nil
}

// softmax fills in c[i].p = exp(logit - max) and returns the sum and the largest p. When a
// logit is +Inf, the +Inf ones get p = 1 and the rest 0.
func softmax(c []cand) (total, pmax float64) {
	m := c[0].logit
	for _, x := range c {
		m = max(m, x.logit)
	}
	for i := range c {
		v := c[i].logit
		switch {
		case math.IsInf(m, 1):
			c[i].p = 0
			if math.IsInf(v, 1) {
				c[i].p = 1
			}
		default:
			c[i].p = math.Exp(v - m)
		}
		total += c[i].p
	}
	return total, 1 // the maximum's p is exp(0) = 1, or 1 for +Inf
}

func mass(c []cand) float64 {
	t := 0.0
	for _, x := range c {
		t += x.p
	}
	return t
}

// selectTop returns the k best of c, sorted best first, reusing c's storage. It keeps a
// heap of the k best seen so far with the worst at the root: O(n log k).
func selectTop(c []cand, k int) []cand {
	if k >= len(c) {
		slices.SortFunc(c, cmpCand)
		return c
	}
	h := c[:k]
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for _, x := range c[k:] {
		if better(x, h[0]) {
			h[0] = x
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, cmpCand)
	return h
}

// siftDown restores the heap property (parent worse than children) below i.
func siftDown(h []cand, i int) {
	for {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[w], h[l]) {
			w = l
		}
		if r < len(h) && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// draw picks one candidate with probability p/sum(p), walking c in order.
func (s *Sampler) draw(c []cand) int32 {
	u := s.rng.Float64() * mass(c)
	acc := 0.0
	for _, x := range c {
		acc += x.p
		if u < acc {
			return x.id
		}
	}
	// Rounding left u at the very end: the last candidate with p > 0.
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].p > 0 {
			return c[i].id
		}
	}
	return c[0].id
}

func isNaN32(v float32) bool { return v != v }
