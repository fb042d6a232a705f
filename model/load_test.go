package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/safetensors"
	"github.com/ktune/ktune/kernels/mla"
)

// readTensors returns every tensor of the checkpoint in dir (copied) and
// its config.json.
func readTensors(t *testing.T, dir string) ([]safetensors.WriteTensor, []byte) {
	t.Helper()
	ck, err := safetensors.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	var out []safetensors.WriteTensor
	for _, name := range ck.Names() {
		info, _, _ := ck.Info(name)
		b, err := ck.Bytes(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, safetensors.WriteTensor{Name: name, DType: info.DType, Shape: slices.Clone(info.Shape), Data: slices.Clone(b)})
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return out, cfg
}

// writeCheckpoint writes config and tensors into a new folder, split into
// shards (with an index) when shards > 1.
func writeCheckpoint(t *testing.T, cfg []byte, ts []safetensors.WriteTensor, shards int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if shards <= 1 {
		if err := safetensors.Write(filepath.Join(dir, safetensors.SingleFile), nil, ts); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	weightMap := map[string]string{}
	for s := 0; s < shards; s++ {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, shards)
		part := ts[s*len(ts)/shards : (s+1)*len(ts)/shards]
		for _, x := range part {
			weightMap[x.Name] = name
		}
		if err := safetensors.Write(filepath.Join(dir, name), nil, part); err != nil {
			t.Fatal(err)
		}
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": weightMap})
	if err := os.WriteFile(filepath.Join(dir, safetensors.IndexFile), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func tinyDir(t *testing.T) string {
	t.Helper()
	return golden.Load(t, golden.TinyModel)[0].Dir()
}

// wantLoadError loads dir and checks that the error mentions every part.
func wantLoadError(t *testing.T, dir string, parts ...string) {
	t.Helper()
	m, err := Load(dir, LoadOptions{})
	if err == nil {
		m.Close()
		t.Fatalf("Load succeeded; want an error mentioning %q", parts)
	}
	t.Logf("error: %v", err)
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not mention %q", p)
		}
	}
}

func drop(ts []safetensors.WriteTensor, names ...string) []safetensors.WriteTensor {
	return slices.DeleteFunc(slices.Clone(ts), func(x safetensors.WriteTensor) bool { return slices.Contains(names, x.Name) })
}

// a few tensor names every Kimi Linear checkpoint has
const (
	embedName = "model.embed_tokens.weight"
	normName  = "model.norm.weight"
	headName  = "lm_head.weight"
	layer0In  = "model.layers.0.input_layernorm.weight"
)

func TestShardedCheckpoint(t *testing.T) {
	src := tinyDir(t)
	ts, cfg := readTensors(t, src)
	ids := []int32{1, 2, 3, 4, 5}
	var want []float32
	for _, dir := range []string{src, writeCheckpoint(t, cfg, ts, 3)} {
		m := mustLoad(t, dir, LoadOptions{})
		got, err := m.PrefillWith(m.NewState(0), ids, PrefillOptions{AllLogits: true})
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
			continue
		}
		golden.Check(t, "sharded vs original", got, want, 0)
	}
}

func TestBrokenCheckpoints(t *testing.T) {
	src := tinyDir(t)
	ts, cfg := readTensors(t, src)
	names := []string{}
	for _, x := range ts {
		names = append(names, x.Name)
	}
	// a tensor of some layer's mixer and some expert, whatever the layer mix
	var mixer, ffn string
	for _, n := range names {
		if mixer == "" && strings.Contains(n, ".self_attn.q_proj.weight") {
			mixer = n
		}
		if ffn == "" && (strings.Contains(n, ".experts.") || strings.Contains(n, ".mlp.down_proj")) {
			ffn = n
		}
	}

	t.Run("missing tensors", func(t *testing.T) {
		dir := writeCheckpoint(t, cfg, drop(ts, mixer, ffn), 1)
		wantLoadError(t, dir, dir, "2 missing tensors", mixer, ffn)
	})
	t.Run("wrong shape", func(t *testing.T) {
		bad := slices.Clone(ts)
		for i, x := range bad {
			if x.Name == normName { // same bytes, another shape
				n := x.Shape[0]
				bad[i].Shape = []int64{n / 2, 2}
			}
		}
		dir := writeCheckpoint(t, cfg, bad, 1)
		wantLoadError(t, dir, "1 mis-shaped tensors", normName, "model.safetensors", "config.json")
	})
	t.Run("extra tensor", func(t *testing.T) {
		extra := append(slices.Clone(ts), safetensors.WriteTensor{Name: "model.layers.0.self_attn.rotary_emb.inv_freq",
			DType: safetensors.F32, Shape: []int64{2}, Data: make([]byte, 8)})
		dir := writeCheckpoint(t, cfg, extra, 1)
		wantLoadError(t, dir, "1 extra tensors", "rotary_emb.inv_freq")
	})
	t.Run("integer tensor", func(t *testing.T) {
		bad := slices.Clone(ts)
		for i, x := range bad {
			if x.Name == layer0In && x.DType == safetensors.F32 || x.Name == layer0In && x.DType.Size() == 2 {
				bad[i].DType = safetensors.I32
				bad[i].Data = make([]byte, 4*x.Shape[0])
			}
		}
		dir := writeCheckpoint(t, cfg, bad, 1)
		wantLoadError(t, dir, layer0In, "non-float")
	})
	t.Run("truncated shard", func(t *testing.T) {
		dir := writeCheckpoint(t, cfg, ts, 2)
		shard := filepath.Join(dir, "model-00002-of-00002.safetensors")
		st, err := os.Stat(shard)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(shard, st.Size()-100); err != nil {
			t.Fatal(err)
		}
		wantLoadError(t, dir, shard)
	})
	t.Run("index names a missing shard", func(t *testing.T) {
		dir := writeCheckpoint(t, cfg, ts, 2)
		if err := os.Remove(filepath.Join(dir, "model-00001-of-00002.safetensors")); err != nil {
			t.Fatal(err)
		}
		wantLoadError(t, dir, "model-00001-of-00002.safetensors", "missing")
	})
	t.Run("config does not match the tensors", func(t *testing.T) {
		var c map[string]any
		if err := json.Unmarshal(cfg, &c); err != nil {
			t.Fatal(err)
		}
		c["hidden_size"] = c["hidden_size"].(float64) * 2
		bad, _ := json.Marshal(c)
		dir := writeCheckpoint(t, bad, ts, 1)
		wantLoadError(t, dir, "does not match", filepath.Join(dir, "config.json"), embedName, "mis-shaped", "does "+filepath.Join(dir, "config.json")+" describe this checkpoint")
	})
	t.Run("no config", func(t *testing.T) {
		dir := writeCheckpoint(t, cfg, ts, 1)
		os.Remove(filepath.Join(dir, "config.json"))
		wantLoadError(t, dir, "config.json")
	})
}

func TestMemoryRefusal(t *testing.T) {
	dir := tinyDir(t)
	m := mustLoad(t, dir, LoadOptions{})
	r := m.Memory()
	if r.WeightsMapped != int64(len(m.Embed.Data)) || r.WeightsHeap <= 0 || r.KDAStatePerSeq < m.Cfg.KDAStateBytesPerSeq() || r.MLACachePerToken <= 0 {
		t.Errorf("report %+v", r)
	}
	// the estimate made before loading is what loading found
	for _, opt := range []LoadOptions{{}, {Formats: Formats{DType: kernel.Q4, AttnDType: kernel.Q8, GateDType: kernel.BF16}}} {
		mm := mustLoad(t, dir, opt)
		rr := mm.Memory()
		est, err := EstimateMemory(mm.Cfg, opt, mm.Embed.DType.Size())
		if err != nil {
			t.Fatal(err)
		}
		if est.WeightsHeap != rr.WeightsHeap || est.WeightsMapped != rr.WeightsMapped {
			t.Errorf("%+v: estimate heap %d mapped %d, loaded heap %d mapped %d", opt, est.WeightsHeap, est.WeightsMapped, rr.WeightsHeap, rr.WeightsMapped)
		}
	}
	st := m.NewState(0)
	if got := st.Bytes(); got != r.KDAStatePerSeq {
		t.Errorf("fresh state holds %d bytes, want the KDA state %d", got, r.KDAStatePerSeq)
	}
	_, err := Load(dir, LoadOptions{Memory: Memory{AvailableMemory: r.WeightsHeap / 2}})
	if err == nil || !strings.Contains(err.Error(), "available") {
		t.Errorf("Load with half the memory: err = %v, want a refusal", err)
	}
	t.Logf("refusal: %v", err)
	// caches count: many long sequences do not fit either
	_, err = Load(dir, LoadOptions{Memory: Memory{AvailableMemory: 2 * r.WeightsHeap, MaxSeqs: 64, MaxTokens: 1 << 20}})
	if err == nil {
		t.Errorf("Load budgeting 64 sequences of 1M tokens in %d bytes succeeded", 2*r.WeightsHeap)
	}
}

func TestBadInput(t *testing.T) {
	m := mustLoad(t, tinyDir(t), LoadOptions{})
	V := int32(m.Shapes.Vocab)
	st := m.NewState(4)
	for _, c := range []struct {
		name string
		err  func() error
	}{
		{"no tokens", func() error { _, err := m.Prefill(st, nil); return err }},
		{"id out of range", func() error { _, err := m.Prefill(st, []int32{1, V}); return err }},
		{"negative id", func() error { _, err := m.Decode([]*State{st}, []int32{-1}); return err }},
		{"state full", func() error { _, err := m.Prefill(st, []int32{1, 2, 3, 4, 5}); return err }},
		{"state twice", func() error { _, err := m.Decode([]*State{st, st}, []int32{1, 2}); return err }},
		{"count mismatch", func() error { _, err := m.Decode([]*State{st}, []int32{1, 2}); return err }},
		{"nil state", func() error { _, err := m.Decode([]*State{nil}, []int32{1}); return err }},
		{"foreign state", func() error {
			other := mustLoad(t, tinyDir(t), LoadOptions{})
			_, err := m.Decode([]*State{other.NewState(0)}, []int32{1})
			return err
		}},
		{"closed model", func() error {
			other := mustLoad(t, tinyDir(t), LoadOptions{})
			st := other.NewState(0)
			other.Close()
			_, err := other.Prefill(st, []int32{1})
			return err
		}},
		{"bad dtype", func() error { _, err := Load(tinyDir(t), LoadOptions{Formats: Formats{DType: "q7"}}); return err }},
	} {
		err := c.err()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
	if st.Len() != 0 {
		t.Errorf("rejected calls changed the state: %d tokens", st.Len())
	}
}

// TestTiedEmbeddings: with tie_word_embeddings the checkpoint has no
// lm_head and the logits use the embedding table.
func TestTiedEmbeddings(t *testing.T) {
	src := tinyDir(t)
	ts, cfg := readTensors(t, src)
	var c map[string]any
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	c["tie_word_embeddings"] = true
	tied, _ := json.Marshal(c)
	// lm_head := the embedding table, so untied and tied models agree
	var embed safetensors.WriteTensor
	for _, x := range ts {
		if x.Name == embedName {
			embed = x
		}
	}
	untied := drop(ts, headName)
	head := embed
	head.Name = headName
	untied = append(untied, head)
	ids := []int32{5, 4, 3}
	var want []float32
	for _, dir := range []string{writeCheckpoint(t, cfg, untied, 1), writeCheckpoint(t, tied, drop(ts, headName), 1)} {
		m := mustLoad(t, dir, LoadOptions{})
		got, err := m.Prefill(m.NewState(0), ids)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
			continue
		}
		golden.Check(t, "tied vs lm_head = embedding", got, want, 0)
	}
	// a tied config with an lm_head in the checkpoint: an extra tensor
	wantLoadError(t, writeCheckpoint(t, tied, ts, 1), "1 extra tensors", headName)
}

// TestCacheEstimate: the memory estimate's MLA cache per token is what a
// state's caches allocate: after a prompt filling part of a second page,
// the state holds the KDA state plus two pages' tokens ×
// MLACachePerToken, for every cache dtype.
func TestCacheEstimate(t *testing.T) {
	dir := tinyDir(t)
	for _, dt := range []kernel.DType{kernel.F32, kernel.BF16, kernel.Q8} {
		m := mustLoad(t, dir, LoadOptions{Memory: Memory{CacheDType: dt}})
		r := m.Memory()
		st := m.NewState(0)
		ids := make([]int32, mla.DefaultPageTokens+1)
		for i := range ids {
			ids[i] = int32(1 + i%(m.Shapes.Vocab-1))
		}
		if _, err := m.Prefill(st, ids); err != nil {
			t.Fatal(err)
		}
		want := r.KDAStatePerSeq + 2*mla.DefaultPageTokens*r.MLACachePerToken
		if got := st.Bytes(); got != want {
			t.Errorf("cache %s: state holds %d bytes after %d tokens, the estimate says %d", dt, got, len(ids), want)
		}
		st.Free()
	}
}
