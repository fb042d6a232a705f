package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model"
)

// TestBadRequests: each malformed request is refused with its status and
// an OpenAI-shaped error of the right type, and nothing runs.
func TestBadRequests(t *testing.T) {
	ts := startServer(t, Options{Ctx: 64, MaxBody: 4096}, true)
	const chat, cmpl = "/v1/chat/completions", "/v1/completions"
	bad := "invalid_request_error"
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		typ, code                string
	}{
		{"bad JSON", "POST", cmpl, `{"prompt": [1,`, 400, bad, "invalid_json"},
		{"another model", "POST", cmpl, `{"model": "gpt-4", "prompt": [1]}`, 404, bad, "model_not_found"},
		{"another model, chat", "POST", chat, `{"model": "kimi", "messages": [{"role": "user", "content": "x"}]}`, 404, bad, "model_not_found"},
		{"not an object", "POST", cmpl, `[1, 2]`, 400, bad, "invalid_json"},
		{"empty body", "POST", cmpl, ``, 400, bad, "invalid_json"},
		{"data after the object", "POST", cmpl, `{"prompt": [1]} {}`, 400, bad, "invalid_json"},
		{"temperature a string", "POST", cmpl, `{"prompt": [1], "temperature": "hot"}`, 400, bad, "invalid_type"},
		{"max_tokens a fraction", "POST", cmpl, `{"prompt": [1], "max_tokens": 1.5}`, 400, bad, "invalid_type"},
		{"max_tokens 0", "POST", cmpl, `{"prompt": [1], "max_tokens": 0}`, 400, bad, "invalid_value"},
		{"max_tokens negative", "POST", chat, `{"messages": [{"role": "user", "content": "x"}], "max_tokens": -3}`, 400, bad, "invalid_value"},
		{"temperature 3", "POST", cmpl, `{"prompt": [1], "temperature": 3}`, 400, bad, "invalid_value"},
		{"top_p 1.5", "POST", cmpl, `{"prompt": [1], "top_p": 1.5}`, 400, bad, "invalid_value"},
		{"top_k -2", "POST", cmpl, `{"prompt": [1], "top_k": -2}`, 400, bad, "invalid_value"},
		{"min_p 2", "POST", cmpl, `{"prompt": [1], "min_p": 2}`, 400, bad, "invalid_value"},
		{"frequency_penalty 3", "POST", cmpl, `{"prompt": [1], "frequency_penalty": 3}`, 400, bad, "invalid_value"},
		{"presence_penalty -2.5", "POST", chat, `{"messages": [{"role": "user", "content": "x"}], "presence_penalty": -2.5}`, 400, bad, "invalid_value"},
		{"n 2", "POST", cmpl, `{"prompt": [1], "n": 2}`, 400, bad, "unsupported_value"},
		{"five stop strings", "POST", cmpl, `{"prompt": "x", "stop": ["a", "b", "c", "d", "e"]}`, 400, bad, "invalid_value"},
		{"stop a number", "POST", cmpl, `{"prompt": "x", "stop": 12}`, 400, bad, "invalid_type"},
		{"empty stop string", "POST", cmpl, `{"prompt": "x", "stop": [""]}`, 400, bad, "invalid_value"},
		{"seed a string", "POST", cmpl, `{"prompt": [1], "seed": "x"}`, 400, bad, "invalid_type"},
		{"seed over int64", "POST", cmpl, `{"prompt": [1], "seed": 18446744073709551615}`, 400, bad, "invalid_value"},
		{"max_tokens over int", "POST", cmpl, `{"prompt": [1], "max_tokens": 99999999999999999999}`, 400, bad, "invalid_value"},
		{"no prompt", "POST", cmpl, `{"max_tokens": 3}`, 400, bad, "invalid_value"},
		{"empty prompt ids", "POST", cmpl, `{"prompt": []}`, 400, bad, "invalid_value"},
		{"prompt id outside the vocabulary", "POST", cmpl, `{"prompt": [1, 99999]}`, 400, bad, "invalid_value"},
		{"negative prompt id", "POST", cmpl, `{"prompt": [1, -4]}`, 400, bad, "invalid_value"},
		{"two prompts", "POST", cmpl, `{"prompt": [[1], [2]]}`, 400, bad, "unsupported_value"},
		{"fractional prompt id", "POST", cmpl, `{"prompt": [1.5, 2]}`, 400, bad, "invalid_value"},
		{"prompt id 1.0", "POST", cmpl, `{"prompt": [1.0]}`, 400, bad, "invalid_value"},
		{"prompt id over int64", "POST", cmpl, `{"prompt": [1, 99999999999999999999]}`, 400, bad, "invalid_value"},
		{"prompt id a string", "POST", cmpl, `{"prompt": [1, "a"]}`, 400, bad, "invalid_type"},
		{"prompt id null", "POST", cmpl, `{"prompt": [null]}`, 400, bad, "invalid_type"},
		{"prompt ids and a batch", "POST", cmpl, `{"prompt": [1, [2]]}`, 400, bad, "invalid_type"},
		{"prompt an object", "POST", cmpl, `{"prompt": {"text": "x"}}`, 400, bad, "invalid_type"},
		{"prompt longer than ctx", "POST", cmpl, `{"prompt": [` + strings.Repeat("1,", 64) + `1]}`, 400, bad, "context_length_exceeded"},
		{"prompt and max_tokens over ctx", "POST", cmpl, `{"prompt": [1, 2, 3], "max_tokens": 62}`, 400, bad, "context_length_exceeded"},
		{"messages to completions", "POST", cmpl, `{"messages": [{"role": "user", "content": "x"}]}`, 400, bad, "unsupported_parameter"},
		{"prompt to chat", "POST", chat, `{"prompt": "x", "messages": [{"role": "user", "content": "x"}]}`, 400, bad, "unsupported_parameter"},
		{"no messages", "POST", chat, `{"model": "tiny"}`, 400, bad, "invalid_value"},
		{"messages a string", "POST", chat, `{"messages": "hello"}`, 400, bad, "invalid_type"},
		{"unknown role", "POST", chat, `{"messages": [{"role": "wizard", "content": "x"}]}`, 400, bad, "invalid_value"},
		{"image content", "POST", chat, `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}`, 400, bad, "invalid_value"},
		{"logprobs 21", "POST", cmpl, `{"prompt": [1], "logprobs": 21}`, 400, bad, "invalid_value"},
		{"chat logprobs a number", "POST", chat, `{"messages": [{"role": "user", "content": "x"}], "logprobs": 3}`, 400, bad, "invalid_type"},
		{"top_logprobs without logprobs", "POST", chat, `{"messages": [{"role": "user", "content": "x"}], "top_logprobs": 5}`, 400, bad, "invalid_value"},
		{"stream_options without stream", "POST", cmpl, `{"prompt": [1], "stream_options": {"include_usage": true}}`, 400, bad, "invalid_value"},
		{"tools", "POST", chat, `{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f"}}]}`, 400, bad, "unsupported_parameter"},
		{"response_format json", "POST", chat, `{"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"}}`, 400, bad, "unsupported_value"},
		{"logit_bias key", "POST", cmpl, `{"prompt": [1], "logit_bias": {"abc": 1}}`, 400, bad, "invalid_value"},
		{"logit_bias value", "POST", cmpl, `{"prompt": [1], "logit_bias": {"5": 200}}`, 400, bad, "invalid_value"},
		{"echo", "POST", cmpl, `{"prompt": [1], "echo": true}`, 400, bad, "unsupported_value"},
		{"body over the limit", "POST", cmpl, `{"prompt": "` + strings.Repeat("x", 5000) + `"}`, 413, bad, "request_too_large"},
		{"GET a completion", "GET", cmpl, ``, 405, bad, "method_not_allowed"},
		{"no such endpoint", "POST", "/v1/embeddings", `{}`, 404, "not_found_error", "not_found"},
		{"no such model", "GET", "/v1/models/gpt-9", ``, 404, bad, "model_not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := do(t, c.method, ts.URL+c.path, c.body)
			var e struct {
				Error struct {
					Message, Type, Code string
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("status %d, body not JSON: %s", status, body)
			}
			if status != c.status || e.Error.Type != c.typ || e.Error.Code != c.code || e.Error.Message == "" {
				t.Errorf("status %d %+v; want %d %s %s", status, e.Error, c.status, c.typ, c.code)
			}
		})
	}
	mt := metricsOf(t, ts.URL)
	if mt["prompt_tokens_total"] != 0 || mt["decode_steps_total"] != 0 {
		t.Errorf("a refused request ran: %v prompt tokens, %v decode steps", mt["prompt_tokens_total"], mt["decode_steps_total"])
	}
}

// TestAPIKey: with an API key, requests without it or with another are
// refused with 401; /health needs none.
func TestAPIKey(t *testing.T) {
	ts := startServer(t, Options{APIKey: "sekret"}, false)
	body := `{"prompt": [1, 2], "max_tokens": 1}`
	for _, c := range []struct {
		hdr    []string
		status int
	}{
		{nil, 401},
		{[]string{"Authorization", "Bearer nope"}, 401},
		{[]string{"Authorization", "sekret"}, 401},
		{[]string{"Authorization", "Bearer sekret"}, 200},
		{[]string{"Authorization", "bearer sekret"}, 200},
		{[]string{"Authorization", "BEARER  sekret "}, 200},
		{[]string{"Authorization", "Basic sekret"}, 401},
		{[]string{"X-Api-Key", "sekret"}, 200},
	} {
		if st, b := do(t, "POST", ts.URL+"/v1/completions", body, c.hdr...); st != c.status {
			t.Errorf("%v: %d %s; want %d", c.hdr, st, b, c.status)
		}
	}
	if st, _ := do(t, "GET", ts.URL+"/health", ""); st != 200 {
		t.Errorf("/health with no key: %d", st)
	}
	if st, _ := do(t, "GET", ts.URL+"/v1/models", ""); st != 401 {
		t.Errorf("/v1/models with no key: %d", st)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("/metrics with no key: %d, WWW-Authenticate %q; want 401 with a Bearer challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// startStream posts a streaming completion and returns the response once
// its first token arrived (the sequence is running).
func startStream(t testing.TB, url string, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			return resp
		}
	}
}

// waitMetric polls /metrics until name has value v (up to 5 s).
func waitMetric(t testing.TB, url, name string, v float64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got := metricsOf(t, url)[name]
		if got == v {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metric %s is %v; want %v", name, got, v)
		}
	}
}

// TestQueueFullAndDisconnect: with every place and the queue taken a
// request gets 503 with Retry-After; a client that leaves mid-stream is
// cancelled and its place goes to the next.
func TestQueueFullAndDisconnect(t *testing.T) {
	ts := startServer(t, Options{Parallel: 1, Queue: 1}, false)
	long := `{"prompt": [1, 2, 3], "max_tokens": 4000, "ignore_eos": true, "stream": true}`
	a := startStream(t, ts.URL, long)
	waitMetric(t, ts.URL, "requests_running", 1)
	done := make(chan int)
	go func() { // b waits in the queue
		st, _ := do(t, "POST", ts.URL+"/v1/completions", `{"prompt": [4, 5], "max_tokens": 2}`)
		done <- st
	}()
	waitMetric(t, ts.URL, "requests_waiting", 1)
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": [6], "max_tokens": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("full queue: status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	a.Body.Close() // a leaves: b runs
	select {
	case st := <-done:
		if st != 200 {
			t.Errorf("queued request: status %d", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued request did not run after the running client left")
	}
	waitMetric(t, ts.URL, "requests_cancelled_total", 1)
	waitMetric(t, ts.URL, "requests_running", 0)
	waitMetric(t, ts.URL, "state_bytes", 0)
}

// TestQueueRoom: requests that arrive together at an idle server wait
// in the queue's list until the scheduler admits them; the places not
// running count as room, so Parallel+Queue of them are taken and only the
// next is refused (a burst of 4 at Parallel 2, Queue 2 got 503 for 1-2).
func TestQueueRoom(t *testing.T) {
	e := &engine{opt: &Options{Parallel: 2, Queue: 2}, wake: make(chan struct{}, 1)}
	for i := range 4 {
		if _, err := e.submit(context.Background(), &job{}); err != nil {
			t.Fatalf("request %d of a burst into 2 free places and a queue of 2: %v", i+1, err.Message)
		}
	}
	if _, err := e.submit(context.Background(), &job{}); err != errBusy {
		t.Errorf("request 5: %v; want queue_full", err)
	}
	e.waiting, e.nrun = e.waiting[:2], 2 // the scheduler admitted two
	if _, err := e.submit(context.Background(), &job{}); err != errBusy {
		t.Errorf("2 running, 2 waiting: %v; want queue_full", err)
	}
}

// TestGracefulShutdown: when Serve's context ends, a running stream
// finishes ([DONE]) and Serve returns; with too short a grace a stream is
// cancelled with an error event instead.
func TestGracefulShutdown(t *testing.T) {
	for _, c := range []struct {
		name  string
		grace time.Duration
		max   int
		want  string
	}{
		{"finishes", 10 * time.Second, 40, "[DONE]"},
		{"cancelled", 50 * time.Millisecond, 4000, `"shutting_down"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, Options{Grace: c.grace}, false)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- ts.Serve(ctx, ln) }()
			url := "http://" + ln.Addr().String()
			body := `{"prompt": [1, 2, 3], "max_tokens": ` + itoa(c.max) + `, "ignore_eos": true, "stream": true}`
			resp := startStream(t, url, body)
			defer resp.Body.Close()
			cancel()
			var last string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if line := sc.Text(); line != "" {
					last = line
				}
			}
			if !strings.Contains(last, c.want) {
				t.Errorf("the stream ended with %q; want %s", last, c.want)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("Serve did not return")
			}
			if _, err := http.Get(url + "/health"); err == nil {
				t.Error("the server still accepts connections after shutdown")
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestSlowClient: a body that does not arrive within ReadTimeout gets 408,
// and headers that do not arrive get the connection closed.
func TestSlowClient(t *testing.T) {
	ts := startServer(t, Options{ReadTimeout: 200 * time.Millisecond}, false)
	addr := strings.TrimPrefix(ts.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\": [1")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "request_timeout") {
		t.Errorf("slow body: %d %s", resp.StatusCode, b)
	}
}

// TestModelFileCut: the model file cut short under a running server (a
// mapped model): the server stays up, the next request gets a 503 naming
// the file (the change is seen before the step runs; a fault met inside a
// step is model.FaultError, TestFaultError), and /health says "error".
func TestModelFileCut(t *testing.T) {
	ts, path := startMappedServer(t)
	body := `{"prompt": [1, 2, 3], "max_tokens": 2}`
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	status, out := do(t, "POST", ts.URL+"/v1/completions", `{"prompt": [4, 5, 6, 7], "max_tokens": 2}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(out), "tiny.kt") || !strings.Contains(string(out), "4096 bytes") {
		t.Errorf("the request after the cut: %d %s", status, out)
	}
	status, out = do(t, "GET", ts.URL+"/health", "")
	if status != http.StatusServiceUnavailable || !strings.Contains(string(out), `"status":"error"`) || !strings.Contains(string(out), "tiny.kt") {
		t.Errorf("/health after the fault: %d %s", status, out)
	}
	status, out = do(t, "POST", ts.URL+"/v1/completions", body)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(out), "model_unavailable") {
		t.Errorf("a later request: %d %s", status, out)
	}
}

// TestModelFileRewritten: the model file rewritten in place (same size,
// other bytes) under a running server: the next request gets a 503 naming
// the file instead of an answer from weights that are no longer the
// model's, and /health says "error".
func TestModelFileRewritten(t *testing.T) {
	ts, path := startMappedServer(t)
	body := `{"prompt": [1, 2, 3], "max_tokens": 2}`
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := f.WriteAt(make([]byte, 64), st.Size()/2); err != nil { // in place: same file, same size
		t.Fatal(err)
	}
	f.Close()
	later := st.ModTime().Add(time.Second) // a coarse clock may not move
	os.Chtimes(path, later, later)
	status, out := do(t, "POST", ts.URL+"/v1/completions", body)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(out), "changed in place") || !strings.Contains(string(out), "tiny.kt") {
		t.Errorf("a request after the rewrite: %d %s", status, out)
	}
	if status, out := do(t, "GET", ts.URL+"/health", ""); status != http.StatusServiceUnavailable || !strings.Contains(string(out), `"status":"error"`) {
		t.Errorf("/health after the rewrite: %d %s", status, out)
	}
}

// startMappedServer serves the tiny model converted to a .kt file in a
// temporary folder and mapped from it (so that the test can change the
// file under the server), after one request that must succeed.
func startMappedServer(t *testing.T) (*testServer, string) {
	t.Helper()
	t.Setenv(model.PreloadEnv, "0")
	var path string
	ts := startServerWith(t, Options{}, false, func(dir string) (*model.Model, error) {
		path = filepath.Join(t.TempDir(), "tiny.kt")
		if err := model.ConvertFile(dir, path, model.LoadOptions{Formats: model.Formats{DType: kernel.Q8}}, map[string]string{"preset": "test"}, nil); err != nil {
			return nil, err
		}
		return model.LoadFile(path, model.LoadOptions{Runtime: model.Runtime{Threads: 2}, Files: model.Files{Weights: model.WeightsMap, NoVerify: true}})
	})
	if status, out := do(t, "POST", ts.URL+"/v1/completions", `{"prompt": [1, 2, 3], "max_tokens": 2}`); status != http.StatusOK {
		t.Fatalf("intact file: %d %s", status, out)
	}
	return ts, path
}

// TestDrain: when Serve's context ends, /ready answers 503 at once while
// the listener stays open, /health stays 200 (alive), a new completion is
// refused with a retryable 503, and a request taken before the drain (its
// body still arriving) runs to its end; then Serve returns and the port
// closes.
func TestDrain(t *testing.T) {
	ts := startServer(t, Options{Grace: 20 * time.Second, ReadTimeout: 10 * time.Second}, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ts.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	if st, b := do(t, "GET", url+"/ready", ""); st != 200 || !strings.Contains(string(b), `"ready"`) {
		t.Fatalf("/ready before the drain: %d %s", st, b)
	}
	// a request in flight: its handler runs, its body half sent
	body := `{"prompt": [1, 2, 3], "max_tokens": 5, "ignore_eos": true}`
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:10])
	for deadline := time.Now().Add(5 * time.Second); ts.inflight.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached its handler")
		}
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); ts.readiness() != "draining"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not start draining")
		}
	}
	if st, b := do(t, "GET", url+"/ready", ""); st != 503 || !strings.Contains(string(b), `"draining"`) {
		t.Errorf("/ready while draining: %d %s; want 503 draining", st, b)
	}
	if st, b := do(t, "GET", url+"/health", ""); st != 200 || !strings.Contains(string(b), `"draining"`) {
		t.Errorf("/health while draining: %d %s; want 200 draining", st, b)
	}
	req, _ := http.NewRequest("POST", url+"/v1/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "shutting_down") {
		t.Errorf("a new request while draining: %d (Retry-After %q) %s; want 503 shutting_down", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	default:
	}
	// the rest of the body: the request taken before the drain completes
	io.WriteString(conn, body[10:])
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || !strings.Contains(string(out), `"finish_reason":"length"`) {
		t.Errorf("the request in flight: %d %s", r.StatusCode, out)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the last request")
	}
	if _, err := http.Get(url + "/ready"); err == nil {
		t.Error("the server still accepts connections after the drain")
	}
}

// TestDrainDelay: with nothing in flight the server still answers /ready
// with 503 for DrainDelay after its context ends, then closes its port.
func TestDrainDelay(t *testing.T) {
	const delay = 400 * time.Millisecond
	ts := startServer(t, Options{DrainDelay: delay}, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ts.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	t0 := time.Now()
	cancel()
	for deadline := time.Now().Add(5 * time.Second); ts.readiness() != "draining"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not start draining")
		}
	}
	if st, b := do(t, "GET", url+"/ready", ""); st != 503 || !strings.Contains(string(b), `"draining"`) {
		t.Errorf("/ready during the drain delay: %d %s", st, b)
	}
	select {
	case err := <-served:
		if took := time.Since(t0); err != nil || took < delay {
			t.Errorf("Serve returned %v after %s; want nil after at least %s", err, took, delay)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}
