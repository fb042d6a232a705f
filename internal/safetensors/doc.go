// Package safetensors reads and writes files in the safetensors format, the
// tensor container used by Hugging Face checkpoints and by ktune's golden data.
//
// A safetensors file is laid out as follows:
//
//   - bytes 0..8: N, the length of the JSON header, as an unsigned 64-bit
//     little-endian integer;
//   - bytes 8..8+N: a UTF-8 JSON object mapping each tensor name to
//     {"dtype", "shape", "data_offsets": [begin, end)}, where the offsets count
//     from byte 8+N; the optional key "__metadata__" maps strings to strings;
//   - then the raw tensor data, little-endian and row-major.
//
// [Open] maps a file read-only into memory (mmap on Linux and macOS; other
// systems read the file into memory) and validates its header completely, so
// that every accessor can rely on in-range, non-overlapping, correctly sized
// tensors. [OpenCheckpoint] opens a Hugging Face checkpoint folder, sharded or
// not, and [Write] writes a file atomically.
//
// Every problem is reported as an [*Error] that names the file and, where it
// applies, the tensor. No input, however malformed, makes the package panic.
package safetensors
