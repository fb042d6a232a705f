package arch

import (
	"reflect"
	"testing"

	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/safetensors"
)

// TestGoldenConfigs loads the config.json of every tiny_model golden file
// (found by metadata kind) and checks TensorNames against the tensors of the
// checkpoint beside it, name by name and shape by shape.
func TestGoldenConfigs(t *testing.T) {
	for _, g := range golden.Load(t, golden.TinyModel) {
		t.Run(g.Name(), func(t *testing.T) {
			c, err := Load(g.Dir())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			ck, err := safetensors.OpenCheckpoint(g.Dir())
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			tensors := map[string][]int64{}
			for _, name := range ck.Names() {
				info, _, _ := ck.Info(name)
				tensors[name] = info.Shape
			}
			specs := c.TensorNames()
			if len(specs) != len(tensors) {
				t.Errorf("TensorNames() lists %d tensors, the checkpoint holds %d", len(specs), len(tensors))
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

// TestTinyConfig checks a copy of the public tiny model's config against
// golden README §4.5.
func TestTinyConfig(t *testing.T) {
	c, err := Load("testdata/tiny_config.json")
	if err != nil {
		t.Fatal(err)
	}
	checkTinyModel(t, c)
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
