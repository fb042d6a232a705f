// The scheduler: one goroutine owns the model and runs every sequence in
// steps (admit, prefill a chunk, decode one batch).

package serve

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/sample"
	"github.com/ktune/ktune/model/tokenizer"
)

// engine is the scheduler and what it owns: the model, the running
// sequences and the prefix cache. Only run's goroutine touches the model,
// the states and the cache; handlers talk to it through submit and each
// sequence's outbox.
type engine struct {
	m     *model.Model
	tok   *tokenizer.Tokenizer
	opt   *Options
	met   *metrics
	vocab int
	eos   []int32

	mu      sync.Mutex
	waiting []*seq
	nrun    int           // len(running), for submit's room check
	wake    chan struct{} // cap 1: something was queued or cancelled
	stopped bool
	done    chan struct{} // closed when run returns

	// owned by run's goroutine
	running []*seq
	cache   *prefixCache
}

func newEngine(m *model.Model, tok *tokenizer.Tokenizer, opt *Options, met *metrics) *engine {
	e := &engine{m: m, tok: tok, opt: opt, met: met, vocab: m.Shapes.Vocab,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		cache: newPrefixCache(opt.CacheMem)}
	e.eos = []int32{int32(m.Cfg.EOSTokenID)}
	if tok != nil {
		for _, id := range tok.EOS() {
			if !slices.Contains(e.eos, id) {
				e.eos = append(e.eos, id)
			}
		}
	}
	return e
}

// seq is one request's sequence.
type seq struct {
	j      *job
	ctx    context.Context // the request's: done when the client leaves
	out    outbox
	queued time.Time

	// owned by the scheduler
	st      *model.State
	fed     int       // prompt tokens in st
	cached  int       // prompt tokens taken from the prefix cache
	logits  []float32 // the logits to sample from next (nil: none yet)
	pending int32     // the sampled token to feed next (valid when hasPend)
	hasPend bool
	history []int32 // prompt, then generated ids
	gen     int     // generated tokens
	smp     *sample.Sampler
	counts  map[int32]int // generated ids (frequency/presence penalties)
	buf     []float32     // penalised logits
	dec     []float32     // the sequence's decode logits, reused every step
	text    *textStream
	last    time.Time // the last token sampled
}

// event is what a sequence sends its handler: new text and ids (with their
// log-probabilities), then a last event with the finish reason and usage,
// or an error.
type event struct {
	text   string
	ids    []int32
	lps    []tokenLogprob
	finish string // "stop", "length"; "" while running
	usage  *usage
	err    *apiError
}

// outbox is a sequence's unbounded event queue: the scheduler never
// blocks on a slow client.
type outbox struct {
	mu    sync.Mutex
	evs   []event
	ready chan struct{} // cap 1
}

func (o *outbox) put(e event) {
	o.mu.Lock()
	o.evs = append(o.evs, e)
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

func (o *outbox) take() []event {
	o.mu.Lock()
	defer o.mu.Unlock()
	evs := o.evs
	o.evs = nil
	return evs
}

// errBusy answers a request when the queue is full.
var errBusy = &apiError{http.StatusServiceUnavailable, "unavailable_error", "queue_full", "the server is busy: every place and the queue are taken; retry later"}

// submit queues a job; the events arrive in the returned sequence's
// outbox. The room is the queue and the places not running: requests
// that arrive together at an idle server all wait in the list until the
// scheduler's next step admits them, and must not be refused for it.
func (e *engine) submit(ctx context.Context, j *job) (*seq, *apiError) {
	s := &seq{j: j, ctx: ctx, queued: time.Now(), out: outbox{ready: make(chan struct{}, 1)}}
	e.mu.Lock()
	switch {
	case e.stopped:
		e.mu.Unlock()
		return nil, &apiError{http.StatusServiceUnavailable, "unavailable_error", "shutting_down", "the server is shutting down"}
	case len(e.waiting) >= e.opt.Queue+max(e.opt.Parallel-e.nrun, 0):
		e.mu.Unlock()
		return nil, errBusy
	}
	e.waiting = append(e.waiting, s)
	e.mu.Unlock()
	e.poke()
	return s, nil
}

// poke wakes the scheduler.
func (e *engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// stop ends the scheduler, cancelling every sequence, and waits for it.
func (e *engine) stop() {
	e.mu.Lock()
	if !e.stopped {
		e.stopped = true
	}
	e.mu.Unlock()
	e.poke()
	<-e.done
}

// cancelAll ends every waiting and running sequence with an error event
// and stops the scheduler without waiting for it (for a shutdown that
// runs out of time); later requests are refused.
func (e *engine) cancelAll() {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.poke()
}

var errShutdown = &apiError{http.StatusServiceUnavailable, "unavailable_error", "shutting_down", "the server is shutting down; the request was cancelled"}

// run is the scheduler loop.
func (e *engine) run() {
	defer close(e.done)
	defer e.cache.clear()
	for {
		e.mu.Lock()
		stopped := e.stopped
		if stopped {
			for _, s := range e.waiting {
				s.out.put(event{err: errShutdown})
			}
			e.waiting = nil
		}
		idle := len(e.waiting) == 0 && len(e.running) == 0
		e.nrun = len(e.running)
		e.met.setQueue(len(e.waiting), len(e.running))
		e.mu.Unlock()
		if stopped {
			for _, s := range e.running {
				e.finish(s, "", errShutdown)
			}
			e.running = nil
			e.met.setQueue(0, 0)
			e.met.setStateBytes(0)
			return
		}
		if idle {
			<-e.wake
			continue
		}
		e.step()
	}
}

// step runs one scheduler step.
func (e *engine) step() {
	// ---- leave: cancelled sequences (the client went away)
	e.running = slices.DeleteFunc(e.running, func(s *seq) bool {
		if s.ctx.Err() != nil {
			e.met.cancelled.Inc()
			e.finish(s, "", nil)
			return true
		}
		return false
	})
	// ---- join: waiting requests, up to Parallel running
	for len(e.running) < e.opt.Parallel {
		e.mu.Lock()
		if len(e.waiting) == 0 {
			e.mu.Unlock()
			break
		}
		s := e.waiting[0]
		e.waiting = e.waiting[1:]
		e.nrun = len(e.running) + 1 // counted as running from here (one too many if it fails below)
		e.mu.Unlock()
		if s.ctx.Err() != nil {
			e.met.cancelled.Inc()
			continue
		}
		if err := e.admit(s); err != nil {
			s.out.put(event{err: err})
			continue
		}
		e.running = append(e.running, s)
	}
	// ---- prefill: at most PrefillChunk prompt tokens, first come first
	budget := e.opt.PrefillChunk
	for _, s := range e.running {
		for budget > 0 && s.fed < len(s.j.prompt) {
			n := e.chunkLen(s)
			if n > budget {
				budget = 0
				break
			}
			if !e.prefill(s, n) {
				break
			}
			budget -= n
		}
		if budget == 0 {
			break
		}
	}
	e.running = slices.DeleteFunc(e.running, func(s *seq) bool { return s.st == nil })
	// ---- sample where logits wait (prompts just prefilled)
	for _, s := range e.running {
		if s.logits != nil && !s.hasPend {
			e.advance(s)
		}
	}
	e.running = slices.DeleteFunc(e.running, func(s *seq) bool { return s.st == nil })
	// ---- decode: one token for every sequence past its prompt, one batch
	var batch []*seq
	for _, s := range e.running {
		if s.hasPend {
			batch = append(batch, s)
		}
	}
	if len(batch) > 0 {
		sts, ids := make([]*model.State, len(batch)), make([]int32, len(batch))
		for i, s := range batch {
			sts[i], ids[i] = s.st, s.pending
		}
		out := make([][]float32, len(batch))
		for i, s := range batch {
			if s.dec == nil {
				s.dec = make([]float32, e.m.Shapes.Vocab)
			}
			out[i] = s.dec
		}
		t0 := time.Now()
		err := e.m.DecodeTo(out, sts, ids)
		e.met.decoded(len(batch), time.Since(t0))
		for i, s := range batch {
			s.hasPend = false
			if err != nil {
				e.finish(s, "", &apiError{http.StatusInternalServerError, "server_error", "decode_failed", fmt.Sprintf("decode: %v", err)})
				continue
			}
			s.logits = out[i]
			e.advance(s)
		}
		e.running = slices.DeleteFunc(e.running, func(s *seq) bool { return s.st == nil })
	}
	var bytes int64
	for _, s := range e.running {
		bytes += s.st.Bytes()
	}
	e.met.setStateBytes(bytes)
}

// admit gives a new sequence its state: a copy of the longest cached
// prefix of its prompt, or an empty one.
func (e *engine) admit(s *seq) *apiError {
	j := s.j
	smp, err := sample.New(j.sample)
	if err != nil {
		return badRequest("invalid_value", "%v", err)
	}
	s.smp = smp
	s.history = slices.Clone(j.prompt)
	if j.freqPen != 0 || j.presPen != 0 {
		s.counts = map[int32]int{}
	}
	s.text = newTextStream(e.tok, j.stop)
	s.st = e.m.NewState(e.opt.Ctx)
	if ent := e.cache.lookup(j.prompt); ent != nil {
		if err := s.st.CopyFrom(ent.st); err == nil {
			s.fed, s.cached = ent.st.Len(), ent.st.Len()
			if s.fed == len(j.prompt) {
				s.logits = ent.logits
			}
		}
	}
	e.met.admitted(len(j.prompt), s.cached, time.Since(s.queued))
	return nil
}

// chunkLen is the length of s's next prefill chunk: up to the next
// multiple of PrefillChunk from the sequence's start (so that the cut
// points do not depend on what else runs), or the prompt's end.
func (e *engine) chunkLen(s *seq) int {
	c := e.opt.PrefillChunk
	next := (s.fed/c + 1) * c
	return min(next, len(s.j.prompt)) - s.fed
}

// prefill feeds s's next n prompt tokens and snapshots the state at
// snapshot points and at the prompt's end. It reports false when the
// sequence failed (and was finished).
func (e *engine) prefill(s *seq, n int) bool {
	ids := s.j.prompt[s.fed : s.fed+n]
	end := s.fed+n == len(s.j.prompt)
	// logits only at the prompt's end, into the sequence's decode buffer
	opt := model.PrefillOptions{NoLogits: !end}
	if end {
		if s.dec == nil {
			s.dec = make([]float32, e.m.Shapes.Vocab)
		}
		opt.Logits = s.dec
	}
	t0 := time.Now()
	logits, err := e.m.PrefillWith(s.st, ids, opt)
	e.met.prefilled(n, time.Since(t0))
	if err != nil {
		e.finish(s, "", &apiError{http.StatusInternalServerError, "server_error", "prefill_failed", fmt.Sprintf("prefill: %v", err)})
		return false
	}
	s.fed += n
	if end {
		s.logits = logits
	}
	if every := e.opt.SnapshotEvery; end || (every > 0 && s.fed%every == 0) {
		var lg []float32
		if end {
			lg = logits
		}
		e.cache.insertCopy(s.j.prompt[:s.fed], s.st, lg)
	}
	return true
}

// advance samples the next token from s.logits, sends its text, and
// either finishes s or leaves the token pending for the next decode.
func (e *engine) advance(s *seq) {
	j, logits := s.j, s.logits
	if j.bias != nil || s.counts != nil {
		s.buf = append(s.buf[:0], logits...)
		for id, b := range j.bias {
			s.buf[id] += b
		}
		for id, c := range s.counts {
			s.buf[id] -= float32(c)*j.freqPen + j.presPen
		}
		logits = s.buf
	}
	id, err := s.smp.TrySample(logits, s.history)
	if err != nil {
		e.finish(s, "", &apiError{http.StatusInternalServerError, "server_error", "sampling_failed", err.Error()})
		return
	}
	now := time.Now()
	if s.gen == 0 {
		e.met.token(true, now.Sub(s.queued))
	} else {
		e.met.token(false, now.Sub(s.last))
	}
	s.last = now
	s.gen++
	s.history = append(s.history, id)
	if s.counts != nil {
		s.counts[id]++
	}
	ev := event{}
	if j.logprobs {
		ev.lps = []tokenLogprob{e.logprob(s.logits, id, j.topLP)}
	}
	eos := !j.ignoreEOS && slices.Contains(e.eos, id)
	if j.ids && !eos {
		ev.ids = []int32{id}
	}
	stopped := false
	if !eos {
		ev.text, stopped = s.text.add(id)
	}
	switch {
	case eos || stopped:
		e.finish(s, "stop", nil, ev)
	case s.gen >= j.maxTokens || s.st.Len()+1 > e.opt.Ctx:
		e.finish(s, "length", nil, ev)
	default:
		if ev.text != "" || ev.ids != nil || ev.lps != nil {
			s.out.put(ev)
		}
		s.pending, s.hasPend = id, true
	}
}

// finish ends s: with a reason (after the last events evs) and its usage,
// or with err, or silently (a client that left: err nil, reason ""). The
// state goes to the prefix cache when it is whole, else is freed.
func (e *engine) finish(s *seq, reason string, err *apiError, evs ...event) {
	// counted before the last event goes out: a client that reads
	// /metrics after its response sees its request there
	switch {
	case err != nil:
		e.met.failed.Inc()
		s.out.put(event{err: err})
	case reason != "":
		last := event{finish: reason, usage: &usage{PromptTokens: len(s.j.prompt), CompletionTokens: s.gen,
			TotalTokens: len(s.j.prompt) + s.gen, PromptTokensDetails: &promptDetails{CachedTokens: s.cached}}}
		if len(evs) > 0 {
			last.text, last.ids, last.lps = evs[0].text, evs[0].ids, evs[0].lps
		}
		last.text += s.text.flush()
		e.met.finished(reason, s.gen, time.Since(s.queued))
		s.out.put(last)
	}
	if s.st != nil {
		// the state holds prompt and generated tokens up to the one sampled
		// last (not fed): keyed by those, with the logits that sampled it
		if err == nil && s.st.Len() > 0 && (s.fed == len(s.j.prompt) && s.logits != nil) {
			e.cache.insertOwned(s.history[:s.st.Len()], s.st, slices.Clone(s.logits))
		} else {
			s.st.Free()
		}
		s.st = nil
	}
}

// logprob is the log-probability of id under logits (log-softmax), with
// the top alternatives.
func (e *engine) logprob(logits []float32, id int32, top int) tokenLogprob {
	mx := float32(math.Inf(-1))
	for _, v := range logits {
		mx = max(mx, v)
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v - mx))
	}
	lse := float64(mx) + math.Log(sum)
	lp := tokenLogprob{id: id, logprob: float64(logits[id]) - lse}
	if top > 0 {
		best := make([]int32, 0, top+1)
		for i, v := range logits {
			if len(best) == top && v <= logits[best[top-1]] {
				continue
			}
			k := len(best)
			if k < top {
				best = append(best, 0)
			} else {
				k = top - 1
			}
			for k > 0 && logits[best[k-1]] < v {
				best[k] = best[k-1]
				k--
			}
			best[k] = int32(i)
		}
		for _, b := range best {
			lp.top = append(lp.top, tokenLogprob{id: b, logprob: float64(logits[b]) - lse})
		}
	}
	return lp
}

// randomSeed draws a seed for a request that gives none.
func randomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return uint64(time.Now().UnixNano())
	}
	return binary.LittleEndian.Uint64(b[:])
}
