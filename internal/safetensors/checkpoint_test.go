package safetensors

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// writeShard writes a file of F32 tensors, each [2] and filled with seed.
func writeShard(t *testing.T, path string, names ...string) {
	t.Helper()
	var ts []WriteTensor
	for i, n := range names {
		v := float32(i + 1)
		ts = append(ts, WriteTensor{Name: n, DType: F32, Shape: []int64{2}, Data: F32Bytes([]float32{v, -v})})
	}
	if err := Write(path, map[string]string{"format": "pt"}, ts); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const testIndex = `{
  "metadata": {"total_size": 40},
  "weight_map": {
    "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
    "model.layers.0.w": "model-00001-of-00002.safetensors",
    "model.layers.1.w": "model-00002-of-00002.safetensors",
    "lm_head.weight": "model-00002-of-00002.safetensors"
  }
}`

func shardedCheckpoint(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), "model.embed_tokens.weight", "model.layers.0.w")
	// The second shard also holds a tensor the index does not list; it stays hidden.
	writeShard(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), "lm_head.weight", "model.layers.1.w", "unlisted")
	ids := WriteTensor{Name: "ids", DType: I64, Shape: []int64{3}, Data: I64Bytes([]int64{4, 5, 6})}
	if err := Write(filepath.Join(dir, "model-00003-of-00003.safetensors"), nil, []WriteTensor{ids}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, IndexFile), testIndex)
	return dir
}

func TestCheckpointSharded(t *testing.T) {
	dir := shardedCheckpoint(t)
	c, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := []string{"lm_head.weight", "model.embed_tokens.weight", "model.layers.0.w", "model.layers.1.w"}
	if got := c.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if c.Index != filepath.Join(dir, IndexFile) || len(c.Shards()) != 2 {
		t.Errorf("Index = %q, %d shards", c.Index, len(c.Shards()))
	}
	info, f, ok := c.Info("model.layers.1.w")
	if !ok || filepath.Base(f.Path) != "model-00002-of-00002.safetensors" || info.NumElements() != 2 {
		t.Errorf("Info = %+v, %v, %v", info, f, ok)
	}
	// model.layers.1.w is the second tensor written to shard 2, so it holds {2,-2}.
	if v, err := c.Float32("model.layers.1.w"); err != nil || !slices.Equal(v, []float32{2, -2}) {
		t.Errorf("Float32 = %v, %v", v, err)
	}
	if v, err := c.Float32("model.embed_tokens.weight"); err != nil || !slices.Equal(v, []float32{1, -1}) {
		t.Errorf("Float32 = %v, %v", v, err)
	}
	dst := make([]float32, 2)
	if err := c.Float32Into("lm_head.weight", dst); err != nil || !slices.Equal(dst, []float32{1, -1}) {
		t.Errorf("Float32Into = %v, %v", dst, err)
	}
	if b, err := c.Bytes("lm_head.weight"); err != nil || len(b) != 8 {
		t.Errorf("Bytes = %v, %v", b, err)
	}
	_, err = c.Float32("unlisted")
	wantError(t, err, dir, `tensor "unlisted"`, "no such tensor in the checkpoint")
	_, err = c.Int64("model.layers.0.w")
	wantError(t, err, "model-00001-of-00002.safetensors", "not an integer type")
	if _, _, ok := c.Info("unlisted"); ok {
		t.Error(`Info("unlisted") succeeded`)
	}
}

func TestCheckpointSingle(t *testing.T) {
	// model.safetensors is preferred over other files in the folder.
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, SingleFile), "a", "b")
	writeShard(t, filepath.Join(dir, "golden.safetensors"), "x")
	c, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !slices.Equal(got, []string{"a", "b"}) || c.Index != "" {
		t.Errorf("Names() = %v, Index = %q", got, c.Index)
	}
	if v, err := c.Float32("b"); err != nil || !slices.Equal(v, []float32{2, -2}) {
		t.Errorf("Float32 = %v, %v", v, err)
	}
	c.Close()

	// Otherwise the only *.safetensors file of the folder.
	dir = t.TempDir()
	writeShard(t, filepath.Join(dir, "weights.safetensors"), "w")
	c, err = OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !slices.Equal(got, []string{"w"}) {
		t.Errorf("Names() = %v", got)
	}
	c.Close()
}

func TestCheckpointErrors(t *testing.T) {
	t.Run("several files and no index", func(t *testing.T) {
		dir := t.TempDir()
		writeShard(t, filepath.Join(dir, "a.safetensors"), "x")
		writeShard(t, filepath.Join(dir, "b.safetensors"), "y")
		_, err := OpenCheckpoint(dir)
		wantError(t, err, dir, "several *.safetensors files (a.safetensors, b.safetensors)", IndexFile)
	})
	t.Run("no files", func(t *testing.T) {
		dir := t.TempDir()
		_, err := OpenCheckpoint(dir)
		wantError(t, err, dir, "no "+IndexFile)
	})
	t.Run("missing shard", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors"))
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), `shard "model-00002-of-00002.safetensors" listed in the index is missing`)
	})
	t.Run("invalid index JSON", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		writeFile(t, filepath.Join(dir, IndexFile), `{"weight_map": {`)
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), "index is not a valid JSON object")
	})
	t.Run("index not an object", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		writeFile(t, filepath.Join(dir, IndexFile), `[1]`)
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), "index is not a valid JSON object")
	})
	t.Run("no weight_map", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		writeFile(t, filepath.Join(dir, IndexFile), `{"metadata": {}}`)
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), `index has no "weight_map"`)
	})
	t.Run("weight_map of wrong type", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		writeFile(t, filepath.Join(dir, IndexFile), `{"weight_map": {"a": 3}}`)
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), `tensor "a"`, "must be a shard file name, got number")
	})
	t.Run("shard outside the folder", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		writeFile(t, filepath.Join(dir, IndexFile), `{"weight_map": {"a": "../x.safetensors"}}`)
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), "not a file inside the checkpoint folder")
	})
	t.Run("tensor absent from its shard", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		writeFile(t, filepath.Join(dir, IndexFile), `{"weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}}`)
		_, err := OpenCheckpoint(dir)
		wantError(t, err, filepath.Join(dir, IndexFile), `tensor "lm_head.weight"`, `listed in the index for shard "model-00001-of-00002.safetensors" but absent`)
	})
	t.Run("corrupt shard", func(t *testing.T) {
		dir := shardedCheckpoint(t)
		shard := filepath.Join(dir, "model-00002-of-00002.safetensors")
		writeFile(t, shard, "garbage")
		_, err := OpenCheckpoint(dir)
		wantError(t, err, shard, "shorter than the 8-byte")
	})
}
