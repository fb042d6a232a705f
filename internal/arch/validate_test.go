package arch

import (
	"errors"
	"strings"
	"testing"
)

const badSource = "models/bad/config.json"

// la returns the config's linear_attn_config object.
func la(m map[string]any) map[string]any { return m["linear_attn_config"].(map[string]any) }

// ints converts a JSON array of numbers.
func ints(v any) []int {
	var out []int
	for _, x := range v.([]any) {
		out = append(out, int(x.(float64)))
	}
	return out
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(m map[string]any)
		key    string   // the key the error must name
		substr []string // further text the message must hold
	}{
		{"0-based layer lists", func(m map[string]any) {
			for _, k := range []string{"kda_layers", "full_attn_layers"} {
				l := ints(la(m)[k])
				for i := range l {
					l[i]--
				}
				la(m)[k] = l
			}
		}, "linear_attn_config.kda_layers", []string{"[0] out of range 1..27", "1-based", "looks 0-based"}},
		{"0-based lists leave the last layer out", func(m map[string]any) {
			for _, k := range []string{"kda_layers", "full_attn_layers"} {
				l := ints(la(m)[k])
				for i := range l {
					l[i]--
				}
				la(m)[k] = l
			}
		}, "linear_attn_config", []string{"layers [27] (1-based) are in neither"}},
		{"overlapping lists", func(m map[string]any) {
			la(m)["kda_layers"] = append(ints(la(m)["kda_layers"]), 4, 8)
		}, "linear_attn_config", []string{"layers [4 8] (1-based) are in both kda_layers and full_attn_layers"}},
		{"layer in neither list", func(m map[string]any) {
			la(m)["full_attn_layers"] = []int{4, 8, 12, 16, 20, 24}
		}, "linear_attn_config", []string{"[27]", "neither kda_layers nor full_attn_layers"}},
		{"layer out of range", func(m map[string]any) {
			la(m)["full_attn_layers"] = append(ints(la(m)["full_attn_layers"]), 28)
		}, "linear_attn_config.full_attn_layers", []string{"[28] out of range 1..27"}},
		{"negative layer", func(m map[string]any) {
			la(m)["kda_layers"] = append(ints(la(m)["kda_layers"]), -1)
		}, "linear_attn_config.kda_layers", []string{"[-1] out of range"}},
		{"duplicate layer", func(m map[string]any) {
			la(m)["kda_layers"] = append(ints(la(m)["kda_layers"]), 1)
		}, "linear_attn_config.kda_layers", []string{"[1] listed more than once"}},
		{"fewer layers than listed", func(m map[string]any) { m["num_hidden_layers"] = 26 },
			"linear_attn_config.full_attn_layers", []string{"[27] out of range 1..26"}},
		{"missing linear_attn_config", func(m map[string]any) { delete(m, "linear_attn_config") },
			"linear_attn_config", []string{"missing"}},
		{"KDA head_dim 0", func(m map[string]any) { la(m)["head_dim"] = 0 },
			"linear_attn_config.head_dim", []string{"positive integer"}},
		{"KDA conv kernel missing", func(m map[string]any) { delete(la(m), "short_conv_kernel_size") },
			"linear_attn_config.short_conv_kernel_size", []string{"missing"}},
		{"q_lora_rank set", func(m map[string]any) { m["q_lora_rank"] = 1536 },
			"q_lora_rank", []string{"1536", "not supported", "null"}},
		{"RoPE (mla_use_nope false)", func(m map[string]any) { m["mla_use_nope"] = false },
			"mla_use_nope", []string{"must be true", "RoPE", "not supported"}},
		{"mla_use_nope missing", func(m map[string]any) { delete(m, "mla_use_nope") },
			"mla_use_nope", []string{"missing", "RoPE"}},
		{"MLA output gate", func(m map[string]any) { m["mla_use_output_gate"] = true },
			"mla_use_output_gate", []string{"not supported"}},
		{"top-k > experts", func(m map[string]any) { m["num_experts_per_token"] = 300 },
			"num_experts_per_token", []string{"300", "num_experts = 256"}},
		{"top-k 0", func(m map[string]any) { m["num_experts_per_token"] = 0 },
			"num_experts_per_token", []string{"between 1 and"}},
		{"experts not divisible by groups", func(m map[string]any) { m["num_expert_group"] = 3 },
			"num_expert_group", []string{"does not divide num_experts = 256"}},
		{"topk_group > groups", func(m map[string]any) { m["topk_group"] = 2 },
			"topk_group", []string{"num_expert_group = 1"}},
		{"top-k beyond the kept groups", func(m map[string]any) {
			m["num_expert_group"], m["topk_group"], m["num_experts_per_token"] = 8, 1, 64
		}, "num_experts_per_token", []string{"exceeds the 32 experts"}},
		{"softmax router", func(m map[string]any) { m["moe_router_activation_func"] = "softmax" },
			"moe_router_activation_func", []string{`"softmax"`, "sigmoid"}},
		{"negative experts", func(m map[string]any) { m["num_experts"] = -4 },
			"num_experts", []string{"negative"}},
		{"too many experts", func(m map[string]any) { m["num_experts"] = 1 << 20 },
			"num_experts", []string{"implausibly large"}},
		{"moe_intermediate_size missing", func(m map[string]any) { delete(m, "moe_intermediate_size") },
			"moe_intermediate_size", []string{"missing"}},
		{"routed_scaling_factor 0", func(m map[string]any) { m["routed_scaling_factor"] = 0 },
			"routed_scaling_factor", []string{"positive"}},
		{"moe_layer_freq 0", func(m map[string]any) { m["moe_layer_freq"] = 0 },
			"moe_layer_freq", []string{"positive"}},
		{"negative first_k_dense_replace", func(m map[string]any) { m["first_k_dense_replace"] = -1 },
			"first_k_dense_replace", []string{"negative"}},
		{"dense layer without intermediate_size", func(m map[string]any) { delete(m, "intermediate_size") },
			"intermediate_size", []string{"missing"}},
		{"gelu", func(m map[string]any) { m["hidden_act"] = "gelu" },
			"hidden_act", []string{`"gelu"`, "silu"}},
		{"MTP layers", func(m map[string]any) { m["num_nextn_predict_layers"] = 1 },
			"num_nextn_predict_layers", []string{"not supported"}},
		{"wrong model_type", func(m map[string]any) {
			m["model_type"], m["architectures"] = "deepseek_v3", []string{"DeepseekV3ForCausalLM"}
		}, "model_type", []string{`"deepseek_v3"`, "not a Kimi Linear config"}},
		{"no model_type nor architectures", func(m map[string]any) {
			delete(m, "model_type")
			delete(m, "architectures")
		}, "model_type", []string{"kimi_linear"}},
		{"zero hidden_size", func(m map[string]any) { m["hidden_size"] = 0 },
			"hidden_size", []string{"positive integer"}},
		{"negative vocab_size", func(m map[string]any) { m["vocab_size"] = -5 },
			"vocab_size", []string{"-5"}},
		{"huge hidden_size", func(m map[string]any) { m["hidden_size"] = int64(1) << 40 },
			"hidden_size", []string{"implausibly large"}},
		{"no layers", func(m map[string]any) { m["num_hidden_layers"] = 0 },
			"num_hidden_layers", []string{"missing"}},
		{"MLA size missing", func(m map[string]any) { delete(m, "kv_lora_rank") },
			"kv_lora_rank", []string{"missing"}},
		{"negative rms_norm_eps", func(m map[string]any) { m["rms_norm_eps"] = -1e-5 },
			"rms_norm_eps", []string{"positive"}},
		{"eos outside the vocabulary", func(m map[string]any) { m["eos_token_id"] = 163840 },
			"eos_token_id", []string{"outside the vocabulary"}},
		{"wrong JSON type", func(m map[string]any) { m["hidden_size"] = "2304" },
			"hidden_size", []string{"wrong JSON type", "string", "integer"}},
		{"float for an integer", func(m map[string]any) { m["num_experts"] = 2.5 },
			"num_experts", []string{"wrong JSON type"}},
		{"wrong nested JSON type", func(m map[string]any) { la(m)["kda_layers"] = "1,2,3" },
			"linear_attn_config.kda_layers", []string{"wrong JSON type", "array of integers"}},
		{"linear_attn_config not an object", func(m map[string]any) { m["linear_attn_config"] = []int{1} },
			"linear_attn_config", []string{"wrong JSON type", "object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := kimiMap(t)
			tc.edit(m)
			c, err := Parse(marshal(t, m), badSource)
			if err == nil {
				t.Fatal("Parse accepted the config")
			}
			if c != nil {
				t.Error("Parse returned a config with an error")
			}
			msg := err.Error()
			if !namesKey(msg, tc.key) {
				t.Errorf("error does not name source and key (%q, %q):\n%s", badSource, tc.key, msg)
			}
			for _, s := range tc.substr {
				if !strings.Contains(msg, s) {
					t.Errorf("error lacks %q:\n%s", s, msg)
				}
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Source != badSource || fe.Key == "" {
				t.Errorf("errors.As(*FieldError) = %+v", fe)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct {
		name, data string
		substr     []string
	}{
		{"trailing comma", "{\n  \"vocab_size\": 163840,\n}", []string{"malformed JSON at line 3, column 1"}},
		{"truncated", `{"vocab_size": 163840`, []string{"malformed JSON", "unexpected end"}},
		{"not JSON", "vocab_size = 163840", []string{"malformed JSON at line 1"}},
		{"empty", "  \n", []string{"empty"}},
		{"array", "[1, 2]", []string{"JSON object", "array"}},
		{"null", "null", []string{"JSON object"}},
		{"string", `"kimi_linear"`, []string{"JSON object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.data), badSource)
			if err == nil || c != nil {
				t.Fatalf("Parse(%q) = %v, %v; want an error", tc.data, c, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, badSource+": ") {
				t.Errorf("error does not start with the source:\n%s", msg)
			}
			for _, s := range tc.substr {
				if !strings.Contains(msg, s) {
					t.Errorf("error lacks %q:\n%s", s, msg)
				}
			}
		})
	}
}

// TestValidateReportsAll checks that every problem is reported at once, one
// line each.
func TestValidateReportsAll(t *testing.T) {
	m := kimiMap(t)
	m["q_lora_rank"] = 1536
	m["mla_use_nope"] = false
	m["num_experts_per_token"] = 512
	m["moe_router_activation_func"] = "softmax"
	la(m)["kda_layers"] = append(ints(la(m)["kda_layers"]), 4)
	_, err := Parse(marshal(t, m), badSource)
	if err == nil {
		t.Fatal("Parse accepted the config")
	}
	lines := strings.Split(err.Error(), "\n")
	keys := []string{"q_lora_rank", "mla_use_nope", "num_experts_per_token", "moe_router_activation_func", "linear_attn_config"}
	if len(lines) != len(keys) {
		t.Errorf("got %d lines, want %d:\n%s", len(lines), len(keys), err)
	}
	for _, k := range keys {
		if !namesKey(err.Error(), k) {
			t.Errorf("missing %s:\n%s", k, err)
		}
	}
	// the source is named once, on the first line, so that the lines
	// joined into one (cli.OneLine) do not repeat it
	if n := strings.Count(err.Error(), badSource); n != 1 || !strings.HasPrefix(lines[0], badSource+": ") {
		t.Errorf("the source is named %d times, want once, first:\n%s", n, err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Source != badSource || fe.Key == "" {
		t.Errorf("errors.As(*FieldError) = %+v", fe)
	}
}

// namesKey reports whether msg, Validate's or Parse's error for badSource,
// starts with the source and has a line for key.
func namesKey(msg, key string) bool {
	return strings.HasPrefix(msg, badSource+": ") &&
		(strings.HasPrefix(msg, badSource+": "+key+": ") || strings.Contains(msg, "\n"+key+": "))
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"architectures only", func(m map[string]any) { delete(m, "model_type") }},
		{"model_type only", func(m map[string]any) { delete(m, "architectures") }},
		{"unknown keys", func(m map[string]any) {
			m["auto_map"] = map[string]any{"AutoConfig": "configuration_kimi.KimiLinearConfig"}
			m["rope_scaling"] = nil
			m["quantization"] = map[string]any{"bits": 4}
		}},
		{"null token ids", func(m map[string]any) { m["pad_token_id"] = nil }},
		{"torch_dtype", func(m map[string]any) { delete(m, "dtype"); m["torch_dtype"] = "bfloat16" }},
		{"llama.cpp's num_key_value_heads", func(m map[string]any) { m["num_key_value_heads"] = 1 }},
		{"grouped routing", func(m map[string]any) { m["num_expert_group"], m["topk_group"] = 8, 4 }},
		{"no MoE", func(m map[string]any) { m["num_experts"] = nil }},
		{"unordered layer lists", func(m map[string]any) {
			la(m)["full_attn_layers"] = []int{27, 4, 8, 12, 16, 20, 24}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := kimiMap(t)
			tc.edit(m)
			if _, err := Parse(marshal(t, m), badSource); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

func TestNoMoE(t *testing.T) {
	c := Kimi48B()
	c.NumExperts = 0
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.NumMoELayers() != 0 || c.NumDenseLayers() != 27 {
		t.Errorf("MoE layers %d, dense %d", c.NumMoELayers(), c.NumDenseLayers())
	}
	for _, l := range c.Shapes().Linears() {
		if strings.HasPrefix(l.Name, "moe.") {
			t.Errorf("linear %s without experts", l.Name)
		}
	}
	if n := c.NumTensors(); n != int64(len(c.TensorNames())) || n != 3+27*2+20*15+7*5+27*3 {
		t.Errorf("NumTensors() = %d, len(TensorNames()) = %d", n, len(c.TensorNames()))
	}
}

func TestValidateNil(t *testing.T) {
	var c *Config
	if err := c.Validate(); err == nil {
		t.Error("nil Config validated")
	}
	if err := (&Config{}).Validate(); err == nil || !strings.Contains(err.Error(), "config: model_type: ") {
		t.Errorf("zero Config: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(marshal(f, Kimi48B()))
	f.Add([]byte(`{"model_type":"kimi_linear","num_hidden_layers":2,"linear_attn_config":{"kda_layers":[1],"full_attn_layers":[2]}}`))
	f.Add([]byte(`{"model_type":"kimi_linear","num_experts":-1,"num_expert_group":0}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Errorf("error without the source: %v", err)
			}
			return
		}
		_ = c.Shapes().Linears()
		p := c.ParamCount()
		if p.Total <= 0 || p.ActivePerToken <= 0 || p.ActivePerToken > p.Total+p.Embedding {
			t.Errorf("implausible counts %+v", p)
		}
		if n := c.NumTensors(); n < 1<<16 && int64(len(c.TensorNames())) != n {
			t.Errorf("NumTensors() = %d, len(TensorNames()) = %d", n, len(c.TensorNames()))
		}
		_ = c.KDAStateBytesPerSeq()
	})
}
