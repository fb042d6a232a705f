// Package arch describes the Kimi Linear architecture (Moonshot's
// Kimi-Linear-48B-A3B and smaller models in the same format): it parses and
// validates the Hugging Face config.json, holds the built-in 48B config, and
// derives everything the autotuner and the engine need from it: the kind of
// each layer, typed kernel shapes, the list of linear projections, the
// checkpoint's tensor names and shapes, parameter counts and per-sequence
// state sizes.
//
// The model is a stack of decoder layers. Each layer has a token mixer, either
// Kimi Delta Attention (KDA, a gated linear-attention recurrence with a fixed
// size state) or Multi-head Latent Attention (MLA, without RoPE and without
// query LoRA), followed by a dense SwiGLU MLP or a sigmoid-routed
// mixture-of-experts block with shared experts.
//
// Layer indices in this package's API are 0-based. The config's
// linear_attn_config.kda_layers and linear_attn_config.full_attn_layers lists
// are 1-based, as in the Hugging Face, vLLM and SGLang code that reads them:
// layer l is a KDA layer when l+1 is in kda_layers.
//
// The package uses only the standard library and imports nothing else from
// the repository, so that both the tuner and the engine can depend on it.
package arch
