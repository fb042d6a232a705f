package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/model"
)

// TestPerfSynthetic measures the server on a synthetic Kimi-width model
// (random weights, q4 experts, q8 elsewhere; KTUNE_SERVE_PERF_LAYERS
// layers, default 3): aggregate decode tokens/s at 1, 2, 4 and 8
// concurrent streams, and the time to first token of a 512-token prompt
// while 4 other streams decode, without and with a prefix-cache hit on a
// 2,000-token shared prefix. It runs only with KTUNE_SERVE_PERF=1 (minutes
// and gigabytes):
//
//	KTUNE_SERVE_PERF=1 go test ./model/serve -run PerfSynthetic -v -timeout 30m
func TestPerfSynthetic(t *testing.T) {
	if os.Getenv("KTUNE_SERVE_PERF") != "1" {
		t.Skip("set KTUNE_SERVE_PERF=1 to measure")
	}
	layers := 3
	if v, err := strconv.Atoi(os.Getenv("KTUNE_SERVE_PERF_LAYERS")); err == nil {
		layers = v
	}
	cfg, err := model.SyntheticConfig(layers)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Random(cfg, model.LoadOptions{Formats: model.Formats{DType: kernel.Q8, ExpertDType: kernel.Q4}, Memory: model.Memory{CacheDType: kernel.BF16, MaxSeqs: 8, MaxTokens: 4096}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(Options{ModelName: "synthetic", Parallel: 8, Ctx: 4096, PrefillChunk: 256, CacheMem: 8 << 30})
	if err := s.Start(m, nil); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer func() { hs.Close(); s.Close() }()
	t.Logf("%s, %d threads, q4 experts / q8", cfg.Source, m.Options().Threads)
	V := int32(m.Shapes.Vocab)
	prompt := func(seed, n int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = int32((seed*7919 + i*104729) % int(V))
		}
		return p
	}

	// ---- aggregate decode tokens/s at 1, 2, 4, 8 streams: the median of
	// 3 runs (after a warm-up), the machine may be shared
	const gen, runs = 32, 3
	stream(t, hs.URL, prompt(1, 8), gen, nil)
	for _, B := range []int{1, 2, 4, 8} {
		var rates, walls []float64
		for r := range runs {
			tok0, ns0 := s.met.decodeTokens.Load(), s.met.decodeNanos.Load()
			t0 := time.Now()
			var wg sync.WaitGroup
			for b := range B {
				wg.Go(func() { stream(t, hs.URL, prompt(1000*r+100*B+b, 8), gen, nil) })
			}
			wg.Wait()
			tok, ns := s.met.decodeTokens.Load()-tok0, s.met.decodeNanos.Load()-ns0
			rates = append(rates, float64(tok)/(float64(ns)/1e9))
			walls = append(walls, float64(B*gen)/time.Since(t0).Seconds())
		}
		slices.Sort(rates)
		slices.Sort(walls)
		t.Logf("decode, %d streams: %.1f tokens/s aggregate in decode steps (median of %d runs, %.1f..%.1f); %.1f tokens/s wall with the prompts",
			B, rates[runs/2], runs, rates[0], rates[runs-1], walls[runs/2])
	}

	// ---- time to first token of 512 new tokens while 4 streams decode
	ttft := func(label string, p []int32) {
		var wg sync.WaitGroup
		started := make(chan struct{}, 4)
		stop := make(chan struct{})
		for b := range 4 {
			wg.Go(func() { stream(t, hs.URL, prompt(900+b, 8), 4000, func() { started <- struct{}{} }, stop) })
		}
		for range 4 {
			<-started
		}
		tok0, ns0 := s.met.decodeTokens.Load(), s.met.decodeNanos.Load()
		t0 := time.Now()
		var first time.Duration
		c := stream(t, hs.URL, p, 1, func() { first = time.Since(t0) })
		tok, ns := s.met.decodeTokens.Load()-tok0, s.met.decodeNanos.Load()-ns0
		close(stop)
		wg.Wait()
		t.Logf("%s: time to first token %.2fs (%d prompt tokens, %d cached; the 4 others decoded %d tokens meanwhile, %.2f tokens/s in decode steps)",
			label, first.Seconds(), len(p), c, tok, float64(tok)/max(float64(ns)/1e9, 1e-9))
	}
	ttft("512-token prompt, no cache", prompt(7, 512))
	shared := prompt(11, 2000)
	stream(t, hs.URL, shared, 1, nil) // the shared prefix, cached at its end
	ttft("2,000 cached + 512 new tokens", append(shared, prompt(13, 512)...))
	ttft("2,512 tokens, no cache", append(prompt(17, 2000), prompt(13, 512)...))
}

// stream posts a streamed greedy completion of n tokens and reads it to
// the end; first runs at the first token; a close of stop (optional)
// leaves early. It returns the prompt's cached tokens.
func stream(t testing.TB, url string, prompt []int32, n int, first func(), stop ...chan struct{}) int {
	body, _ := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": n, "temperature": 0, "ignore_eos": true,
		"stream": true, "stream_options": map[string]any{"include_usage": true}})
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
		return 0
	}
	if len(stop) > 0 {
		go func() { <-stop[0]; resp.Body.Close() }()
	}
	cached := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				TokenIDs []int32 `json:"token_ids"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &ch); err != nil {
			t.Error(fmt.Errorf("%v: %s", err, line))
			return 0
		}
		if len(ch.Choices) > 0 && len(ch.Choices[0].TokenIDs) > 0 && first != nil {
			first()
			first = nil
		}
		if ch.Usage != nil && ch.Usage.PromptTokensDetails != nil {
			cached = ch.Usage.PromptTokensDetails.CachedTokens
		}
	}
	return cached
}
