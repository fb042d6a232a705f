package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/reports/loadgen/loadgentest"
)

func serve(t *testing.T, s *loadgentest.Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestRunTiming plants a first-token delay and a token delay and reads
// them back: the counts exactly, the latencies within generous bounds.
func TestRunTiming(t *testing.T) {
	const (
		first = 60 * time.Millisecond
		delay = 15 * time.Millisecond
		gen   = 6
	)
	s := &loadgentest.Server{First: first, Delay: delay}
	rows, err := Run(context.Background(), Options{URL: serve(t, s) + "/v1/", Clients: []int{1, 3}, PromptTokens: 16, MaxTokens: gen,
		Warmup: true, Timeout: 5 * time.Second, Seed: 7, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	if got := len(s.Requests()); got != 1+1*DefaultRequests+3*DefaultRequests {
		t.Errorf("server saw %d requests, want 9 (warm-up, 2, 6)", got)
	}
	for _, r := range rows {
		n := r.Clients * DefaultRequests
		if r.OK != n || r.Failed != 0 || r.Tokens != n*gen || len(r.Errors) != 0 {
			t.Fatalf("c=%d: %+v", r.Clients, r)
		}
		if r.TTFTP50 < ms(first) || r.TTFTP99 < r.TTFTP50 || r.TTFTP50 > 4*ms(first)+200 {
			t.Errorf("c=%d: TTFT p50 %.1f p99 %.1f ms; planted %v", r.Clients, r.TTFTP50, r.TTFTP99, first)
		}
		if r.ITLP50 < ms(delay)/2 || r.ITLP50 > 3*ms(delay) || r.ITLP99 < r.ITLP50 {
			t.Errorf("c=%d: ITL p50 %.1f p99 %.1f ms; planted %v", r.Clients, r.ITLP50, r.ITLP99, delay)
		}
		// each client's requests run back to back: the level lasts at
		// least Requests × (first + (gen-1)·delay)
		least := time.Duration(DefaultRequests) * (first + (gen-1)*delay)
		if r.Wall < least {
			t.Errorf("c=%d: wall %v < %v", r.Clients, r.Wall, least)
		}
		upper := float64(r.Tokens) / least.Seconds()
		if r.AggTokPerSec > upper*1.001 || r.AggTokPerSec < upper/3 {
			t.Errorf("c=%d: aggregate %.1f tok/s, want at most %.1f (and not far below)", r.Clients, r.AggTokPerSec, upper)
		}
		stream := 1 / delay.Seconds()
		if r.StreamTokPerSec > stream*1.001 || r.StreamTokPerSec < stream/3 {
			t.Errorf("c=%d: per-stream %.1f tok/s, planted %.1f", r.Clients, r.StreamTokPerSec, stream)
		}
	}
	if rows[1].AggTokPerSec < 1.5*rows[0].AggTokPerSec {
		t.Errorf("3 clients give %.1f tok/s, 1 client %.1f: the fake server is not concurrent or the clients did not overlap", rows[1].AggTokPerSec, rows[0].AggTokPerSec)
	}
}

// TestRequests checks what is sent: the fields, and prompts that differ
// between requests but repeat between runs.
func TestRequests(t *testing.T) {
	run := func() []loadgentest.Request {
		s := &loadgentest.Server{}
		_, err := Run(context.Background(), Options{URL: serve(t, s), Clients: []int{1, 2}, PromptTokens: 32, MaxTokens: 3,
			Requests: 2, APIKey: "k3y", Seed: 42, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return s.Requests()
	}
	a, b := run(), run()
	if len(a) != 6 || len(b) != 6 {
		t.Fatalf("%d and %d requests, want 6", len(a), len(b))
	}
	seen := map[string]bool{}
	for _, r := range a {
		if r.Model != "" || !r.Stream || r.StreamOptions == nil || !r.StreamOptions.IncludeUsage || r.Temperature == nil || *r.Temperature != 0 ||
			!r.IgnoreEOS || !r.ReturnTokenIDs || r.Seed == nil || *r.Seed < 0 || *r.Seed >= 1<<31 || r.MaxTokens != 3 || r.Auth != "Bearer k3y" {
			t.Errorf("request %+v", r)
		}
		if len(r.Prompt) != 32 {
			t.Errorf("prompt of %d ids, want 32", len(r.Prompt))
		}
		for _, id := range r.Prompt {
			if id < 100 || id > 1099 {
				t.Fatalf("prompt id %d outside 100..1099", id)
			}
		}
		k := fmt.Sprint(r.Prompt)
		if seen[k] {
			t.Errorf("prompt repeated: %v", r.Prompt)
		}
		seen[k] = true
	}
	// the same prompts in both runs (the order within a level may differ)
	key := func(rs []loadgentest.Request) []string {
		var ks []string
		for _, r := range rs {
			ks = append(ks, fmt.Sprint(r.Prompt))
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(key(a), key(b)) {
		t.Error("two runs with the same options sent different prompts")
	}
	if slices.Equal(Prompt(1, 1, 0, 0, 8, DefaultIDs), Prompt(2, 1, 0, 0, 8, DefaultIDs)) || slices.Equal(Prompt(1, 1, 0, 0, 8, DefaultIDs), Prompt(1, 2, 0, 0, 8, DefaultIDs)) {
		t.Error("prompts do not depend on the seed or the level")
	}
	for _, id := range Prompt(1, 1, 0, 0, 256, IDRange{Lo: 3, Hi: 5}) {
		if id < 3 || id > 5 {
			t.Fatalf("prompt id %d outside the range 3..5 asked for", id)
		}
	}
	if err := (&Options{URL: "http://h:1", Clients: []int{1}, PromptTokens: 1, MaxTokens: 1, IDs: IDRange{Lo: 9, Hi: 2}}).check(); err == nil {
		t.Error("ids 9..2 accepted")
	}
	// a shorter prompt is not the start of a longer one (of another run's
	// shape): a prefix cache would answer it
	if long := Prompt(1, 1, 0, 0, 64, DefaultIDs); slices.Equal(Prompt(1, 1, 0, 0, 8, DefaultIDs), long[:8]) {
		t.Error("the 8-id prompt is the 64-id prompt's prefix")
	}
}

// TestFailures: every way a request fails is counted as failed with its
// message, and nothing hangs.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *loadgentest.Server
		want string
	}{
		{"status 503", &loadgentest.Server{Status: http.StatusServiceUnavailable}, "HTTP 503: fake status 503"},
		{"cut", &loadgentest.Server{CutAfter: 2, Delay: time.Millisecond}, "after 2 tokens"},
		{"error event", &loadgentest.Server{ErrorAfter: 1}, "fake error mid-stream"},
		{"no [DONE]", &loadgentest.Server{NoDone: true}, "stream ended before [DONE] after 4 tokens"},
		{"short", &loadgentest.Server{Tokens: 2}, "short stream: 2 of 4 tokens"},
		{"short, no usage", &loadgentest.Server{Tokens: 3, NoUsage: true}, "short stream: 3 of 4 tokens"},
		{"stall", &loadgentest.Server{Stall: true}, "timed out after 150ms with 1 of 4 tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			rows, err := Run(context.Background(), Options{URL: serve(t, tc.s), Clients: []int{2}, PromptTokens: 4, MaxTokens: 4,
				Requests: 1, Timeout: 150 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(t0); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			r := rows[0]
			if r.OK != 0 || r.Failed != 2 || r.Tokens != 0 || len(r.Errors) != 2 {
				t.Fatalf("%+v", r)
			}
			if !strings.Contains(r.Errors[0], tc.want) {
				t.Errorf("error %q, want %q in it", r.Errors[0], tc.want)
			}
			for _, v := range []float64{r.AggTokPerSec, r.StreamTokPerSec, r.TTFTP50, r.TTFTP99, r.ITLP50, r.ITLP99} {
				if !math.IsNaN(v) {
					t.Errorf("a level with no success reports %v, want NaN: %+v", v, r)
				}
			}
		})
	}
}

// TestWarmupAndCancel: a failed warm-up fails Run with the status; a
// cancelled context stops a stalled level at once.
func TestWarmupAndCancel(t *testing.T) {
	_, err := Run(context.Background(), Options{URL: serve(t, &loadgentest.Server{Status: 401}), Clients: []int{1}, PromptTokens: 4, MaxTokens: 4, Warmup: true})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 401 || !strings.Contains(err.Error(), "warm-up") {
		t.Errorf("warm-up against a 401: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	rows, err := Run(ctx, Options{URL: serve(t, &loadgentest.Server{Stall: true}), Clients: []int{1, 2}, PromptTokens: 4, MaxTokens: 4, Timeout: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) || len(rows) != 0 {
		t.Errorf("cancelled run: %v, %d rows", err, len(rows))
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}

	// an unreachable server: every request fails, Probe says so
	ts := httptest.NewServer(http.NotFoundHandler())
	dead := ts.URL
	ts.Close()
	rows, err = Run(context.Background(), Options{URL: dead, Clients: []int{1}, PromptTokens: 4, MaxTokens: 4, Requests: 1})
	if err != nil || rows[0].Failed != 1 || len(rows[0].Errors) != 1 {
		t.Errorf("dead server: %v %+v", err, rows)
	}
	if _, err := Probe(context.Background(), Options{URL: dead}, time.Second); err == nil {
		t.Error("Probe of a closed server: no error")
	}
	if m, err := Probe(context.Background(), Options{URL: serve(t, &loadgentest.Server{Model: "kimi"})}, time.Second); m != "kimi" || err != nil {
		t.Errorf("Probe: %q, %v", m, err)
	}

	for _, o := range []Options{{URL: "localhost:8080", Clients: []int{1}, PromptTokens: 1, MaxTokens: 1},
		{URL: "http://x", Clients: []int{0}, PromptTokens: 1, MaxTokens: 1}, {URL: "http://x", PromptTokens: 1, MaxTokens: 1},
		{URL: "http://x", Clients: []int{1}, MaxTokens: 1}} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestTokenIDs: chunks of several tokens count each token, and their gap
// is shared among them.
func TestTokenIDs(t *testing.T) {
	s := &loadgentest.Server{PerChunk: 3, NoUsage: true, Delay: 30 * time.Millisecond}
	rows, err := Run(context.Background(), Options{URL: serve(t, s), Clients: []int{1}, PromptTokens: 4, MaxTokens: 9, Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.OK != 1 || r.Tokens != 9 {
		t.Fatalf("%+v", r)
	}
	if r.ITLP50 < 5 || r.ITLP50 > 20 { // 30 ms over 3 tokens
		t.Errorf("ITL p50 %.1f ms, want about 10", r.ITLP50)
	}
}

func TestPercentile(t *testing.T) {
	var xs []float64
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	for _, tc := range []struct{ p, want float64 }{{99, 99}, {50, 50}, {100, 100}, {0, 1}, {1, 1}, {99.5, 100}, {0.5, 1}} {
		if got := Percentile(xs, tc.p); got != tc.want {
			t.Errorf("p%v of 1..100: %v, want %v", tc.p, got, tc.want)
		}
	}
	if xs[0] != 100 {
		t.Error("Percentile sorted its input")
	}
	nan := math.NaN()
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 50, nan}, {[]float64{nan, nan}, 99, nan}, {[]float64{3, nan, 1, 2}, 50, 2}, {[]float64{3, nan, 1, 2}, 99, 3},
		{[]float64{5}, 99, 5}, {[]float64{5}, 0, 5}, {[]float64{1, 2}, -1, nan}, {[]float64{1, 2}, 101, nan}, {[]float64{1, 2}, nan, nan},
		{[]float64{10, 20}, 50, 10},
	} {
		if got := Percentile(tc.xs, tc.p); !same(got, tc.want) {
			t.Errorf("p%v of %v: %v, want %v", tc.p, tc.xs, got, tc.want)
		}
	}
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, nan}, {[]float64{nan}, nan}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, nan, 2, 3}, 2.5}} {
		if got := Median(tc.xs); !same(got, tc.want) {
			t.Errorf("median of %v: %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{"http://h:1": "http://h:1", "http://h:1/": "http://h:1", "http://h:1/v1": "http://h:1",
		"http://h:1/v1/": "http://h:1", "http://h:1/api/v1": "http://h:1/api"} {
		if got := BaseURL(in); got != want {
			t.Errorf("BaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}
