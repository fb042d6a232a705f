package safetensors_test

import (
	"encoding/binary"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/safetensors"
)

// TestGoldenFiles reads every tensor of every *.safetensors file under the
// golden folder, and opens the tiny model's folder as a checkpoint.
func TestGoldenFiles(t *testing.T) {
	dir, err := golden.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".safetensors") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no *.safetensors files under %s", dir)
	}
	for _, path := range paths {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			f, err := safetensors.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(f.Names()) == 0 {
				t.Fatal("no tensors")
			}
			for _, name := range f.Names() {
				checkTensor(t, f, name)
			}
		})
	}

	found := 0
	for _, path := range paths {
		f, err := safetensors.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		kind := f.Metadata()["kind"]
		f.Close()
		if kind != golden.TinyModel {
			continue
		}
		found++
		c, err := safetensors.OpenCheckpoint(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		names := c.Names()
		dtypes := map[safetensors.DType]int{}
		for _, name := range names {
			info, shard, ok := c.Info(name)
			if !ok || shard == nil {
				t.Fatalf("Info(%q) failed", name)
			}
			dtypes[info.DType]++
			v, err := c.Float32(name)
			if err != nil || int64(len(v)) != info.NumElements() {
				t.Fatalf("Float32(%q): %d values, %v", name, len(v), err)
			}
		}
		for _, name := range []string{"model.embed_tokens.weight", "lm_head.weight", "model.norm.weight"} {
			if _, _, ok := c.Info(name); !ok {
				t.Errorf("checkpoint %s has no %s", c.Dir, name)
			}
		}
		t.Logf("checkpoint %s: %d tensors, dtypes %v", c.Dir, len(names), dtypes)
	}
	if found == 0 {
		t.Errorf("no %s golden file under %s", golden.TinyModel, dir)
	}
}

// checkTensor reads one tensor through Bytes and the converting accessors and
// cross-checks the results.
func checkTensor(t *testing.T, f *safetensors.File, name string) {
	t.Helper()
	info, _ := f.Info(name)
	b, err := f.Bytes(name)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != info.ByteSize() || info.ByteSize() != info.NumElements()*int64(info.DType.Size()) {
		t.Fatalf("%s: %d bytes for %v of %s", name, len(b), info.Shape, info.DType)
	}
	switch {
	case info.DType.IsFloat():
		v, err := f.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range v {
			var want float32
			switch info.DType {
			case safetensors.F32:
				want = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			case safetensors.BF16:
				want = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
			case safetensors.F16:
				want = safetensors.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
			}
			if math.Float32bits(x) != math.Float32bits(want) {
				t.Fatalf("%s[%d] = %v, want %v", name, i, x, want)
			}
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%s[%d] = %v is not finite", name, i, x)
			}
		}
	case info.DType.IsInt():
		v, err := f.Int64(name)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(v)) != info.NumElements() {
			t.Fatalf("%s: %d values, want %d", name, len(v), info.NumElements())
		}
	}
}
