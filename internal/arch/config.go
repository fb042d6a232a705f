package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ModelType is the config.json model_type of Kimi Linear models.
const ModelType = "kimi_linear"

// Architecture is the Hugging Face architectures entry of Kimi Linear models.
const Architecture = "KimiLinearForCausalLM"

// Config mirrors the Hugging Face config.json of a Kimi Linear model. The JSON
// tags are the config.json keys; keys not listed here are ignored when
// parsing. Marshalling a Config with encoding/json gives a config.json that
// Parse accepts.
//
// Values that config.json may omit take the defaults of Moonshot's
// KimiLinearConfig class when read with Parse (see Parse).
type Config struct {
	// Source names where the config came from (a file path, or a label for a
	// built-in config). It prefixes every validation error.
	Source string `json:"-"`

	ModelType     string   `json:"model_type"`    // "kimi_linear"
	Architectures []string `json:"architectures"` // ["KimiLinearForCausalLM"]

	VocabSize         int     `json:"vocab_size"`
	HiddenSize        int     `json:"hidden_size"`
	NumHiddenLayers   int     `json:"num_hidden_layers"`
	IntermediateSize  int     `json:"intermediate_size"` // dense MLP width (layers < first_k_dense_replace)
	HiddenAct         string  `json:"hidden_act"`        // "silu" (SwiGLU MLPs)
	RMSNormEps        float64 `json:"rms_norm_eps"`
	TieWordEmbeddings bool    `json:"tie_word_embeddings"`

	// MLA (full attention) layers.
	NumAttentionHeads int  `json:"num_attention_heads"`
	NumKeyValueHeads  int  `json:"num_key_value_heads"` // informational; MLA does not use it
	QLoraRank         *int `json:"q_lora_rank"`         // must be null: no query LoRA
	KVLoraRank        int  `json:"kv_lora_rank"`
	QKNopeHeadDim     int  `json:"qk_nope_head_dim"`
	QKRopeHeadDim     int  `json:"qk_rope_head_dim"` // extra q/k dims; never rotated (mla_use_nope)
	VHeadDim          int  `json:"v_head_dim"`
	MLAUseNope        bool `json:"mla_use_nope"`        // must be true: no RoPE anywhere
	MLAUseOutputGate  bool `json:"mla_use_output_gate"` // must be false (later Kimi models only)

	// KDA (linear attention) layers.
	LinearAttn LinearAttnConfig `json:"linear_attn_config"`

	// Feed-forward: dense MLP and mixture of experts.
	NumExperts              int     `json:"num_experts"` // 0 (or null): no MoE layers
	NumExpertsPerToken      int     `json:"num_experts_per_token"`
	NumSharedExperts        int     `json:"num_shared_experts"`
	MoEIntermediateSize     int     `json:"moe_intermediate_size"`
	FirstKDenseReplace      int     `json:"first_k_dense_replace"`
	MoELayerFreq            int     `json:"moe_layer_freq"`
	MoERouterActivationFunc string  `json:"moe_router_activation_func"` // "sigmoid"
	MoERenormalize          bool    `json:"moe_renormalize"`
	RoutedScalingFactor     float64 `json:"routed_scaling_factor"`
	UseGroupedTopK          bool    `json:"use_grouped_topk"`
	NumExpertGroup          int     `json:"num_expert_group"`
	TopKGroup               int     `json:"topk_group"`
	NumNextNPredictLayers   int     `json:"num_nextn_predict_layers"` // must be 0: no MTP layers

	// Tokens and metadata.
	BOSTokenID     int    `json:"bos_token_id"`
	EOSTokenID     int    `json:"eos_token_id"`
	PadTokenID     int    `json:"pad_token_id"`
	Dtype          string `json:"dtype,omitempty"`       // newer transformers
	TorchDtype     string `json:"torch_dtype,omitempty"` // older transformers
	ModelMaxLength int    `json:"model_max_length,omitempty"`

	// Present in the released config but unused by the model.
	HeadDim   int     `json:"head_dim,omitempty"`   // top-level head_dim; neither KDA nor MLA uses it
	RopeTheta float64 `json:"rope_theta,omitempty"` // no RoPE anywhere (mla_use_nope)
}

// LinearAttnConfig is config.json's linear_attn_config: the KDA layer sizes
// and which layers are KDA and which are MLA.
type LinearAttnConfig struct {
	NumHeads            int `json:"num_heads"`
	HeadDim             int `json:"head_dim"` // d_k = d_v, also the rank of the f/g gate projections
	ShortConvKernelSize int `json:"short_conv_kernel_size"`
	// KDALayers and FullAttnLayers list the KDA and the MLA layers, 1-based.
	KDALayers      []int `json:"kda_layers"`
	FullAttnLayers []int `json:"full_attn_layers"`
}

// defaultConfig returns the defaults of Moonshot's KimiLinearConfig for the
// keys where it has one that the model depends on.
func defaultConfig() *Config {
	return &Config{
		HiddenAct:               "silu",
		RMSNormEps:              1e-6,
		MoERouterActivationFunc: "sigmoid",
		MoERenormalize:          true,
		RoutedScalingFactor:     1.0,
		MoELayerFreq:            1,
		UseGroupedTopK:          true,
		NumExpertGroup:          1,
		TopKGroup:               1,
	}
}

// Parse decodes and validates a Kimi Linear config.json. source names the
// data in error messages (normally the file path).
//
// Keys absent from the JSON take KimiLinearConfig's defaults: hidden_act
// "silu", rms_norm_eps 1e-6, moe_router_activation_func "sigmoid",
// moe_renormalize true, routed_scaling_factor 1, moe_layer_freq 1,
// use_grouped_topk true, num_expert_group 1, topk_group 1, and
// num_key_value_heads = num_attention_heads. A JSON null leaves the default
// (a null num_experts means no MoE). Unknown keys are ignored.
//
// Malformed JSON, a value of the wrong JSON type, and every problem found by
// Validate are returned as an error (and a nil Config) naming source and, where
// there is one, the key.
func Parse(data []byte, source string) (*Config, error) {
	if source == "" {
		source = "config.json"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file; want a Kimi Linear config.json object", source)
	}
	c := defaultConfig()
	if err := json.Unmarshal(data, c); err != nil {
		return nil, decodeError(source, data, err)
	}
	if data = bytes.TrimSpace(data); data[0] != '{' {
		return nil, fmt.Errorf("%s: config.json must hold a JSON object, got %.20q", source, data)
	}
	c.Source = source
	if c.NumKeyValueHeads == 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeError turns an encoding/json error into one that names the source,
// the position (for syntax errors) or the key (for type errors).
func decodeError(source string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("%s: malformed JSON at line %d, column %d: %v", source, line, col, syn)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Errorf("%s: config.json must hold a JSON object, got a JSON %s", source, typ.Value)
		}
		return &FieldError{Source: source, Key: typ.Field,
			Msg: fmt.Sprintf("wrong JSON type: got %s, want %s", typ.Value, jsonKind(typ.Type.String()))}
	default:
		return fmt.Errorf("%s: cannot decode config.json: %w", source, err)
	}
}

// jsonKind names the JSON form of a Go type used in Config.
func jsonKind(goType string) string {
	switch goType {
	case "int", "*int":
		return "an integer"
	case "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "[]int":
		return "an array of integers"
	case "[]string":
		return "an array of strings"
	case "arch.LinearAttnConfig":
		return "an object"
	}
	return goType
}

// lineCol converts a byte offset into 1-based line and column numbers.
func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// Load reads and validates a Kimi Linear config. path is either a config.json
// file or a checkpoint folder that contains one.
func Load(path string) (*Config, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load Kimi Linear config: %w", err)
	}
	if info.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load Kimi Linear config: %w", err)
	}
	return Parse(data, path)
}

// Kimi48BSource is the Source of the config returned by Kimi48B.
const Kimi48BSource = "built-in Kimi-Linear-48B-A3B config"

// Kimi48B returns the config of the released Kimi-Linear-48B-A3B models
// (-Instruct and -Base share it). Each call returns a new Config that the
// caller may modify.
func Kimi48B() *Config {
	return &Config{
		Source:        Kimi48BSource,
		ModelType:     ModelType,
		Architectures: []string{Architecture},

		VocabSize:         163840,
		HiddenSize:        2304,
		NumHiddenLayers:   27,
		IntermediateSize:  9216,
		HiddenAct:         "silu",
		RMSNormEps:        1e-5,
		TieWordEmbeddings: false,

		NumAttentionHeads: 32,
		NumKeyValueHeads:  32,
		QLoraRank:         nil,
		KVLoraRank:        512,
		QKNopeHeadDim:     128,
		QKRopeHeadDim:     64,
		VHeadDim:          128,
		MLAUseNope:        true,

		LinearAttn: LinearAttnConfig{
			NumHeads:            32,
			HeadDim:             128,
			ShortConvKernelSize: 4,
			KDALayers:           []int{1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26},
			FullAttnLayers:      []int{4, 8, 12, 16, 20, 24, 27},
		},

		NumExperts:              256,
		NumExpertsPerToken:      8,
		NumSharedExperts:        1,
		MoEIntermediateSize:     1024,
		FirstKDenseReplace:      1,
		MoELayerFreq:            1,
		MoERouterActivationFunc: "sigmoid",
		MoERenormalize:          true,
		RoutedScalingFactor:     2.446,
		UseGroupedTopK:          true,
		NumExpertGroup:          1,
		TopKGroup:               1,
		NumNextNPredictLayers:   0,

		BOSTokenID:     163584,
		EOSTokenID:     163586,
		PadTokenID:     163839,
		Dtype:          "bfloat16",
		ModelMaxLength: 1048576,

		HeadDim:   72,
		RopeTheta: 10000.0,
	}
}
