// The completion handlers: request in, JSON or server-sent events out.

package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// endpointOf names an endpoint for metrics.
func endpointOf(path string) string {
	switch path {
	case "/v1/chat/completions":
		return "chat"
	case "/v1/completions":
		return "completions"
	case "/v1/models":
		return "models"
	}
	return "other"
}

// handleCompletion serves /v1/chat/completions (chat) or /v1/completions.
func (s *Server) handleCompletion(chat bool) http.HandlerFunc {
	ep := endpointOf("/v1/completions")
	if chat {
		ep = endpointOf("/v1/chat/completions")
	}
	return func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		s.inflight.Add(1) // a drain waits for it
		defer s.inflight.Add(-1)
		fail := func(e *apiError) {
			if e.Status == http.StatusServiceUnavailable { // loading, busy, shutting down: a retry may succeed
				w.Header().Set("Retry-After", "1")
			}
			s.met.count(ep, e.Status)
			s.logf("%s %s %d %s (%s)", r.Method, r.URL.Path, e.Status, e.Code, e.Message)
			writeError(w, e)
		}
		eng, aerr := s.engine()
		if aerr != nil {
			fail(aerr)
			return
		}
		// ---- the body, read within ReadTimeout and MaxBody bytes
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(s.opt.ReadTimeout))
		var req request
		aerr = decodeRequest(http.MaxBytesReader(w, r.Body, s.opt.MaxBody), &req)
		if aerr != nil {
			// what is left of the body is not read: the connection closes
			// after the answer (the server would wait for the rest)
			r.Body.Close()
			fail(aerr)
			return
		}
		rc.SetReadDeadline(time.Time{})
		if req.Model != nil && *req.Model != "" && *req.Model != s.opt.ModelName { // as OpenAI answers
			fail(&apiError{http.StatusNotFound, "invalid_request_error", "model_not_found",
				fmt.Sprintf("the model %q does not exist; this server has %q (GET /v1/models)", *req.Model, s.opt.ModelName)})
			return
		}
		j, aerr := req.check(chat, eng.tok, eng.vocab, s.opt.Ctx)
		if aerr != nil {
			fail(aerr)
			return
		}
		sq, aerr := eng.submit(r.Context(), j)
		if aerr != nil {
			fail(aerr)
			return
		}
		a := &answer{s: s, w: w, rc: rc, j: j, eng: eng, chat: chat, ep: ep, id: newID("cmpl-"), created: time.Now().Unix()}
		if chat {
			a.id = newID("chatcmpl-")
		}
		status := a.run(r, sq)
		if !a.counted {
			s.met.count(ep, status)
		}
		switch {
		case a.usage != nil:
			s.logf("%s %s %d: %d prompt tokens (%d cached), %d generated, %s, %.2fs", r.Method, r.URL.Path, status,
				a.usage.PromptTokens, a.usage.PromptTokensDetails.CachedTokens, a.usage.CompletionTokens, a.finish, time.Since(t0).Seconds())
		case status == 499:
			s.logf("%s %s 499: the client left after %.2fs", r.Method, r.URL.Path, time.Since(t0).Seconds())
		}
	}
}

// answer writes one request's response from its sequence's events.
type answer struct {
	s       *Server
	w       http.ResponseWriter
	rc      *http.ResponseController
	j       *job
	eng     *engine
	chat    bool
	ep      string // the endpoint, for the request counter
	id      string
	created int64
	counted bool // the request counter has this answer

	text   []byte
	ids    []int32
	lps    []tokenLogprob
	finish string
	usage  *usage
}

// run waits for the sequence's events and answers; it returns the HTTP
// status sent (499 when the client left first).
func (a *answer) run(r *http.Request, sq *seq) int {
	if a.j.stream {
		return a.stream(r, sq)
	}
	for {
		select {
		case <-r.Context().Done():
			return 499
		case <-sq.out.ready:
		}
		for _, ev := range sq.out.take() {
			if ev.err != nil {
				a.count(ev.err.Status)
				writeError(a.w, ev.err)
				return ev.err.Status
			}
			a.text = append(a.text, ev.text...)
			a.ids = append(a.ids, ev.ids...)
			a.lps = append(a.lps, ev.lps...)
			if ev.finish != "" {
				a.finish, a.usage = ev.finish, ev.usage
				a.rc.SetWriteDeadline(time.Now().Add(a.s.opt.WriteTimeout))
				a.count(http.StatusOK)
				writeJSON(a.w, http.StatusOK, a.whole())
				return http.StatusOK
			}
		}
	}
}

// stream answers with server-sent events: a chunk per event, the usage
// chunk when asked, then [DONE].
func (a *answer) stream(r *http.Request, sq *seq) int {
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	a.w.WriteHeader(http.StatusOK)
	if a.chat { // the role first, as OpenAI does
		if a.send(a.chunk(event{}, true)) != nil {
			return 499
		}
	} else if a.flush() != nil {
		return 499
	}
	for {
		select {
		case <-r.Context().Done():
			return 499
		case <-sq.out.ready:
		}
		for _, ev := range sq.out.take() {
			if ev.err != nil {
				a.count(http.StatusOK)
				a.send(errorBody(ev.err))
				return http.StatusOK
			}
			if ev.finish != "" {
				a.finish, a.usage = ev.finish, ev.usage
			}
			if err := a.send(a.chunk(ev, false)); err != nil {
				return 499
			}
			if ev.finish != "" {
				if a.j.usage {
					u := a.base(true)
					u["choices"] = []any{}
					u["usage"] = ev.usage
					if a.send(u) != nil {
						return 499
					}
				}
				a.rc.SetWriteDeadline(time.Now().Add(a.s.opt.WriteTimeout))
				a.count(http.StatusOK)
				a.w.Write([]byte("data: [DONE]\n\n"))
				a.rc.Flush()
				return http.StatusOK
			}
		}
	}
}

// count adds the answer to the request counter before its last bytes go
// out: a client that reads /metrics after its response sees it there.
func (a *answer) count(status int) {
	a.s.met.count(a.ep, status)
	a.counted = true
}

// send writes one event, within WriteTimeout.
func (a *answer) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	a.rc.SetWriteDeadline(time.Now().Add(a.s.opt.WriteTimeout))
	if _, err := a.w.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
		return err
	}
	return a.rc.Flush()
}

func (a *answer) flush() error {
	a.rc.SetWriteDeadline(time.Now().Add(a.s.opt.WriteTimeout))
	return a.rc.Flush()
}

// base is the fields every response object has.
func (a *answer) base(chunk bool) map[string]any {
	obj := "text_completion"
	switch {
	case a.chat && chunk:
		obj = "chat.completion.chunk"
	case a.chat:
		obj = "chat.completion"
	}
	return map[string]any{"id": a.id, "object": obj, "created": a.created, "model": a.s.opt.ModelName,
		"system_fingerprint": "ktune"}
}

// whole is the non-streamed response.
func (a *answer) whole() map[string]any {
	out := a.base(false)
	choice := map[string]any{"index": 0, "finish_reason": a.finish, "logprobs": a.logprobs(a.lps, 0)}
	if a.chat {
		choice["message"] = map[string]any{"role": "assistant", "content": string(a.text)}
	} else {
		choice["text"] = string(a.text)
	}
	if a.j.ids {
		choice["token_ids"] = nonNil(a.ids)
	}
	out["choices"] = []any{choice}
	out["usage"] = a.usage
	return out
}

// chunk is one streamed event's object (first: the chat's role chunk).
func (a *answer) chunk(ev event, first bool) map[string]any {
	out := a.base(true)
	var finish any
	if ev.finish != "" {
		finish = ev.finish
	}
	choice := map[string]any{"index": 0, "finish_reason": finish, "logprobs": a.logprobs(ev.lps, len(a.text))}
	a.text = append(a.text, ev.text...)
	if a.chat {
		delta := map[string]any{}
		if first {
			delta["role"] = "assistant"
			delta["content"] = ""
		} else if ev.text != "" || ev.finish == "" {
			delta["content"] = ev.text
		}
		choice["delta"] = delta
	} else {
		choice["text"] = ev.text
	}
	if a.j.ids && !first {
		choice["token_ids"] = nonNil(ev.ids)
	}
	out["choices"] = []any{choice}
	if a.j.usage {
		out["usage"] = nil
	}
	return out
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// logprobs renders log-probabilities in the endpoint's form (nil when not
// asked for); offset is the text's length before these tokens.
func (a *answer) logprobs(lps []tokenLogprob, offset int) any {
	if !a.j.logprobs || len(lps) == 0 {
		return nil
	}
	tok := a.eng.tok
	if a.chat {
		entry := func(lp tokenLogprob) map[string]any {
			s, b := tokenText(tok, lp.id)
			return map[string]any{"token": s, "logprob": lp.logprob, "bytes": byteInts(b)}
		}
		content := make([]any, len(lps))
		for i, lp := range lps {
			e := entry(lp)
			top := make([]any, len(lp.top))
			for k, t := range lp.top {
				top[k] = entry(t)
			}
			e["top_logprobs"] = top
			content[i] = e
		}
		return map[string]any{"content": content}
	}
	var tokens []string
	var lpv []float64
	var tops []map[string]float64
	var offs []int
	for _, lp := range lps {
		s, b := tokenText(tok, lp.id)
		tokens = append(tokens, s)
		lpv = append(lpv, lp.logprob)
		offs = append(offs, offset)
		offset += len(b)
		m := map[string]float64{}
		for _, t := range lp.top {
			ts, _ := tokenText(tok, t.id)
			m[ts] = t.logprob
		}
		tops = append(tops, m)
	}
	return map[string]any{"tokens": tokens, "token_logprobs": lpv, "top_logprobs": tops, "text_offset": offs}
}

// byteInts writes bytes as JSON numbers (OpenAI's "bytes" field).
func byteInts(b []byte) []int {
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}
