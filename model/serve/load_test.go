package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad: 200 requests (48 with -short) from 16 concurrent clients on
// loopback, streamed and not, every 7th client leaving after its first
// chunk: every completed request returns the tokens it returns alone, no
// goroutine is left behind, and /metrics adds up.
func TestLoad(t *testing.T) {
	total, clients := 200, 16
	if testing.Short() {
		total = 48
	}
	const n = 10 // tokens per request
	ts := startServer(t, Options{Parallel: 4, Queue: 64, PrefillChunk: 32}, false)
	var ps [][]int32 // 24 prompts: 8 bases, each with 3 endings
	for _, p := range prompts(ts.g, 8) {
		for e := range int32(3) {
			ps = append(ps, append(slices.Clone(p), 100+e, 200+e))
		}
	}
	want := make([][]int32, len(ps))
	for i, p := range ps {
		want[i] = greedyIDs(t, ts.URL, p, n)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	before := runtime.NumGoroutine()
	t0 := time.Now()

	var next, left, ok atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total || t.Failed() {
					return
				}
				p, stream, leave := i%len(ps), i%2 == 0, i%7 == 3
				body, _ := json.Marshal(map[string]any{"prompt": ps[p], "max_tokens": n, "temperature": 0,
					"ignore_eos": true, "stream": stream || leave})
				resp, err := client.Post(ts.URL+"/v1/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				if resp.StatusCode != 200 {
					t.Errorf("request %d: status %d", i, resp.StatusCode)
					resp.Body.Close()
					return
				}
				var ids []int32
				var err2 error
				switch {
				case leave:
					bufio.NewReader(resp.Body).ReadString('\n')
					resp.Body.Close()
					left.Add(1)
					continue
				case stream:
					ids, err2 = readStreamIDs(resp)
				default:
					var c completion
					err2 = json.NewDecoder(resp.Body).Decode(&c)
					if err2 == nil {
						ids = c.Choices[0].TokenIDs
					}
				}
				resp.Body.Close()
				if err2 != nil {
					t.Errorf("request %d: %v", i, err2)
					return
				}
				if !slices.Equal(ids, want[p]) {
					t.Errorf("request %d (prompt %d, stream %v): %v; alone %v", i, p, stream, ids, want[p])
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	tr.CloseIdleConnections()
	t.Logf("%d requests (%d left early) from %d clients in %.2fs", total, left.Load(), clients, took.Seconds())

	// every sequence ended; the counts add up. A handler counts its answer
	// after its sequence has left the scheduler (a client that left: 499),
	// so requests_running reaches 0 a moment before the last count.
	waitMetric(t, ts.URL, "requests_running", 0)
	all := float64(total + len(ps))
	var mt map[string]float64
	var answered float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mt = metricsOf(t, ts.URL)
		answered = mt[`requests_total{code="200",endpoint="completions"}`] + mt[`requests_total{code="499",endpoint="completions"}`]
		if answered == all || time.Now().After(deadline) {
			break
		}
	}
	if answered != all {
		t.Errorf("requests_total %v; sent %v", answered, all)
	}
	if got := mt["requests_truncated_total"] + mt["requests_cancelled_total"]; got != all {
		t.Errorf("finished %v + cancelled %v sequences; sent %v", mt["requests_truncated_total"], mt["requests_cancelled_total"], all)
	}
	if mt["completion_tokens_total"] != n*mt["requests_truncated_total"] {
		t.Errorf("completion_tokens_total %v; want %d per finished request (%v)", mt["completion_tokens_total"], n, mt["requests_truncated_total"])
	}
	if mt["requests_waiting"] != 0 || mt["state_bytes"] != 0 || mt["requests_failed_total"] != 0 {
		t.Errorf("after the load: %v waiting, %v state bytes, %v failed", mt["requests_waiting"], mt["state_bytes"], mt["requests_failed_total"])
	}
	if mt["prompt_tokens_cached_total"] == 0 || batchMean(mt) <= 1 {
		t.Errorf("no prefix-cache hit (%v) or no batching (mean batch %v) under load", mt["prompt_tokens_cached_total"], batchMean(mt))
	}
	waitGoroutines(t, before)
}

// readStreamIDs reads a streamed completion's token ids up to [DONE].
func readStreamIDs(resp *http.Response) ([]int32, error) {
	var ids []int32
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			return ids, nil
		}
		var ch struct {
			Choices []struct {
				TokenIDs []int32 `json:"token_ids"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &ch); err != nil {
			return nil, fmt.Errorf("%v: %s", err, line)
		}
		for _, c := range ch.Choices {
			ids = append(ids, c.TokenIDs...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the stream ended without [DONE]")
}
