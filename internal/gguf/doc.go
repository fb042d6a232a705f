// Package gguf reads GGUF files, the model format of llama.cpp and ggml:
// version 3, little-endian, with every metadata value type, tensor infos,
// general.alignment, and files split in parts by gguf-split
// (NAME-00001-of-00003.gguf). Tensor data is mapped read-only into memory
// on Linux and macOS, and read into memory elsewhere.
//
// A GGUF file is
//
//	"GGUF" uint32(version=3) uint64(tensor count) uint64(metadata count)
//	metadata:     string(key) uint32(value type) value          (repeated)
//	tensor infos: string(name) uint32(n_dims) uint64(dims[n_dims])
//	              uint32(ggml type) uint64(offset)               (repeated)
//	padding to general.alignment (uint32, default 32)
//	data section: each tensor at its offset, a multiple of the alignment
//
// where a string is uint64(length) and its bytes, and dims[0] is the row
// length (ggml's ne[0], the fastest-varying dimension).
//
// Every bad input gives one *Error that names the file and the problem; counts
// and lengths are checked against the bytes left before anything is allocated,
// so a hostile header cannot make the reader allocate more than a small
// multiple of the file's size.
//
// Use:
//
//	f, err := gguf.Open("kimi-Q4_K_M-00001-of-00002.gguf") // opens every part
//	if err != nil { ... }
//	defer f.Close()
//	arch, err := f.Metadata.String("general.architecture")
//	n, err := f.Metadata.Uint("kimi-linear.block_count")  // any integer type
//	for _, t := range f.Tensors { // t.Name, t.Dims, t.Type (t.Type.BlockSize()...), t.Size
//		b, err := f.TensorData(t.Name) // a view into the mapping
//	}
//
// [Write] writes files: small ones from memory (tests, tools), large ones
// streamed tensor by tensor (WriteTensor.Fill: krun synth).
//
// The package only reads and validates the container; it does not dequantize
// nor know any model architecture.
package gguf
