package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ktune/ktune/internal/golden"
)

// fuzzSeeds returns small valid files: every value type, a tensor of each
// kind of type, and the header of a golden file (its data cut off).
func fuzzSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	add := func(meta []KV, tensors ...WriteTensor) {
		var b bytes.Buffer
		if err := Write(&b, meta, tensors); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	add(nil)
	add(allValues())
	add([]KV{{"general.alignment", MustValue(uint32(8))}},
		WriteTensor{Name: "a", Dims: []uint64{3}, Type: TypeF32, Data: make([]byte, 12)},
		WriteTensor{Name: "q", Dims: []uint64{32, 1, 1, 2}, Type: TypeQ8_0, Data: make([]byte, 68)},
		WriteTensor{Name: "k", Dims: []uint64{256}, Type: TypeQ4_K, Data: make([]byte, 144)},
		WriteTensor{Name: "z", Dims: []uint64{0, 5}, Type: TypeBF16, Data: nil})
	add([]KV{{KeySplitCount, MustValue(uint16(2))}})
	if dir, err := golden.Dir(); err == nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "gguf", "*.gguf"))
		if len(paths) > 0 {
			if b, err := os.ReadFile(paths[len(paths)-1]); err == nil {
				if p, err := parsePart("x", b); err == nil {
					seeds = append(seeds, b[:p.dataStart])
				}
			}
		}
	}
	return seeds
}

// checkAccepted checks what every accepted File must satisfy, and reads all
// of it.
func checkAccepted(t *testing.T, f *File, size int) {
	for _, k := range f.Metadata.Keys() {
		v, ok := f.Metadata.Get(k)
		if !ok {
			t.Fatalf("key %q listed but absent", k)
		}
		_ = v.String()
		_, _ = f.Metadata.Uint(k)
		_, _ = f.Metadata.Strings(k)
	}
	var total uint64
	for _, ti := range f.Tensors {
		b, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(b)) != ti.Size || ti.FileOffset+ti.Size > uint64(size) && ti.Size > 0 {
			t.Fatalf("%s: %d bytes at %d, size %d, file %d", ti.Name, len(b), ti.FileOffset, ti.Size, size)
		}
		total += ti.Size
	}
	if total > uint64(size) {
		t.Fatalf("tensors total %d bytes in a %d-byte file", total, size)
	}
}

func checkRefused(t *testing.T, err error) {
	var ge *Error
	if !errors.As(err, &ge) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "gguf: fuzz.gguf: ") {
		t.Fatalf("error %q (%T) is not one *Error line naming the file", err, err)
	}
}

// FuzzOpen fuzzes whole in-memory files.
func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte("GGUF\x00\x00\x00\x03"))
	f.Add([]byte("GGU"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := FromBytes("fuzz.gguf", data)
		if err != nil {
			checkRefused(t, err)
			return
		}
		checkAccepted(t, g, len(data))
		g.Close()
	})
}

// FuzzMetadata fuzzes the metadata section after a valid fixed header that
// announces nkv key/values and no tensors.
func FuzzMetadata(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		if len(s) >= 24 && binary.LittleEndian.Uint64(s[8:]) == 0 {
			f.Add(uint8(binary.LittleEndian.Uint64(s[16:])), s[24:])
		}
	}
	f.Add(uint8(1), []byte("\x01\x00\x00\x00\x00\x00\x00\x00k\x09\x00\x00\x00\x09\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, nkv uint8, body []byte) {
		data := append([]byte("GGUF\x03\x00\x00\x00"), make([]byte, 16)...)
		binary.LittleEndian.PutUint64(data[16:], uint64(nkv))
		data = append(data, body...)
		g, err := FromBytes("fuzz.gguf", data)
		if err != nil {
			checkRefused(t, err)
			return
		}
		if g.Metadata.Len() != int(nkv) {
			t.Fatalf("%d keys, header says %d", g.Metadata.Len(), nkv)
		}
		checkAccepted(t, g, len(data))
		// what was read writes back to the same bytes, up to the padding
		var kvs []KV
		for _, k := range g.Metadata.Keys() {
			v, _ := g.Metadata.Get(k)
			kvs = append(kvs, KV{k, v})
		}
		var b bytes.Buffer
		if err := Write(&b, kvs, nil); err != nil {
			if strings.Contains(err.Error(), "general.alignment") {
				return
			}
			t.Fatal(err)
		}
		// the bytes before Write's padding must be those the parser read
		e := &encoder{w: io.Discard}
		e.raw(make([]byte, 24))
		for _, kv := range kvs {
			e.str(kv.Key)
			e.u32(uint32(kv.Value.Type))
			e.value(kv.Value.x)
		}
		if n := e.n; n > uint64(len(data)) || !bytes.Equal(b.Bytes()[:n], data[:n]) {
			t.Fatalf("re-encoding of %d bytes differs from the input", n)
		}
	})
}
