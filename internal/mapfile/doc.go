// Package mapfile maps a model file read-only into memory (mmap on Linux
// and macOS) or, elsewhere, reads it in: the one mapping the safetensors,
// GGUF and .kt readers share; and gives anonymous memory on huge pages
// (Anon), where a model's weights can be copied out of that mapping.
package mapfile
