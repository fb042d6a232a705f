package arch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/golden"
)

func TestKimi48BValidates(t *testing.T) {
	c := Kimi48B()
	if err := c.Validate(); err != nil {
		t.Fatalf("Kimi48B().Validate() = %v", err)
	}
	if c.Source != Kimi48BSource {
		t.Errorf("Source = %q, want %q", c.Source, Kimi48BSource)
	}
	// Each call returns an independent copy.
	c.LinearAttn.KDALayers[0] = 99
	if Kimi48B().LinearAttn.KDALayers[0] != 1 {
		t.Error("Kimi48B returns shared slices")
	}
}

func TestKimi48BLayers(t *testing.T) {
	c := Kimi48B()
	mla := map[int]bool{3: true, 7: true, 11: true, 15: true, 19: true, 23: true, 26: true}
	for l := range 27 {
		want := KDA
		if mla[l] {
			want = MLA
		}
		if got := c.LayerKind(l); got != want {
			t.Errorf("LayerKind(%d) = %v, want %v", l, got, want)
		}
		if got, want := c.IsMoE(l), l >= 1; got != want {
			t.Errorf("IsMoE(%d) = %v, want %v", l, got, want)
		}
	}
	for _, l := range []int{-1, 27, 100} {
		if got := c.LayerKind(l); got != KindInvalid {
			t.Errorf("LayerKind(%d) = %v, want invalid", l, got)
		}
		if c.IsMoE(l) {
			t.Errorf("IsMoE(%d) = true for a layer out of range", l)
		}
	}
	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"NumKDALayers", c.NumKDALayers(), 20},
		{"NumMLALayers", c.NumMLALayers(), 7},
		{"NumMoELayers", c.NumMoELayers(), 26},
		{"NumDenseLayers", c.NumDenseLayers(), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if KDA.String() != "kda" || MLA.String() != "mla" || KindInvalid.String() != "invalid" {
		t.Errorf("Kind strings: %v %v %v", KDA, MLA, KindInvalid)
	}
}

func TestKimi48BShapes(t *testing.T) {
	got := Kimi48B().Shapes()
	want := Shapes{
		Layers: 27, Hidden: 2304, Vocab: 163840,
		NumKDALayers: 20, NumMLALayers: 7, NumMoELayers: 26, NumDenseLayers: 1,
		KDAHeads: 32, KDAHeadDim: 128, KDAProj: 4096, KDAGateRank: 128, ConvKernel: 4,
		KDAStateValues: 524288, KDAConvTailValues: 36864,
		MLAHeads: 32, QKNope: 128, QKRope: 64, QKHead: 192, VHead: 128, KVLoraRank: 512,
		MLAQDim: 6144, MLAKVADim: 576, MLAKVBDim: 8192, MLAODim: 4096, MLACacheValuesPerToken: 576,
		Experts: 256, TopK: 8, ExpertGroups: 1, TopKGroup: 1, SharedExperts: 1,
		ExpertInter: 1024, SharedInter: 1024, DenseInter: 9216,
	}
	if got != want {
		t.Errorf("Shapes() =\n%+v\nwant\n%+v", got, want)
	}
}

func TestKimi48BLinears(t *testing.T) {
	s := Kimi48B().Shapes()
	want := []Linear{
		{"kda.q_proj", 4096, 2304, 20, 20},
		{"kda.k_proj", 4096, 2304, 20, 20},
		{"kda.v_proj", 4096, 2304, 20, 20},
		{"kda.f_a_proj", 128, 2304, 20, 20},
		{"kda.f_b_proj", 4096, 128, 20, 20},
		{"kda.b_proj", 32, 2304, 20, 20},
		{"kda.g_a_proj", 128, 2304, 20, 20},
		{"kda.g_b_proj", 4096, 128, 20, 20},
		{"kda.o_proj", 2304, 4096, 20, 20},
		{"mla.q_proj", 6144, 2304, 7, 7},
		{"mla.kv_a_proj_with_mqa", 576, 2304, 7, 7},
		{"mla.kv_b_proj", 8192, 512, 7, 7},
		{"mla.o_proj", 2304, 4096, 7, 7},
		{"dense.gate_proj", 9216, 2304, 1, 1},
		{"dense.up_proj", 9216, 2304, 1, 1},
		{"dense.down_proj", 2304, 9216, 1, 1},
		{"moe.gate", 256, 2304, 26, 26},
		{"moe.expert.w1", 1024, 2304, 8 * 26, 256 * 26},
		{"moe.expert.w3", 1024, 2304, 8 * 26, 256 * 26},
		{"moe.expert.w2", 2304, 1024, 8 * 26, 256 * 26},
		{"moe.shared.gate_proj", 1024, 2304, 26, 26},
		{"moe.shared.up_proj", 1024, 2304, 26, 26},
		{"moe.shared.down_proj", 2304, 1024, 26, 26},
		{"lm_head", 163840, 2304, 1, 1},
	}
	if got := s.Linears(); !reflect.DeepEqual(got, want) {
		t.Errorf("Linears() =\n%v\nwant\n%v", got, want)
	}
	if l, ok := s.Linear("mla.kv_b_proj"); !ok || l.N != 8192 || l.K != 512 || l.Params() != 8192*512 {
		t.Errorf(`Linear("mla.kv_b_proj") = %+v, %v`, l, ok)
	}
	if _, ok := s.Linear("nope"); ok {
		t.Error(`Linear("nope") found`)
	}
}

func TestKimi48BParamCount(t *testing.T) {
	c := Kimi48B()
	got := c.ParamCount()
	want := ParamCount{
		Embedding:      377_487_360,
		LMHead:         377_487_360,
		KDAPerLayer:    39_514_272,
		KDAMixers:      790_285_440,
		MLAPerLayer:    29_114_880,
		MLAMixers:      203_804_160,
		DenseMLP:       63_700_992,
		Routers:        15_342_080,
		SharedExperts:  184_025_088,
		PerExpert:      7_077_888,
		RoutedExperts:  47_110_422_528,
		Norms:          126_720,
		Total:          49_122_681_728,
		ActivePerToken: 3_106_972_544,
	}
	if got != want {
		t.Errorf("ParamCount() =\n%+v\nwant\n%+v", got, want)
	}
	if got := c.ActiveParamsPerToken(); got != 3_106_972_544 {
		t.Errorf("ActiveParamsPerToken() = %d, want 3,106,972,544", got)
	}
	// §7: 2,729,485,184 active without lm_head.
	if got := c.ActiveParamsPerToken() - got.LMHead; got != 2_729_485_184 {
		t.Errorf("active without lm_head = %d, want 2,729,485,184", got)
	}
}

// TestLinearsMatchParamCount checks that the linear projections plus the
// non-matrix parameters account for every parameter, stored and active.
func TestLinearsMatchParamCount(t *testing.T) {
	for name, c := range testConfigs(t) {
		t.Run(name, func(t *testing.T) {
			s := c.Shapes()
			p := c.ParamCount()
			var stored, used int64
			for _, l := range s.Linears() {
				stored += int64(l.Stored) * l.Params()
				used += int64(l.Uses) * l.Params()
			}
			// Norms, convolutions, A_log, dt_bias, o_norm, kv_a_layernorm, router biases.
			other := p.Norms +
				int64(s.NumKDALayers)*int64(3*s.KDAProj*s.ConvKernel+s.KDAHeads+s.KDAProj+s.KDAHeadDim) +
				int64(s.NumMLALayers)*int64(s.KVLoraRank) +
				int64(s.NumMoELayers)*int64(s.Experts)
			if got, want := stored+other+p.Embedding, p.Total; got != want {
				t.Errorf("linears stored + other + embedding = %d, ParamCount.Total = %d", got, want)
			}
			if got, want := used+other, p.ActivePerToken; got != want {
				t.Errorf("linears used + other = %d, ParamCount.ActivePerToken = %d", got, want)
			}
		})
	}
}

func TestKimi48BTensorNames(t *testing.T) {
	c := Kimi48B()
	specs := c.TensorNames()
	if len(specs) != 20_493 {
		t.Errorf("len(TensorNames()) = %d, want 20,493", len(specs))
	}
	if n := c.NumTensors(); n != int64(len(specs)) {
		t.Errorf("NumTensors() = %d, len(TensorNames()) = %d", n, len(specs))
	}
	byName := map[string][]int64{}
	var total int64
	for _, s := range specs {
		if _, dup := byName[s.Name]; dup {
			t.Errorf("duplicate tensor %s", s.Name)
		}
		byName[s.Name] = s.Shape
		total += numel(s.Shape)
	}
	if p := c.ParamCount().Total; total != p {
		t.Errorf("sum of tensor sizes = %d, ParamCount().Total = %d", total, p)
	}
	for name, want := range map[string][]int64{
		"model.embed_tokens.weight":                                       {163840, 2304},
		"model.norm.weight":                                               {2304},
		"lm_head.weight":                                                  {163840, 2304},
		"model.layers.0.input_layernorm.weight":                           {2304},
		"model.layers.0.post_attention_layernorm.weight":                  {2304},
		"model.layers.0.self_attn.A_log":                                  {1, 1, 32, 1},
		"model.layers.0.self_attn.dt_bias":                                {4096},
		"model.layers.0.self_attn.q_conv1d.weight":                        {4096, 1, 4},
		"model.layers.0.self_attn.f_a_proj.weight":                        {128, 2304},
		"model.layers.0.self_attn.f_b_proj.weight":                        {4096, 128},
		"model.layers.0.self_attn.b_proj.weight":                          {32, 2304},
		"model.layers.0.self_attn.g_b_proj.weight":                        {4096, 128},
		"model.layers.0.self_attn.o_norm.weight":                          {128},
		"model.layers.0.self_attn.o_proj.weight":                          {2304, 4096},
		"model.layers.0.mlp.gate_proj.weight":                             {9216, 2304},
		"model.layers.0.mlp.down_proj.weight":                             {2304, 9216},
		"model.layers.3.self_attn.q_proj.weight":                          {6144, 2304},
		"model.layers.3.self_attn.kv_a_proj_with_mqa.weight":              {576, 2304},
		"model.layers.3.self_attn.kv_a_layernorm.weight":                  {512},
		"model.layers.3.self_attn.kv_b_proj.weight":                       {8192, 512},
		"model.layers.26.self_attn.o_proj.weight":                         {2304, 4096},
		"model.layers.1.block_sparse_moe.gate.weight":                     {256, 2304},
		"model.layers.1.block_sparse_moe.gate.e_score_correction_bias":    {256},
		"model.layers.26.block_sparse_moe.experts.255.w1.weight":          {1024, 2304},
		"model.layers.26.block_sparse_moe.experts.255.w2.weight":          {2304, 1024},
		"model.layers.26.block_sparse_moe.experts.255.w3.weight":          {1024, 2304},
		"model.layers.1.block_sparse_moe.shared_experts.gate_proj.weight": {1024, 2304},
		"model.layers.1.block_sparse_moe.shared_experts.up_proj.weight":   {1024, 2304},
		"model.layers.1.block_sparse_moe.shared_experts.down_proj.weight": {2304, 1024},
	} {
		if got, ok := byName[name]; !ok {
			t.Errorf("missing tensor %s", name)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s shape = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{
		"model.layers.1.mlp.gate_proj.weight",                   // layer 1 is MoE
		"model.layers.0.block_sparse_moe.gate.weight",           // layer 0 is dense
		"model.layers.3.self_attn.A_log",                        // layer 3 is MLA
		"model.layers.2.self_attn.kv_b_proj.weight",             // layer 2 is KDA
		"model.layers.27.input_layernorm.weight",                // 27 layers: 0..26
		"model.layers.1.block_sparse_moe.experts.256.w1.weight", // 256 experts: 0..255
	} {
		if _, ok := byName[name]; ok {
			t.Errorf("unexpected tensor %s", name)
		}
	}
}

func TestKimi48BStateBytes(t *testing.T) {
	c := Kimi48B()
	if got, want := c.KDAStateBytesPerSeq(), int64(20*(32*128*128+3*4096*3)*4); got != want || got != 44_892_160 {
		t.Errorf("KDAStateBytesPerSeq() = %d, want %d", got, want)
	}
	// the MLA cache's bytes per token are mla.RowBytes's (model.EstimateMemory)
	if s := c.Shapes(); s.NumMLALayers*s.MLACacheValuesPerToken != 7*576 {
		t.Errorf("MLA cache values per token %d × %d layers, want 576 × 7", s.MLACacheValuesPerToken, s.NumMLALayers)
	}
}

func TestTiedEmbeddings(t *testing.T) {
	c := Kimi48B()
	c.TieWordEmbeddings = true
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p := c.ParamCount()
	if p.LMHead != 0 || p.Total != 49_122_681_728-377_487_360 {
		t.Errorf("tied: LMHead = %d, Total = %d", p.LMHead, p.Total)
	}
	if p.ActivePerToken != 3_106_972_544 {
		t.Errorf("tied: ActivePerToken = %d, want the untied value (lm_head is still applied)", p.ActivePerToken)
	}
	specs := c.TensorNames()
	if len(specs) != 20_492 || specs[len(specs)-1].Name != "model.norm.weight" {
		t.Errorf("tied: %d tensors, last %s", len(specs), specs[len(specs)-1].Name)
	}
	if l, _ := c.Shapes().Linear("lm_head"); l.Uses != 1 || l.Stored != 0 {
		t.Errorf("tied lm_head = %+v", l)
	}
}

func TestRoundTrip(t *testing.T) {
	data, err := json.MarshalIndent(Kimi48B(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"q_lora_rank": null`, `"kda_layers": [`, `"model_type": "kimi_linear"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("marshalled config lacks %s", key)
		}
	}
	c, err := Parse(data, "roundtrip.json")
	if err != nil {
		t.Fatal(err)
	}
	want := Kimi48B()
	want.Source = "roundtrip.json"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse(Marshal(Kimi48B())) =\n%+v\nwant\n%+v", c, want)
	}
}

func TestParseDefaults(t *testing.T) {
	m := kimiMap(t)
	for _, k := range []string{"hidden_act", "moe_router_activation_func", "moe_layer_freq", "num_expert_group",
		"topk_group", "use_grouped_topk", "moe_renormalize", "num_key_value_heads", "model_type"} {
		delete(m, k)
	}
	m["rms_norm_eps"] = nil
	m["num_experts_per_token"] = 8
	c, err := Parse(marshal(t, m), "defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.HiddenAct != "silu" || c.MoERouterActivationFunc != "sigmoid" || c.MoELayerFreq != 1 ||
		c.NumExpertGroup != 1 || c.TopKGroup != 1 || !c.UseGroupedTopK || !c.MoERenormalize ||
		c.NumKeyValueHeads != 32 || c.RMSNormEps != 1e-6 {
		t.Errorf("defaults not applied: %+v", c)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, marshal(t, kimiMap(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, path} {
		c, err := Load(p)
		if err != nil {
			t.Fatalf("Load(%s): %v", p, err)
		}
		if c.Source != path {
			t.Errorf("Load(%s).Source = %q, want %q", p, c.Source, path)
		}
		if c.ParamCount().Total != 49_122_681_728 {
			t.Errorf("Load(%s): wrong total", p)
		}
	}

	bad := kimiMap(t)
	bad["q_lora_rank"] = 1536
	if err := os.WriteFile(path, marshal(t, bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), path+": q_lora_rank: ") {
		t.Errorf("Load(bad dir) = %v, want an error naming %s and q_lora_rank", err, path)
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Load(missing) = %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("Load(folder without config.json) = %v", err)
	}
}

// testConfigs returns the built-in config, the public tiny config and the
// config of every tiny_model golden file.
func testConfigs(t *testing.T) map[string]*Config {
	m := map[string]*Config{"kimi48b": Kimi48B()}
	if c, err := Load("testdata/tiny_config.json"); err == nil {
		m["tiny"] = c
	} else {
		t.Fatal(err)
	}
	for _, g := range golden.Load(t, golden.TinyModel) {
		c, err := Load(g.Dir())
		if err != nil {
			t.Fatal(err)
		}
		m["golden/"+g.Name()] = c
	}
	return m
}

// kimiMap returns the 48B config as a generic JSON object, for editing.
func kimiMap(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(marshal(t, Kimi48B()), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}
