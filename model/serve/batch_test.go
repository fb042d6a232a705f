package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// prompts returns n different prompts of different lengths: the golden
// prompt's ids, shifted and repeated.
func prompts(g tinyGolden, n int) [][]int32 {
	out := make([][]int32, n)
	for i := range out {
		L := 5 + 7*i
		for k := range L {
			out[i] = append(out[i], (g.prompt[k%len(g.prompt)]+int32(31*i+k/len(g.prompt)))%int32(g.vocab))
		}
	}
	return out
}

// TestBatchingExact: 8 concurrent greedy streams with different prompts
// (prefills cut into chunks and interleaved with the others' decodes, all
// decoding as one batch) return the tokens each returns alone.
func TestBatchingExact(t *testing.T) {
	ts := startServer(t, Options{Parallel: 8, PrefillChunk: 16, CacheMem: -1}, false)
	ps := prompts(ts.g, 8)
	const n = 12
	alone := make([][]int32, len(ps))
	for i, p := range ps {
		alone[i] = greedyIDs(t, ts.URL, p, n)
	}
	together := make([][]int32, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() { together[i] = greedyIDs(t, ts.URL, p, n) })
	}
	wg.Wait()
	for i := range ps {
		if !slices.Equal(alone[i], together[i]) {
			t.Errorf("prompt %d (%d tokens): alone %v, batched %v", i, len(ps[i]), alone[i], together[i])
		}
	}
	if mt := metricsOf(t, ts.URL); batchMean(mt) <= 1 {
		t.Errorf("mean decode batch %v: the concurrent requests never decoded together", batchMean(mt))
	}
}

// TestPrefixCache: a prompt that extends a cached one, a repeated prompt,
// and a prompt sharing a chunk-aligned snapshot start from the cache
// (usage says how many tokens) and give the tokens a server without a
// cache gives.
func TestPrefixCache(t *testing.T) {
	opt := Options{PrefillChunk: 16, SnapshotEvery: 16}
	ts := startServer(t, opt, false)
	opt.CacheMem = -1
	ref := startServer(t, opt, false)
	base := prompts(ts.g, 8)[7] // 54 tokens
	longer := append(slices.Clone(base), 7, 8, 9, 10, 11)
	other := append(slices.Clone(base[:40]), 1, 2, 3) // shares snapshots at 16 and 32
	for _, c := range []struct {
		name   string
		prompt []int32
		cached int
	}{
		{"first", base, 0},
		{"extends", longer, len(base)},
		{"repeat", longer, len(longer)},
		{"shares a chunk", other, 32},
		// the snapshot at 32 has no logits to sample from: the whole
		// prompt must not come from it (that waited forever), 16 do
		{"equals a mid-prompt snapshot", base[:32], 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"prompt": c.prompt, "max_tokens": 10, "temperature": 0, "ignore_eos": true}
			got, want := completeWithin(t, ts.URL, body, time.Minute), complete(t, ref.URL, body)
			if got.Usage.PromptTokensDetails == nil || got.Usage.PromptTokensDetails.CachedTokens != c.cached {
				t.Errorf("usage %+v; want %d cached tokens", got.Usage, c.cached)
			}
			if !slices.Equal(got.Choices[0].TokenIDs, want.Choices[0].TokenIDs) {
				t.Errorf("with the cache %v; without %v", got.Choices[0].TokenIDs, want.Choices[0].TokenIDs)
			}
		})
	}
	mt := metricsOf(t, ts.URL)
	if mt["prefix_cache_hits_total"] != 4 || mt["prefix_cache_hit_tokens_total"] != float64(len(base)+len(longer)+32+16) {
		t.Errorf("metrics: %v hits, %v hit tokens", mt["prefix_cache_hits_total"], mt["prefix_cache_hit_tokens_total"])
	}
}

// TestPrefixCacheBudget: the cache keeps within its budget, evicting the
// least recently used snapshots.
func TestPrefixCacheBudget(t *testing.T) {
	ts := startServer(t, Options{CacheMem: 1}, false) // too small for any snapshot
	ps := prompts(ts.g, 3)
	for _, p := range ps {
		greedyIDs(t, ts.URL, p, 2)
	}
	if mt := metricsOf(t, ts.URL); mt["prefix_cache_entries"] != 0 || mt["prefix_cache_bytes"] != 0 {
		t.Errorf("a 1-byte cache holds %v entries, %v bytes", mt["prefix_cache_entries"], mt["prefix_cache_bytes"])
	}
	// room for about two states: the third evicts the first
	st := ts.m.NewState(0)
	if _, err := ts.m.Prefill(st, ps[2]); err != nil {
		t.Fatal(err)
	}
	one := st.Bytes() + 4*int64(ts.m.Shapes.Vocab+64)
	st.Close()
	ts2 := startServer(t, Options{CacheMem: 5 * one / 2, SnapshotEvery: -1}, false)
	for i, p := range ps {
		greedyIDs(t, ts2.URL, p, 1)
		mt := metricsOf(t, ts2.URL)
		if mt["prefix_cache_bytes"] > float64(5*one/2) {
			t.Errorf("after %d requests the cache holds %v bytes, over its budget %d", i+1, mt["prefix_cache_bytes"], 5*one/2)
		}
	}
	mt := metricsOf(t, ts2.URL)
	if mt["prefix_cache_evictions_total"] == 0 {
		t.Errorf("no eviction: %v entries, %v bytes", mt["prefix_cache_entries"], mt["prefix_cache_bytes"])
	}
	// the first prompt was evicted: asking it again misses
	c := complete(t, ts2.URL, map[string]any{"prompt": ps[0], "max_tokens": 1})
	if c.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("the least recently used prompt was not evicted: %+v", c.Usage)
	}
}

// completeWithin is complete with a deadline: a request that hangs fails.
func completeWithin(t testing.TB, url string, body map[string]any, d time.Duration) completion {
	t.Helper()
	b, _ := json.Marshal(body)
	c := &http.Client{Timeout: d}
	resp, err := c.Post(url+"/v1/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("no answer within %v: %v", d, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	var cp completion
	if err := json.Unmarshal(out, &cp); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return cp
}
