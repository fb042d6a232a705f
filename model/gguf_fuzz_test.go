package model

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/gguf"
	"github.com/ktune/ktune/internal/golden"
)

// FuzzConfigFromGGUF fuzzes the metadata a GGUF file gives the model's
// config (the layer pattern, the counts every later allocation is sized
// by): the seeds are the golden GGUF files' key/values with their small
// tensors (the KDA head count is read from one). It must refuse or accept
// without a panic, and a config it accepts must validate. Run it under a
// memory cap (ulimit -v) so that a count that allocates before it is
// checked fails: block_count 2³¹−1 once allocated 16 GiB here.
func FuzzConfigFromGGUF(f *testing.F) {
	var paths []string
	if dir, err := golden.Dir(); err == nil {
		paths, _ = filepath.Glob(filepath.Join(dir, "gguf", "*.gguf"))
	}
	for _, p := range paths[:min(2, len(paths))] {
		g, err := gguf.Open(p)
		if err != nil {
			continue
		}
		var kv []gguf.KV
		for _, k := range g.Metadata.Keys() {
			if strings.HasPrefix(k, "tokenizer.") {
				continue // large, and not the config's
			}
			v, _ := g.Metadata.Get(k)
			kv = append(kv, gguf.KV{Key: k, Value: v})
		}
		var ts []gguf.WriteTensor
		for _, ti := range g.Tensors {
			if strings.HasSuffix(ti.Name, ".ssm_a") {
				raw, err := g.TensorData(ti.Name)
				if err == nil {
					ts = append(ts, gguf.WriteTensor{Name: ti.Name, Dims: ti.Dims, Type: ti.Type, Data: raw})
				}
			}
		}
		var b bytes.Buffer
		if gguf.Write(&b, kv, ts) == nil {
			f.Add(b.Bytes())
		}
		g.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gguf.FromBytes("fuzz.gguf", data)
		if err != nil {
			return
		}
		defer g.Close()
		cfg, err := ConfigFromGGUF(g)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.gguf") {
				t.Fatalf("an error that does not name the file: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
	})
}
