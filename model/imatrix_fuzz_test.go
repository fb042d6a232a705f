package model

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/safetensors"
)

// FuzzReadImatrix fuzzes an imatrix file (a safetensors file with its
// metadata) as convert --imatrix reads it: refused with an error, or read
// into entries each with rows ≥ 1 and finite, non-negative importances. Run
// it under a memory cap (ulimit -v) so that a count that allocates before
// it is checked fails.
func FuzzReadImatrix(f *testing.F) {
	im := &Imatrix{Model: "fuzz", Digest: "0123456789abcdef", Config: "hidden_size=4", Prompts: 2, Tokens: 9,
		Entries: map[string]*ImatrixEntry{
			"lm_head.weight": {Sum: []float64{1, 2, 0, 4}, Rows: 9},
			"model.layers.0.block_sparse_moe.experts.1.w2.weight": {Sum: []float64{0.5, 3}, Rows: 1},
		}}
	path := filepath.Join(f.TempDir(), "seed.imatrix")
	if err := WriteImatrix(path, im); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := safetensors.FromBytes("fuzz.imatrix", data)
		if err != nil {
			return
		}
		defer st.Close()
		got, err := parseImatrix(st, "fuzz.imatrix")
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(got.Entries) == 0 || len(got.Digest) != 16 || got.Prompts < 0 || got.Tokens < 0 {
			t.Fatalf("accepted %+v", got)
		}
		for n, e := range got.Entries {
			if e.Rows < 1 || len(e.Sum) == 0 {
				t.Fatalf("%s: rows %d, %d channels", n, e.Rows, len(e.Sum))
			}
			for j, v := range e.Importance() {
				if !(v >= 0) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s[%d]: importance %v", n, j, v)
				}
			}
		}
	})
}
