package arch

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// goldenDir returns $KTUNE_GOLDEN, or ../shared/golden next to the module
// root (the folder with go.mod, found by walking up from the working
// directory).
func goldenDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KTUNE_GOLDEN"); dir != "" {
		return dir
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "golden")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// goldenConfigs returns every config.json under the golden folder.
func goldenConfigs(t *testing.T) []string {
	t.Helper()
	root := goldenDir(t)
	if root == "" {
		return nil
	}
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "config.json" {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("walk %s: %v", root, err)
	}
	return paths
}

// TestGoldenConfigs loads every golden config.json and checks TensorNames
// against the tensors of the checkpoint beside it, name by name and shape by
// shape.
func TestGoldenConfigs(t *testing.T) {
	paths := goldenConfigs(t)
	if len(paths) == 0 {
		t.Skipf("no config.json under the golden folder %q (set KTUNE_GOLDEN)", goldenDir(t))
	}
	for _, path := range paths {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			c, err := Load(filepath.Dir(path))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if filepath.Base(filepath.Dir(path)) == "tiny_model" {
				checkTinyModel(t, c)
			}
			tensors, err := checkpointShapes(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			if tensors == nil {
				t.Skip("no checkpoint beside config.json")
			}
			specs := c.TensorNames()
			if len(specs) != len(tensors) {
				t.Errorf("TensorNames() lists %d tensors, the checkpoint holds %d", len(specs), len(tensors))
			}
			if filepath.Base(filepath.Dir(path)) == "tiny_model" && len(tensors) != 151 {
				t.Errorf("tiny_model checkpoint holds %d tensors, README says 151", len(tensors))
			}
			want := map[string]bool{}
			var total int64
			for _, s := range specs {
				want[s.Name] = true
				total += numel(s.Shape)
				got, ok := tensors[s.Name]
				switch {
				case !ok:
					t.Errorf("checkpoint lacks %s", s.Name)
				case !reflect.DeepEqual(got, s.Shape):
					t.Errorf("%s: checkpoint shape %v, TensorNames shape %v", s.Name, got, s.Shape)
				}
			}
			for name := range tensors {
				if !want[name] {
					t.Errorf("checkpoint tensor %s %v is not in TensorNames", name, tensors[name])
				}
			}
			if p := c.ParamCount().Total; p != total {
				t.Errorf("ParamCount().Total = %d, checkpoint elements = %d", p, total)
			}
		})
	}
}

// checkTinyModel checks the tiny model's sizes against golden README §4.5.
func checkTinyModel(t *testing.T, c *Config) {
	t.Helper()
	s := c.Shapes()
	want := Shapes{
		Layers: 4, Hidden: 256, Vocab: 512,
		NumKDALayers: 3, NumMLALayers: 1, NumMoELayers: 3, NumDenseLayers: 1,
		KDAHeads: 4, KDAHeadDim: 64, KDAProj: 256, KDAGateRank: 64, ConvKernel: 4,
		KDAStateValues: 4 * 64 * 64, KDAConvTailValues: 3 * 256 * 3,
		MLAHeads: 4, QKNope: 32, QKRope: 16, QKHead: 48, VHead: 32, KVLoraRank: 64,
		MLAQDim: 192, MLAKVADim: 80, MLAKVBDim: 256, MLAODim: 128, MLACacheValuesPerToken: 80,
		Experts: 8, TopK: 2, ExpertGroups: 1, TopKGroup: 1, SharedExperts: 1,
		ExpertInter: 64, SharedInter: 64, DenseInter: 256,
	}
	if s != want {
		t.Errorf("tiny Shapes() =\n%+v\nwant\n%+v", s, want)
	}
	kinds := []Kind{KDA, KDA, KDA, MLA}
	for l, k := range kinds {
		if got := c.LayerKind(l); got != k {
			t.Errorf("tiny LayerKind(%d) = %v, want %v", l, got, k)
		}
		if got := c.IsMoE(l); got != (l >= 1) {
			t.Errorf("tiny IsMoE(%d) = %v", l, got)
		}
	}
	if c.RMSNormEps != 1e-5 || c.RoutedScalingFactor != 2.446 || c.QLoraRank != nil || !c.MLAUseNope {
		t.Errorf("tiny config values: %+v", c)
	}
}

// checkpointShapes reads the tensor shapes of the HF checkpoint in dir: a
// sharded one (model.safetensors.index.json) or model.safetensors. It
// returns nil, nil when there is neither.
func checkpointShapes(dir string) (map[string][]int64, error) {
	files := []string{filepath.Join(dir, "model.safetensors")}
	if data, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json")); err == nil {
		var index struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(data, &index); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		files = files[:0]
		for _, f := range index.WeightMap {
			if f = filepath.Join(dir, f); !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	} else if _, err := os.Stat(files[0]); err != nil {
		return nil, nil
	}
	all := map[string][]int64{}
	for _, f := range files {
		shapes, err := safetensorsShapes(f)
		if err != nil {
			return nil, err
		}
		for name, shape := range shapes {
			if _, dup := all[name]; dup {
				return nil, fmt.Errorf("%s: tensor %s in more than one shard", f, name)
			}
			all[name] = shape
		}
	}
	return all, nil
}

// safetensorsShapes reads a safetensors header (an 8-byte little-endian
// length, then a JSON object) and returns each tensor's shape, ignoring
// __metadata__.
func safetensorsShapes(path string) (map[string][]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var n uint64
	if err := binary.Read(f, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("%s: header length: %w", path, err)
	}
	if n > 100<<20 {
		return nil, fmt.Errorf("%s: header length %d is implausible", path, n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(buf, &header); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	shapes := map[string][]int64{}
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var info struct {
			Dtype string  `json:"dtype"`
			Shape []int64 `json:"shape"`
		}
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", path, name, err)
		}
		if info.Shape == nil {
			info.Shape = []int64{}
		}
		shapes[name] = info.Shape
	}
	return shapes, nil
}
