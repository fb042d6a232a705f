// Package loadgentest fakes a streaming OpenAI-compatible completion
// server for the tests of loadgen and kprofile serve-bench: tokens at
// planted delays, and the failures a real server shows (an error status,
// a cut connection, an error event, a short stream, a stall).
package loadgentest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Server is an http.Handler answering POST /v1/completions with streamed
// server-sent events the way krun serve and llama-server do, and GET
// /v1/models. Set its fields before serving; they are not changed after.
type Server struct {
	Model string        // the id /v1/models lists ("" lists none)
	First time.Duration // delay from the request to the first token
	Delay time.Duration // delay between tokens
	// Tokens is how many tokens a response has; 0 means the request's
	// max_tokens (ignore_eos honoured).
	Tokens int
	// PerChunk tokens go in each chunk (0 means 1); the chunks carry
	// token_ids when the request asks for return_token_ids.
	PerChunk int
	Status   int // not 0 (nor 200): every completion answers this status with an OpenAI error body
	// CutAfter > 0 aborts the connection after that many tokens (a server
	// that died); ErrorAfter > 0 sends an error object in the stream then
	// ends it; NoDone ends the stream after the tokens without [DONE].
	CutAfter, ErrorAfter int
	NoDone               bool
	// Stall sends the first token, then nothing until the client leaves.
	Stall bool
	// NoUsage leaves out the usage chunk even when include_usage is asked.
	NoUsage bool

	mu       sync.Mutex
	requests []Request
}

// Request is what a completion request asked.
type Request struct {
	Model         string `json:"model"`
	Prompt        []int  `json:"prompt"`
	MaxTokens     int    `json:"max_tokens"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature    *float64 `json:"temperature"`
	IgnoreEOS      bool     `json:"ignore_eos"`
	ReturnTokenIDs bool     `json:"return_token_ids"`
	Seed           *int64   `json:"seed"`
	Auth           string   `json:"-"` // the Authorization header
}

// Requests are the completion requests received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		data := []any{}
		if s.Model != "" {
			data = append(data, map[string]any{"id": s.Model, "object": "model"})
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
		return
	case r.URL.Path != "/v1/completions" || r.Method != http.MethodPost:
		writeJSON(w, http.StatusNotFound, apiError("not found: "+r.URL.Path))
		return
	}
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError(err.Error()))
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if s.Status != 0 && s.Status != http.StatusOK {
		writeJSON(w, s.Status, apiError(fmt.Sprintf("fake status %d", s.Status)))
		return
	}
	if !req.Stream {
		writeJSON(w, http.StatusBadRequest, apiError("the fake server only streams"))
		return
	}
	n := s.Tokens
	if n == 0 {
		n = req.MaxTokens
	}
	per := max(s.PerChunk, 1)
	fl := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !wait(s.First) {
		return
	}
	for sent := 0; sent < n; {
		if sent > 0 && !wait(s.Delay) {
			return
		}
		k := min(per, n-sent)
		choice := map[string]any{"index": 0, "text": fmt.Sprintf("t%d", sent), "finish_reason": nil}
		if req.ReturnTokenIDs {
			ids := make([]int, k)
			for i := range ids {
				ids[i] = 1000 + sent + i
			}
			choice["token_ids"] = ids
		}
		sent += k
		if sent == n {
			choice["finish_reason"] = "length"
		}
		send(map[string]any{"object": "text_completion", "choices": []any{choice}})
		switch {
		case s.Stall:
			<-r.Context().Done()
			return
		case s.CutAfter > 0 && sent >= s.CutAfter:
			panic(http.ErrAbortHandler) // closes the connection mid-response
		case s.ErrorAfter > 0 && sent >= s.ErrorAfter:
			send(apiError("fake error mid-stream"))
			return
		}
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !s.NoUsage {
		send(map[string]any{"object": "text_completion", "choices": []any{},
			"usage": map[string]int{"prompt_tokens": len(req.Prompt), "completion_tokens": n, "total_tokens": len(req.Prompt) + n}})
	}
	if !s.NoDone {
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}
}

func apiError(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
