// Package serve is ktune's OpenAI-compatible HTTP server: chat and text
// completions (streamed as server-sent events or not), the model list,
// health and metrics, over one model shared by many clients.
//
//	s := serve.New(serve.Options{ModelName: "kimi", Parallel: 4})
//	go s.Serve(ctx, ln)          // answers /health with "loading" meanwhile
//	s.Start(m, tok)              // the model is loaded: requests run
//
// Endpoints: POST /v1/chat/completions, POST /v1/completions, GET
// /v1/models (and /v1/models/{id}), GET /health (liveness), GET /ready
// (readiness: 503 while loading or draining), GET /metrics (Prometheus
// exposition format: counters, gauges, latency histograms).
//
// # Scheduling: continuous batching
//
// One scheduler goroutine owns the model (a Model is not safe for
// concurrent use). Requests wait in a bounded queue and join the running
// set, up to Options.Parallel sequences, as others leave. Each step of the
// scheduler
//
//  1. drops the sequences whose client went away (their state is freed);
//  2. admits waiting requests, each starting from the longest cached
//     prefix of its prompt (see below);
//  3. prefills prompt tokens, at most Options.PrefillChunk of them in the
//     step, so that a long prompt delays the others' next token by one
//     chunk's time, not by the whole prompt's;
//  4. decodes one token for every running sequence past its prompt as one
//     batch (one Model.Decode call), samples, and streams each sequence's
//     new text.
//
// A sequence's prefill is cut at multiples of PrefillChunk from its first
// token, whatever else runs, so that its floating-point work is the same
// alone or among others.
//
// # Prefix cache
//
// KDA is recurrent: its state after a prefix cannot be cut out of a longer
// sequence's state, so a prefix is reusable only as a copy of the whole
// state (KDA recurrent and conv state, MLA latent cache) taken at the
// prefix's end. The server keeps such snapshots, keyed by a hash of their
// token prefix, in an LRU bounded by Options.CacheMem bytes: at the end of
// every prompt (with the logits there, so that an identical prompt needs
// no prefill at all), at every Options.SnapshotEvery tokens of a long
// prompt, and, when a request ends, its own state with everything it
// consumed (no copy), so that the next turn of a chat, whose prompt
// extends the previous prompt and answer, prefills only its new tokens.
// Snapshots are copies (model.State.CopyFrom); MLA cache pages are
// copied, not shared. Hits show in /metrics and in a response's
// usage.prompt_tokens_details.cached_tokens.
//
// # Extensions to the OpenAI request
//
// top_k, min_p, repetition_penalty (llama.cpp and vLLM names), ignore_eos
// (do not stop at end-of-sequence tokens) and return_token_ids (each choice
// carries token_ids, the generated ids; always on when the server has no
// tokenizer). frequency_penalty and presence_penalty follow OpenAI's
// definition over the generated tokens; logit_bias adds to the logits.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/tokenizer"
)

// Options configure a Server. The zero value of each field picks the
// default named beside it.
type Options struct {
	// ModelName is the model id of /v1/models and of every response
	// (default "ktune"). Requests may name any model: there is one.
	ModelName string
	// Parallel is the most sequences decoding at once (default 4).
	Parallel int
	// Queue is the most requests waiting for a place; more are refused
	// with 503 (default 64).
	Queue int
	// Ctx is the most tokens of one sequence, prompt and completion
	// (default the model's model_max_length, at most 4096).
	Ctx int
	// PrefillChunk is the most prompt tokens prefilled in one scheduler
	// step (default 256).
	PrefillChunk int
	// SnapshotEvery keeps a prefix-cache snapshot every this many tokens
	// of a long prompt, rounded up to a multiple of PrefillChunk (default
	// 2·PrefillChunk; negative: only at prompt ends).
	SnapshotEvery int
	// CacheMem is the prefix cache's memory budget in bytes (default 1 GiB;
	// negative: no prefix cache).
	CacheMem int64
	// APIKey, if set, must be given as "Authorization: Bearer KEY".
	APIKey string
	// MaxBody is the largest request body in bytes (default 8 MiB).
	MaxBody int64
	// ReadTimeout bounds reading a request's headers and body; WriteTimeout
	// bounds each write to a client (a streaming client that reads nothing
	// for this long is dropped); defaults 30 s and 60 s.
	ReadTimeout, WriteTimeout time.Duration
	// Grace is how long Serve lets running requests finish after its
	// context ends before cancelling them (default 10 s).
	Grace time.Duration
	// DrainDelay is the least time Serve keeps listening after its context
	// ends, answering /ready and new requests with 503, even with nothing
	// left to finish: the time a balancer's health check or Kubernetes'
	// endpoint update takes to send no more requests here (default 0).
	DrainDelay time.Duration
	// Log, if set, receives one line per request and the server's events.
	Log io.Writer
}

func (o *Options) defaults() {
	if o.ModelName == "" {
		o.ModelName = "ktune"
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Queue <= 0 {
		o.Queue = 64
	}
	if o.PrefillChunk <= 0 {
		o.PrefillChunk = 256
	}
	switch {
	case o.SnapshotEvery == 0:
		o.SnapshotEvery = 2 * o.PrefillChunk
	case o.SnapshotEvery > 0:
		o.SnapshotEvery = (o.SnapshotEvery + o.PrefillChunk - 1) / o.PrefillChunk * o.PrefillChunk
	}
	if o.CacheMem == 0 {
		o.CacheMem = 1 << 30
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 8 << 20
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 60 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
}

// Server is the HTTP server. It answers /health with "loading" (and the
// completion endpoints with 503) until Start gives it a model.
type Server struct {
	opt     Options
	mux     *http.ServeMux
	created int64 // Unix time, for /v1/models

	mu       sync.Mutex
	eng      *engine // nil while loading
	draining bool

	met      *metrics
	inflight atomic.Int64 // completion requests being answered
	logMu    sync.Mutex
	started  atomic.Bool
}

// New returns a server in the loading state.
func New(opt Options) *Server {
	opt.defaults()
	s := &Server{opt: opt, created: time.Now().Unix()}
	s.met = newMetrics(opt.Parallel, func() bool { return s.readiness() == "" }, func() *cacheStats {
		s.mu.Lock()
		e := s.eng
		s.mu.Unlock()
		if e == nil {
			return nil
		}
		c := e.cache.stats()
		return &c
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.post(s.handleCompletion(true)))
	mux.HandleFunc("/v1/completions", s.post(s.handleCompletion(false)))
	mux.HandleFunc("/v1/models", s.get(s.handleModels))
	mux.HandleFunc("/v1/models/{id...}", s.get(s.handleModel))
	mux.HandleFunc("/health", s.handleHealth)
	mux.HandleFunc("/ready", s.handleReady)
	mux.Handle("/metrics", s.met.handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{http.StatusNotFound, "not_found_error", "not_found", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)})
	})
	s.mux = mux
	return s
}

// Options returns the server's options, defaults filled in.
func (s *Server) Options() Options { return s.opt }

// Start makes the server ready: it takes m (which it uses from its own
// goroutine only, until Close) and tok (nil: prompts must be token ids and
// responses carry token_ids and no text).
func (s *Server) Start(m *model.Model, tok *tokenizer.Tokenizer) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("serve: Start called twice")
	}
	if s.opt.Ctx <= 0 {
		s.opt.Ctx = 4096
		if n := m.Cfg.ModelMaxLength; n > 0 {
			s.opt.Ctx = min(n, 4096)
		}
	}
	e := newEngine(m, tok, &s.opt, s.met)
	s.mu.Lock()
	s.eng = e
	s.mu.Unlock()
	go e.run()
	s.logf("ready: model %s, %d parallel, ctx %d, prefill chunk %d, prefix cache %s", s.opt.ModelName, s.opt.Parallel, s.opt.Ctx, s.opt.PrefillChunk, humanBytes(max(s.opt.CacheMem, 0)))
	return nil
}

// Close stops the scheduler: running requests are cancelled, states and
// the prefix cache freed. The model is not closed (it is the caller's).
func (s *Server) Close() {
	s.mu.Lock()
	e := s.eng
	s.draining = true
	s.mu.Unlock()
	if e != nil {
		e.stop()
	}
}

// engine returns the engine, or nil while loading or draining, with the
// error to answer.
func (s *Server) engine() (*engine, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.draining:
		return nil, &apiError{http.StatusServiceUnavailable, "unavailable_error", "shutting_down", "the server is shutting down"}
	case s.eng == nil:
		return nil, &apiError{http.StatusServiceUnavailable, "unavailable_error", "loading", "the model is loading"}
	case s.eng.m.CheckFile() != nil: // its file changed under it (model.FaultError): no step can run
		return nil, &apiError{http.StatusServiceUnavailable, "unavailable_error", "model_unavailable", s.eng.m.Fault().Error()}
	}
	return s.eng, nil
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "ktune")
	if s.opt.APIKey != "" && r.URL.Path != "/health" && r.URL.Path != "/ready" && !s.authorized(r) {
		s.met.count(endpointOf(r.URL.Path), http.StatusUnauthorized)
		w.Header().Set("WWW-Authenticate", `Bearer realm="ktune"`)
		writeError(w, &apiError{http.StatusUnauthorized, "authentication_error", "invalid_api_key", "missing or wrong API key (give it as Authorization: Bearer KEY)"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) authorized(r *http.Request) bool {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") { // the scheme is case-insensitive (RFC 9110)
		key = r.Header.Get("X-Api-Key")
	}
	return subtleEqual(strings.TrimSpace(key), s.opt.APIKey)
}

// subtleEqual compares in time independent of where a and b differ.
func subtleEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var d byte
	for i := range len(a) {
		d |= a[i] ^ b[i]
	}
	return d == 0
}

// Serve runs an HTTP server on ln until ctx ends, then drains and shuts
// down: at once /ready answers 503 and new completion requests 503
// ("shutting_down", Retry-After), while the listener stays open so that a
// balancer's health check reads the change; the requests already taken
// (queued or running) run to their end for up to Options.Grace; those left
// then are cancelled (a stream ends with an error event); then the server
// closes its connections and returns. It does not Close the server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opt.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.draining = true
	e := s.eng
	s.mu.Unlock()
	hs.SetKeepAlivesEnabled(false) // a balancer's next request opens a connection and meets the drain
	t0 := time.Now()
	if e != nil { // else the model never loaded: nothing runs
		s.logf("draining: /ready and new requests answer 503; requests in flight: %d (they have up to %s)", s.inflight.Load(), s.opt.Grace)
		if !s.waitIdle(s.opt.Grace) {
			s.logf("draining: cancelling the %d requests left after %s", s.inflight.Load(), s.opt.Grace)
			e.cancelAll()
			s.waitIdle(5 * time.Second)
		}
	}
	if rest := s.opt.DrainDelay - time.Since(t0); rest > 0 {
		time.Sleep(rest)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(cctx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// waitIdle waits up to d for the completion requests in flight to end; it
// reports whether they did.
func (s *Server) waitIdle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for s.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func (s *Server) logf(format string, args ...any) {
	if s.opt.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opt.Log, "krun serve: "+format+"\n", args...)
}

// post and get restrict a handler to one method (405 otherwise).
func (s *Server) post(h http.HandlerFunc) http.HandlerFunc { return s.method(http.MethodPost, h) }
func (s *Server) get(h http.HandlerFunc) http.HandlerFunc  { return s.method(http.MethodGet, h) }

func (s *Server) method(m string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != m && !(m == http.MethodGet && r.Method == http.MethodHead) {
			s.met.count(endpointOf(r.URL.Path), http.StatusMethodNotAllowed)
			w.Header().Set("Allow", m)
			writeError(w, &apiError{http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", fmt.Sprintf("%s takes %s, not %s", r.URL.Path, m, r.Method)})
			return
		}
		h(w, r)
	}
}

// readiness is "" when the server admits requests, else why not:
// "loading", "draining" or the model's fault.
func (s *Server) readiness() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.eng == nil:
		return "loading"
	case s.eng.m.CheckFile() != nil:
		return s.eng.m.Fault().Error()
	case s.draining:
		return "draining"
	}
	return ""
}

// handleHealth is liveness: 200 while the process serves or drains, 503
// while the model loads (as llama-server answers: a script that waits for
// /health waits for the model) and when the model's file failed under it
// (a restart is the cure).
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	switch why := s.readiness(); why {
	case "":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case "draining", "loading":
		st := http.StatusOK
		if why == "loading" {
			st = http.StatusServiceUnavailable
		}
		writeJSON(w, st, map[string]string{"status": why})
	default:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "error", "error": why})
	}
}

// handleReady is readiness: 200 when the server admits requests, 503
// while loading, draining (from the moment Serve's context ends) or after
// a fault.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	switch why := s.readiness(); why {
	case "":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	case "draining", "loading":
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": why})
	default:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "error", "error": why})
	}
}

func (s *Server) modelObject() map[string]any {
	return map[string]any{"id": s.opt.ModelName, "object": "model", "created": s.created, "owned_by": "ktune"}
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	s.met.count("models", http.StatusOK)
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject()}})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != s.opt.ModelName {
		s.met.count("models", http.StatusNotFound)
		writeError(w, &apiError{http.StatusNotFound, "invalid_request_error", "model_not_found", fmt.Sprintf("the model %q does not exist; this server has %q", id, s.opt.ModelName)})
		return
	}
	s.met.count("models", http.StatusOK)
	writeJSON(w, http.StatusOK, s.modelObject())
}

// newID returns a response id: prefix and 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// humanBytes writes n in binary units.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
