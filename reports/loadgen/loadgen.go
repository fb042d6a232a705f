// Package loadgen measures an OpenAI-compatible completion server under
// concurrent clients: krun serve, llama.cpp's llama-server, vLLM, or any
// server that streams /v1/completions as server-sent events.
//
// For each concurrency level N of Options.Clients, N clients start
// together and each runs Options.Requests streamed greedy completions
// back to back:
//
//	POST URL/v1/completions
//	{"model": Model, "prompt": [ids...], "max_tokens": MaxTokens,
//	 "stream": true, "stream_options": {"include_usage": true},
//	 "temperature": 0, "ignore_eos": true, "return_token_ids": true,
//	 "seed": ...}
//
// The prompt is PromptTokens token ids drawn from Options.IDs (default
// 100..1099, in every real model's vocabulary), a function of (Seed, N, the client, the request) only: the
// same for every server and run with the same options, and different for
// every request, so that no prefix cache answers a later request for
// free. ignore_eos makes every request generate MaxTokens tokens;
// return_token_ids (krun, vLLM; others ignore it) lets a chunk say how
// many tokens it carries.
//
// Run gives one Row per level: throughput, time to first token and
// inter-token latency. It prints nothing; formatting is the caller's
// (kprofile serve-bench).
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultRequests = 2
	DefaultTimeout  = 10 * time.Minute
	// MaxErrors is how many error messages a Row keeps.
	MaxErrors = 5
)

// DefaultIDs are the prompt ids drawn when Options.IDs is zero: 100..1099,
// in the vocabulary of every real model (a test model with fewer tokens
// needs its own range).
var DefaultIDs = IDRange{100, 1099}

// IDRange is an inclusive range of token ids.
type IDRange struct{ Lo, Hi int }

// Options describe a run.
type Options struct {
	// URL is the server's base, e.g. http://127.0.0.1:8080; a trailing
	// "/" or "/v1" is dropped (OpenAI clients' base URLs end in /v1).
	URL string
	// Model is the request's "model"; "" leaves the field out (krun and
	// llama-server then use the model they serve). Probe finds the id.
	Model string
	// Clients are the concurrency levels, run in this order.
	Clients []int
	// PromptTokens is the length of each prompt in token ids (at least 1).
	PromptTokens int
	// MaxTokens is the tokens each request generates (at least 1); a
	// request that ends with fewer failed ("short stream").
	MaxTokens int
	// Requests is how many requests each client runs back to back at each
	// level; 0 means DefaultRequests.
	Requests int
	// Warmup sends one request (its own prompt; not counted) before the
	// first level; Run fails when it fails.
	Warmup bool
	// Timeout bounds each request, from the POST to [DONE]; 0 means
	// DefaultTimeout. A request past it failed.
	Timeout time.Duration
	// APIKey, when set, goes as "Authorization: Bearer APIKey".
	APIKey string
	// Seed picks the prompts (and the requests' "seed", which greedy
	// decoding does not use). Change it between rounds measured on the
	// same server, or the server's prefix cache serves the repeats.
	Seed uint64
	// IDs are the prompts' token ids (zero: DefaultIDs).
	IDs IDRange
	// HTTPClient sends the requests; nil makes one for the run (no
	// response compression, idle connections kept for every client). Its
	// Timeout, if any, must exceed the requests' own.
	HTTPClient *http.Client
}

// Row is one concurrency level's result. Latencies are in milliseconds;
// a figure with no sample (no request succeeded, a request of one token
// has no inter-token gap) is NaN, never 0. Only requests that succeeded
// give figures: a failed request's tokens and latencies are left out, so
// that a server that cuts streams short does not look faster.
type Row struct {
	Clients int // concurrent clients
	OK      int // requests that streamed MaxTokens tokens and [DONE]
	Failed  int
	Tokens  int // completion tokens of the requests that succeeded

	// Wall is the level's time from the first request's start to the
	// last one's end.
	Wall time.Duration
	// AggTokPerSec is Tokens / Wall: the server's output rate.
	AggTokPerSec float64
	// StreamTokPerSec is the median over requests of each one's decode
	// rate: the tokens after its first content chunk over the time from
	// that chunk to its last.
	StreamTokPerSec float64
	// TTFTP50 and TTFTP99: time from the POST to the first chunk that
	// carries a token (text or token ids).
	TTFTP50, TTFTP99 float64
	// ITLP50 and ITLP99: inter-token latency, each gap between a request's
	// successive content chunks divided by the tokens the later one
	// carries (len(token_ids) when the server sends them, else 1).
	ITLP50, ITLP99 float64

	// Errors are the first MaxErrors failures' messages, in the order they
	// ended.
	Errors []string
}

// StatusError is a response with an HTTP status other than 200.
type StatusError struct {
	Code    int
	Message string // the OpenAI error's message, or the body's start
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message)
}

// BaseURL is u without a trailing "/" or "/v1".
func BaseURL(u string) string {
	u = strings.TrimRight(u, "/")
	return strings.TrimRight(strings.TrimSuffix(u, "/v1"), "/")
}

// check validates o and fills in its defaults.
func (o *Options) check() error {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("URL %q: want http://HOST:PORT or https://HOST:PORT", o.URL)
	}
	if len(o.Clients) == 0 {
		return fmt.Errorf("no concurrency levels")
	}
	for _, n := range o.Clients {
		if n < 1 || n > 1<<16 {
			return fmt.Errorf("concurrency level %d: must be 1 to 65536", n)
		}
	}
	if o.PromptTokens < 1 || o.MaxTokens < 1 {
		return fmt.Errorf("prompt %d and max tokens %d: both must be at least 1", o.PromptTokens, o.MaxTokens)
	}
	if o.Requests < 0 || o.Requests > 1<<20 || o.Timeout < 0 {
		return fmt.Errorf("requests %d, timeout %v: want 0 to 2²⁰ requests and a timeout not negative", o.Requests, o.Timeout)
	}
	if o.IDs == (IDRange{}) {
		o.IDs = DefaultIDs
	}
	if o.IDs.Lo < 0 || o.IDs.Hi < o.IDs.Lo {
		return fmt.Errorf("token ids %d..%d: want 0 <= low <= high", o.IDs.Lo, o.IDs.Hi)
	}
	if o.Requests == 0 {
		o.Requests = DefaultRequests
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HTTPClient == nil {
		o.HTTPClient = NewHTTPClient(slices.Max(o.Clients))
	}
	return nil
}

// NewHTTPClient is an HTTP client for n concurrent streams: no
// compression (a compressing server would hold chunks back) and a new
// connection for each request (n is kept for the signature's callers).
func NewHTTPClient(n int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	// a connection per request: a server that closes an idle keep-alive
	// connection (llama-server's HTTP library after 5 s) while the client
	// reuses it would fail the POST with EOF, which is not the server's
	// failure to count; a loopback connect is negligible beside a completion
	t.DisableKeepAlives = true
	return &http.Client{Transport: t}
}

// Probe checks that the server at o.URL answers HTTP (GET /v1/models,
// within timeout), and returns the first model id it lists ("" when it
// lists none or the endpoint is missing). Only a server that cannot be
// reached (a refused connection, an unknown host, no answer in time) is
// an error.
func Probe(ctx context.Context, o Options, timeout time.Duration) (model string, err error) {
	c := o.HTTPClient
	if c == nil {
		c = NewHTTPClient(1)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, BaseURL(o.URL)+"/v1/models", nil)
	if err != nil {
		return "", err
	}
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list) == nil && len(list.Data) > 0 {
		return list.Data[0].ID, nil
	}
	return "", nil
}

// Run measures each level of o.Clients in turn (after the warm-up, when
// asked). Requests that fail are counted in their Row; Run itself fails
// on bad options, a failed warm-up, or ctx's end (returning the rows of
// the levels done).
func Run(ctx context.Context, o Options) ([]Row, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	g := &gen{o: o, endpoint: BaseURL(o.URL) + "/v1/completions"}
	if o.Warmup {
		if err := g.warmup(ctx); err != nil {
			return nil, err
		}
	}
	var rows []Row
	for _, n := range o.Clients {
		row := g.level(ctx, n)
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Warmup sends the warm-up request alone (as Run does first when
// o.Warmup is set): an error when it fails, with a *StatusError inside for
// an HTTP status other than 200.
func Warmup(ctx context.Context, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	g := &gen{o: o, endpoint: BaseURL(o.URL) + "/v1/completions"}
	return g.warmup(ctx)
}

func (g *gen) warmup(ctx context.Context) error {
	r := g.do(ctx, Prompt(g.o.Seed, 0, -1, 0, g.o.PromptTokens, g.o.IDs), reqSeed(g.o.Seed, 0, -1, 0))
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.err != nil {
		return fmt.Errorf("warm-up request: %w", r.err)
	}
	return nil
}

// Prompt is the prompt of request req of client c at concurrency level n
// (client -1: the warm-up): k token ids in ids drawn from seed.
func Prompt(seed uint64, n, c, req, k int, ids IDRange) []int {
	// k in the stream's seed: a shorter prompt is not the prefix of a
	// longer one of another run (a prefix cache would answer it)
	r := rand.New(rand.NewPCG(hash64(seed^hash64(uint64(k))), mix(n, c, req)))
	out := make([]int, k)
	for i := range out {
		out[i] = ids.Lo + r.IntN(ids.Hi-ids.Lo+1)
	}
	return out
}

// reqSeed is the request's "seed" field: 31 bits, which every server's
// seed type holds (llama.cpp's is uint32, krun's int64).
func reqSeed(seed uint64, n, c, req int) int64 {
	return int64(rand.NewPCG(hash64(seed^0x5eed), mix(n, c, req)).Uint64() >> 33)
}

// mix packs a request's coordinates (n < 2²², -1 ≤ c < 2²¹ - 1,
// req < 2²¹) into a PCG seed word.
func mix(n, c, req int) uint64 { return hash64(uint64(n)<<42 ^ uint64(c+1)<<21 ^ uint64(req)) }

// hash64 is splitmix64's finalizer: neighbouring inputs give unrelated
// outputs (and so unrelated PCG streams), and distinct inputs distinct ones.
func hash64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

type gen struct {
	o        Options
	endpoint string
}

// result is one request's record.
type result struct {
	start, end time.Time
	ttft       time.Duration
	chunks     []chunk // content chunks, in arrival order
	tokens     int     // completion tokens (usage, else the chunks' count)
	err        error
}

// chunk is a content chunk: when it arrived and the tokens it carries.
type chunk struct {
	at     time.Time
	tokens int
}

// level runs n clients together, o.Requests requests each.
func (g *gen) level(ctx context.Context, n int) Row {
	type job struct {
		prompt []int
		seed   int64
	}
	jobs := make([][]job, n) // prompts made before the start
	for c := range jobs {
		for r := 0; r < g.o.Requests; r++ {
			jobs[c] = append(jobs[c], job{Prompt(g.o.Seed, n, c, r, g.o.PromptTokens, g.o.IDs), reqSeed(g.o.Seed, n, c, r)})
		}
	}
	results := make([][]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for _, j := range jobs[c] {
				if ctx.Err() != nil {
					return
				}
				results[c] = append(results[c], g.do(ctx, j.prompt, j.seed))
			}
		}()
	}
	close(start)
	wg.Wait()
	return summarize(n, slices.Concat(results...))
}

// summarize makes a level's Row from its requests.
func summarize(n int, rs []result) Row {
	row := Row{Clients: n}
	var first, last time.Time
	var ttft, itl, rate []float64
	var failed []result
	for _, r := range rs {
		if first.IsZero() || r.start.Before(first) {
			first = r.start
		}
		if r.end.After(last) {
			last = r.end
		}
		if r.err != nil {
			row.Failed++
			failed = append(failed, r)
			continue
		}
		row.OK++
		row.Tokens += r.tokens
		ttft = append(ttft, ms(r.ttft))
		decoded := 0
		for i := 1; i < len(r.chunks); i++ {
			k := max(r.chunks[i].tokens, 1)
			itl = append(itl, ms(r.chunks[i].at.Sub(r.chunks[i-1].at))/float64(k))
			decoded += k
		}
		if len(r.chunks) > 1 {
			if span := r.chunks[len(r.chunks)-1].at.Sub(r.chunks[0].at); span > 0 {
				rate = append(rate, float64(decoded)/span.Seconds())
			}
		}
	}
	slices.SortStableFunc(failed, func(a, b result) int { return a.end.Compare(b.end) })
	for _, r := range failed[:min(len(failed), MaxErrors)] {
		row.Errors = append(row.Errors, r.err.Error())
	}
	row.Wall = last.Sub(first)
	row.AggTokPerSec = math.NaN()
	if row.OK > 0 && row.Wall > 0 {
		row.AggTokPerSec = float64(row.Tokens) / row.Wall.Seconds()
	}
	row.StreamTokPerSec = Median(rate)
	row.TTFTP50, row.TTFTP99 = Percentile(ttft, 50), Percentile(ttft, 99)
	row.ITLP50, row.ITLP99 = Percentile(itl, 50), Percentile(itl, 99)
	return row
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// body is the request's JSON.
type body struct {
	Model         string `json:"model,omitempty"`
	Prompt        []int  `json:"prompt"`
	MaxTokens     int    `json:"max_tokens"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature    float64 `json:"temperature"`
	IgnoreEOS      bool    `json:"ignore_eos"`
	ReturnTokenIDs bool    `json:"return_token_ids"`
	Seed           int64   `json:"seed"`
}

// do runs one streamed request to its end, its Timeout or ctx's end.
func (g *gen) do(ctx context.Context, prompt []int, seed int64) (r result) {
	b := body{Model: g.o.Model, Prompt: prompt, MaxTokens: g.o.MaxTokens, Stream: true,
		IgnoreEOS: true, ReturnTokenIDs: true, Seed: seed}
	b.StreamOptions.IncludeUsage = true
	js, err := json.Marshal(b)
	if err != nil {
		return result{err: err}
	}
	rctx, cancel := context.WithTimeout(ctx, g.o.Timeout)
	defer cancel()
	r.start = time.Now()
	defer func() {
		r.end = time.Now()
		if r.err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			r.err = fmt.Errorf("timed out after %v with %d of %d tokens", g.o.Timeout, countTokens(r.chunks), g.o.MaxTokens)
		}
	}()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, g.endpoint, bytes.NewReader(js))
	if err != nil {
		r.err = err
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if g.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+g.o.APIKey)
	}
	resp, err := g.o.HTTPClient.Do(req)
	if err != nil {
		r.err = err
		return r
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.err = statusError(resp)
		return r
	}
	usage, err := g.read(resp.Body, &r)
	if err != nil {
		r.err = err
		return r
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	r.tokens = countTokens(r.chunks)
	if usage > 0 {
		r.tokens = usage
	}
	switch {
	case len(r.chunks) == 0:
		r.err = fmt.Errorf("no tokens in the stream")
	case r.tokens < g.o.MaxTokens:
		r.err = fmt.Errorf("short stream: %d of %d tokens", r.tokens, g.o.MaxTokens)
	}
	return r
}

func countTokens(cs []chunk) int {
	n := 0
	for _, c := range cs {
		n += max(c.tokens, 1)
	}
	return n
}

// statusError reads a non-200 response's error message.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	msg := errorMessage(b)
	if msg == "" {
		msg = strings.Join(strings.Fields(string(b)), " ")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	return &StatusError{Code: resp.StatusCode, Message: msg}
}

// errorMessage is the message of an error body: OpenAI's {"error":
// {"message": ...}}, {"error": "..."}, or llama.cpp's stream {"code",
// "message"}; "" when b is none of these.
func errorMessage(b []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 && string(v.Error) != "null" {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		}
		return string(v.Error)
	}
	return v.Message
}

// event is one streamed chunk's fields that matter here.
type event struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta *struct {
			Content string `json:"content"`
		} `json:"delta"`
		TokenIDs []int `json:"token_ids"`
		Tokens   []int `json:"tokens"` // llama.cpp's name
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// read parses the server-sent events up to [DONE], recording content
// chunks in r; it returns usage.completion_tokens (0 when the server sent
// none). An "error" event or object, a read error or the end of the
// stream before [DONE] is an error.
func (g *gen) read(body io.Reader, r *result) (usage int, err error) {
	br := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	var name string
	dispatch := func() (done bool, err error) {
		defer func() { data, name = data[:0], "" }()
		if len(data) == 0 {
			return false, nil
		}
		if name == "error" {
			return false, fmt.Errorf("server error in the stream: %s", orRaw(errorMessage(data), data))
		}
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			return true, nil
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			return false, fmt.Errorf("bad event after %d tokens: %v", countTokens(r.chunks), err)
		}
		if len(ev.Error) > 0 && string(ev.Error) != "null" {
			return false, fmt.Errorf("server error in the stream after %d tokens: %s", countTokens(r.chunks), orRaw(errorMessage(data), data))
		}
		if ev.Usage != nil && ev.Usage.CompletionTokens > 0 {
			usage = ev.Usage.CompletionTokens
		}
		if len(ev.Choices) == 0 {
			return false, nil
		}
		c := ev.Choices[0]
		k := max(len(c.TokenIDs), len(c.Tokens))
		if k == 0 && c.Text == "" && (c.Delta == nil || c.Delta.Content == "") {
			return false, nil // a role, finish or keep-alive chunk
		}
		now := time.Now()
		if len(r.chunks) == 0 {
			r.ttft = now.Sub(r.start)
		}
		r.chunks = append(r.chunks, chunk{at: now, tokens: k})
		return false, nil
	}
	for {
		line, rerr := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 && rerr == nil { // an event's end
			if done, err := dispatch(); done || err != nil {
				return usage, err
			}
			continue
		}
		if len(line) > 0 && line[0] != ':' { // ':' starts a comment
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, value...)
			case "event":
				name = string(value)
			case "error": // llama.cpp: "error: {...}"
				return usage, fmt.Errorf("server error in the stream after %d tokens: %s", countTokens(r.chunks), orRaw(errorMessage(value), value))
			}
		}
		if rerr != nil {
			if done, err := dispatch(); done || err != nil { // a last event without its blank line
				return usage, err
			}
			if rerr == io.EOF {
				return usage, fmt.Errorf("stream ended before [DONE] after %d tokens", countTokens(r.chunks))
			}
			return usage, fmt.Errorf("reading the stream after %d tokens: %w", countTokens(r.chunks), rerr)
		}
	}
}

func orRaw(msg string, raw []byte) string {
	if msg != "" {
		return msg
	}
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Percentile is the p-th percentile (0 ≤ p ≤ 100) of xs by nearest rank:
// the ceil(p/100·n)-th smallest of the n values that are not NaN (the
// smallest for p = 0). It is NaN when xs has no such value or p is out of
// range, so that "no sample" never reads as a latency of 0. xs is not
// changed.
func Percentile(xs []float64, p float64) float64 {
	s := sorted(xs)
	if len(s) == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Median is the middle of the values of xs that are not NaN (the mean of
// the two middle ones for an even count); NaN when there are none.
func Median(xs []float64) float64 {
	s := sorted(xs)
	switch n := len(s); {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// sorted is a sorted copy of xs without its NaNs.
func sorted(xs []float64) []float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	slices.Sort(s)
	return s
}
