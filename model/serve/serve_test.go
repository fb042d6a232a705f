package serve

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/tokenizer"
	"github.com/prometheus/common/expfmt"
	prommodel "github.com/prometheus/common/model"
)

// ---- fixtures: the golden tiny model, a byte-level tokenizer for it

// tinyGolden is the golden tiny model copied into a temporary folder, with
// its golden prompt and greedy ids.
type tinyGolden struct {
	dir    string
	prompt []int32 // input_ids row 0
	gen    []int32 // generated_ids row 0 (greedy)
	vocab  int     // config.json's vocab_size
}

func loadTinyGolden(t testing.TB) tinyGolden {
	t.Helper()
	f := golden.Load(t, golden.TinyModel)[0]
	dir := t.TempDir()
	for _, name := range []string{"config.json", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(f.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	T, n := f.Dims(t, "input_ids")[1], f.Dims(t, "generated_ids")[1]
	cfg, err := arch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := tinyGolden{dir: dir, vocab: cfg.VocabSize}
	for _, v := range f.I64(t, "input_ids")[:T] {
		g.prompt = append(g.prompt, int32(v))
	}
	for _, v := range f.I64(t, "generated_ids")[:n] {
		g.gen = append(g.gen, int32(v))
	}
	return g
}

// testTemplate is a chat template in Kimi's shape with a default system
// prompt (see model/tokenizer).
const testTemplate = `{%- for message in messages -%}{%- if loop.first and messages[0]['role'] != 'system' -%}<|im_system|>system<|im_middle|>You are a test assistant.<|im_end|>{%- endif -%}{%- if message['role'] == 'user' -%}<|im_user|>{%- elif message['role'] == 'assistant' -%}<|im_assistant|>{%- else -%}<|im_system|>{%- endif -%}{{ message.get('name') or message['role'] }}<|im_middle|>{{ message['content'] }}<|im_end|>{%- endfor -%}{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}`

// writeTokenizer writes a byte-level tokenizer for the tiny model into
// dir: the 256 bytes as ids 0..255 (no merges: the tiny vocabulary of 512
// has no room), Kimi's special tokens from id 256 ([BOS] 256, [EOS] 257,
// <|im_end|> 258, ...), and the chat template above.
func writeTokenizer(t testing.TB, dir string) {
	t.Helper()
	var b bytes.Buffer
	for r := range 256 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(r)}), r)
	}
	if err := os.WriteFile(filepath.Join(dir, tokenizer.ModelFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	names := map[int]string{0: "[BOS]", 1: "[EOS]", 2: "<|im_end|>", 3: "<|im_user|>", 4: "<|im_assistant|>",
		9: "[EOT]", 10: "<|im_system|>", 17: "<|im_middle|>", 254: "[UNK]", 255: "[PAD]"}
	dec := map[string]any{}
	for off, name := range names {
		dec[strconv.Itoa(256+off)] = map[string]any{"content": name, "special": true}
	}
	cfg, _ := json.Marshal(map[string]any{"added_tokens_decoder": dec, "bos_token": "[BOS]", "eos_token": "[EOS]",
		"pad_token": "[PAD]", "unk_token": "[UNK]", "chat_template": testTemplate})
	if err := os.WriteFile(filepath.Join(dir, tokenizer.ConfigFile), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testServer is a Server on the tiny model behind httptest.
type testServer struct {
	*Server
	URL string
	m   *model.Model
	tok *tokenizer.Tokenizer
	g   tinyGolden
}

// startServer serves the tiny model (with the byte-level tokenizer when
// withTok) until the test ends.
func startServer(t testing.TB, opt Options, withTok bool) *testServer {
	t.Helper()
	return startServerWith(t, opt, withTok, func(dir string) (*model.Model, error) {
		return model.Load(dir, model.LoadOptions{Runtime: model.Runtime{Threads: 2}})
	})
}

// startServerWith is startServer with the model load gets from the tiny
// model's folder.
func startServerWith(t testing.TB, opt Options, withTok bool, load func(dir string) (*model.Model, error)) *testServer {
	t.Helper()
	g := loadTinyGolden(t)
	m, err := load(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	var tok *tokenizer.Tokenizer
	if withTok {
		writeTokenizer(t, g.dir)
		if tok, err = tokenizer.Load(g.dir); err != nil {
			t.Fatal(err)
		}
	}
	if opt.ModelName == "" {
		opt.ModelName = "tiny"
	}
	s := New(opt)
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		s.Close()
		m.Close()
	})
	return &testServer{Server: s, URL: hs.URL, m: m, tok: tok, g: g}
}

// do sends a request and returns the status and body.
func do(t testing.TB, method, url, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// completion is the part of a response the tests read.
type completion struct {
	Choices []struct {
		Text         string  `json:"text"`
		TokenIDs     []int32 `json:"token_ids"`
		FinishReason string  `json:"finish_reason"`
		Message      struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage usage `json:"usage"`
}

// complete posts a /v1/completions body and decodes the 200 answer.
func complete(t testing.TB, url string, body map[string]any) completion {
	t.Helper()
	b, _ := json.Marshal(body)
	status, out := do(t, "POST", url+"/v1/completions", string(b))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var c completion
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return c
}

// greedyIDs asks for n greedy tokens after prompt (ignoring EOS) and
// returns the ids.
func greedyIDs(t testing.TB, url string, prompt []int32, n int) []int32 {
	t.Helper()
	c := complete(t, url, map[string]any{"prompt": prompt, "max_tokens": n, "temperature": 0, "ignore_eos": true, "return_token_ids": true})
	return c.Choices[0].TokenIDs
}

// ---- tests

// TestGoldenIDs: a greedy completion of the golden prompt, given as token
// ids, returns the golden greedy ids, streamed or not.
func TestGoldenIDs(t *testing.T) {
	ts := startServer(t, Options{}, false)
	g := ts.g
	c := complete(t, ts.URL, map[string]any{"model": "tiny", "prompt": g.prompt, "max_tokens": len(g.gen), "temperature": 0, "ignore_eos": true})
	if got := c.Choices[0].TokenIDs; !slices.Equal(got, g.gen) {
		t.Errorf("ids %v; golden %v", got, g.gen)
	}
	if c.Choices[0].FinishReason != "length" || c.Usage.PromptTokens != len(g.prompt) || c.Usage.CompletionTokens != len(g.gen) {
		t.Errorf("finish %q, usage %+v", c.Choices[0].FinishReason, c.Usage)
	}
	// streamed: the same ids across the chunks, then [DONE]
	body, _ := json.Marshal(map[string]any{"prompt": g.prompt, "max_tokens": len(g.gen), "temperature": 0, "ignore_eos": true,
		"stream": true, "stream_options": map[string]any{"include_usage": true}})
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	var ids []int32
	var u *usage
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		var ch struct {
			Choices []struct {
				TokenIDs []int32 `json:"token_ids"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &ch); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for _, c := range ch.Choices {
			ids = append(ids, c.TokenIDs...)
		}
		if ch.Usage != nil {
			u = ch.Usage
		}
	}
	if !done || !slices.Equal(ids, g.gen) || u == nil || u.CompletionTokens != len(g.gen) {
		t.Errorf("stream: done %v, ids %v (golden %v), usage %+v", done, ids, g.gen, u)
	}
}

// TestTextStream: streamed text is whole characters, and no part of a stop
// string is ever sent.
func TestTextStream(t *testing.T) {
	dir := t.TempDir()
	writeTokenizer(t, dir)
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	text := "héllo wörld 👋 ok 中文 STOP here"
	for _, c := range []struct {
		stops []string
		want  string
		stop  bool
	}{
		{nil, text, false},
		{[]string{"STOP"}, "héllo wörld 👋 ok 中文 ", true},
		{[]string{"zzz", "wö"}, "héllo ", true},
		{[]string{"👋"}, "héllo wörld ", true},
		{[]string{"here!"}, text, false}, // a prefix of the stop string at the end is sent at the end
	} {
		ts := newTextStream(tok, c.stops)
		var got strings.Builder
		stopped := false
		for _, id := range tok.Encode(text, false) {
			piece, s := ts.add(id)
			if !utf8.ValidString(piece) {
				t.Errorf("%v: piece %q is not whole UTF-8", c.stops, piece)
			}
			for _, st := range c.stops {
				if strings.Contains(piece, st) {
					t.Errorf("%v: piece %q holds a stop string", c.stops, piece)
				}
			}
			got.WriteString(piece)
			if s {
				stopped = true
				break
			}
		}
		got.WriteString(ts.flush())
		if got.String() != c.want || stopped != c.stop {
			t.Errorf("stops %q: %q (stopped %v); want %q (%v)", c.stops, got.String(), stopped, c.want, c.stop)
		}
	}
}

// TestHealthModelsMetrics: /health says loading, then ok; /v1/models names
// the model; /metrics is plain text.
func TestHealthModelsMetrics(t *testing.T) {
	s := New(Options{ModelName: "tiny"})
	hs := httptest.NewServer(s)
	defer hs.Close()
	if st, b := do(t, "GET", hs.URL+"/health", ""); st != 503 || !strings.Contains(string(b), "loading") {
		t.Errorf("loading: %d %s", st, b)
	}
	resp, err := http.Post(hs.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), `"loading"`) || resp.Header.Get("Retry-After") == "" {
		t.Errorf("completion while loading: %d %s, Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	g := loadTinyGolden(t)
	m, err := model.Load(g.dir, model.LoadOptions{Runtime: model.Runtime{Threads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s.Start(m, nil)
	defer s.Close()
	if st, b := do(t, "GET", hs.URL+"/health", ""); st != 200 || !strings.Contains(string(b), `"ok"`) {
		t.Errorf("ready: %d %s", st, b)
	}
	st, b := do(t, "GET", hs.URL+"/v1/models", "")
	if st != 200 || !strings.Contains(string(b), `"id":"tiny"`) {
		t.Errorf("models: %d %s", st, b)
	}
	if st, _ := do(t, "GET", hs.URL+"/v1/models/tiny", ""); st != 200 {
		t.Errorf("models/tiny: %d", st)
	}
	greedyIDs(t, hs.URL, g.prompt, 3)
	resp, err = http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("metrics Content-Type %q", resp.Header.Get("Content-Type"))
	}
	mt := parseMetrics(t, string(b))
	if mt[`requests_total{code="200",endpoint="completions"}`] != 1 || mt["completion_tokens_total"] != 3 || mt["ready"] != 1 {
		t.Errorf("metrics:\n%s", b)
	}
}

// parseMetrics reads ktune_NAME{labels} VALUE lines.
func parseMetrics(t testing.TB, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[strings.TrimPrefix(line[:i], "ktune_")] = v
	}
	return out
}

// batchMean is the mean decode batch: the decode_batch_size histogram's
// sum over its count (0 before any decode).
func batchMean(mt map[string]float64) float64 {
	if mt["decode_batch_size_count"] == 0 {
		return 0
	}
	return mt["decode_batch_size_sum"] / mt["decode_batch_size_count"]
}

// metricsOf fetches /metrics.
func metricsOf(t testing.TB, url string) map[string]float64 {
	t.Helper()
	_, b := do(t, "GET", url+"/metrics", "")
	return parseMetrics(t, string(b))
}

// waitGoroutines waits (up to 5 s) for the goroutine count to fall to n.
func waitGoroutines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetricsHistograms: /metrics parses as Prometheus' text format, and
// after one streamed request of n tokens its histograms hold one time to
// first token, n-1 inter-token gaps, one queue time and one duration; the
// waiting/running gauges are back at 0 and ready is 1.
func TestMetricsHistograms(t *testing.T) {
	ts := startServer(t, Options{}, false)
	const n = 6
	resp := startStream(t, ts.URL, `{"prompt": [1, 2, 3], "max_tokens": 6, "ignore_eos": true, "stream": true}`)
	io.ReadAll(resp.Body)
	resp.Body.Close()
	r, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	p := expfmt.NewTextParser(prommodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	count := func(name string) uint64 {
		f := fams["ktune_"+name]
		if f == nil || len(f.Metric) != 1 || f.Metric[0].Histogram == nil {
			t.Fatalf("no histogram ktune_%s", name)
		}
		h := f.Metric[0].Histogram
		if len(h.Bucket) < 5 || math.IsNaN(h.GetSampleSum()) || h.GetSampleSum() < 0 {
			t.Errorf("ktune_%s: %d buckets, sum %v", name, len(h.Bucket), h.GetSampleSum())
		}
		return h.GetSampleCount()
	}
	for name, want := range map[string]uint64{"time_to_first_token_seconds": 1, "inter_token_latency_seconds": n - 1,
		"queue_seconds": 1, "request_duration_seconds": 1, "decode_step_seconds": n - 1, "decode_batch_size": n - 1} {
		if got := count(name); got != want {
			t.Errorf("ktune_%s: %d observations; want %d", name, got, want)
		}
	}
	gauge := func(name string) float64 {
		f := fams["ktune_"+name]
		if f == nil || len(f.Metric) != 1 || f.Metric[0].Gauge == nil {
			t.Fatalf("no gauge ktune_%s", name)
		}
		return f.Metric[0].Gauge.GetValue()
	}
	if gauge("ready") != 1 || gauge("requests_waiting") != 0 || gauge("requests_running") != 0 || gauge("slots") != float64(ts.Options().Parallel) {
		t.Errorf("gauges: ready %v, waiting %v, running %v, slots %v", gauge("ready"), gauge("requests_waiting"), gauge("requests_running"), gauge("slots"))
	}
	if fams["process_resident_memory_bytes"] == nil || fams["go_goroutines"] == nil {
		t.Error("no process or Go runtime metrics")
	}
}
