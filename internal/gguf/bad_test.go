package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenBytes reads the golden GGUF file whose name ends in suffix.
func goldenBytes(t *testing.T, suffix string) []byte {
	t.Helper()
	_, paths := goldenGGUFs(t)
	for _, p := range paths {
		if strings.HasSuffix(p, suffix) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Skipf("no golden *%s file", suffix)
	return nil
}

// wantError checks that FromBytes refuses data with one *Error that names the
// file and contains each of wants.
func wantError(t *testing.T, name string, data []byte, wants ...string) {
	t.Helper()
	f, err := FromBytes("bad.gguf", data)
	if err == nil {
		f.Close()
		t.Errorf("%s: accepted", name)
		return
	}
	var ge *Error
	if !errors.As(err, &ge) {
		t.Errorf("%s: error %v is a %T", name, err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "gguf: bad.gguf: ") || strings.Contains(msg, "\n") {
		t.Errorf("%s: error %q does not start with the file name or spans lines", name, msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q lacks %q", name, msg, w)
		}
	}
	t.Logf("%s: %v", name, err)
}

// patched returns a copy of data with b written at off.
func patched(data []byte, off uint64, b []byte) []byte {
	c := bytes.Clone(data)
	copy(c[off:], b)
	return c
}

func u32b(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64b(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// kvValueAt returns the offset of the value type field of metadata key.
func kvValueAt(t *testing.T, data []byte, key string) uint64 {
	t.Helper()
	i := bytes.Index(data, append(u64b(uint64(len(key))), key...))
	if i < 0 {
		t.Fatalf("key %q not found", key)
	}
	return uint64(i + 8 + len(key))
}

// infoFields returns the offsets of the n_dims, type and offset fields of
// tensor info i.
func infoFields(p *part, i int) (ndims, typ, off uint64) {
	ndims = p.infoPos[i] + 8 + uint64(len(p.tensors[i].Name))
	typ = ndims + 4 + 8*uint64(len(p.tensors[i].Dims))
	return ndims, typ, typ + 4
}

// TestBadInputs corrupts a real file in memory in each way the reader must
// refuse, and checks each gives one error naming the file and the problem.
func TestBadInputs(t *testing.T) {
	data := goldenBytes(t, "-Q8_0.gguf")
	p, err := parsePart("good.gguf", data)
	if err != nil {
		t.Fatal(err)
	}
	// find two tensors whose names have the same length, and a q8_0 and an
	// f32 one
	var q8, f32 = -1, -1
	sameLen := map[int]int{}
	dupA, dupB := -1, -1
	for i, ti := range p.tensors {
		if ti.Type == TypeQ8_0 && q8 < 0 {
			q8 = i
		}
		if ti.Type == TypeF32 && len(ti.Dims) == 2 && f32 < 0 && ti.Size%p.alignment == 0 && followed(p, ti) {
			f32 = i
		}
		if j, ok := sameLen[len(ti.Name)]; ok && dupA < 0 {
			dupA, dupB = j, i
		}
		sameLen[len(ti.Name)] = i
	}
	if q8 < 0 || f32 < 0 || dupA < 0 {
		t.Fatalf("test file lacks a q8_0 (%d) or 2-D f32 (%d) tensor or two same-length names", q8, f32)
	}
	last := len(p.tensors) - 1

	// ---- truncation
	for _, n := range []uint64{0, 3, 6, 12, 20, 30, kvValueAt(t, data, "tokenizer.ggml.tokens") + 200,
		p.infoPos[5] + 3, p.infoPos[last] + 40, p.dataStart - 1, uint64(len(data)) - 1} {
		wantError(t, "truncated", data[:n], "truncated")
	}
	// every length in the header: an error, never a panic
	for n := uint64(0); n < p.dataStart; n += 1 + n/256 {
		if f, err := FromBytes("bad.gguf", data[:n]); err == nil {
			f.Close()
			t.Fatalf("truncated to %d bytes: accepted", n)
		}
	}

	// ---- magic, version, endianness
	wantError(t, "magic", patched(data, 0, []byte("GGML")), "not a GGUF file")
	wantError(t, "v1", patched(data, 4, u32b(1)), "version 1 is not supported, only version 3")
	wantError(t, "v2", patched(data, 4, u32b(2)), "version 2 is not supported")
	wantError(t, "v4", patched(data, 4, u32b(4)), "version 4 is not supported")
	wantError(t, "big-endian", patched(data, 4, []byte{0, 0, 0, 3}), "big-endian")

	// ---- counts that cannot fit (refused before allocating)
	wantError(t, "tensor count", patched(data, 8, u64b(1<<62)), "tensor count 4611686018427387904 cannot fit")
	wantError(t, "metadata count", patched(data, 16, u64b(1<<62)), "metadata count 4611686018427387904 cannot fit")
	wantError(t, "key length", patched(data, 24, u64b(1<<40)), "key length 1099511627776 exceeds")
	tok := kvValueAt(t, data, "tokenizer.ggml.tokens")
	wantError(t, "array length", patched(data, tok+8, u64b(1<<50)), "tokenizer.ggml.tokens", "array of 1125899906842624 string cannot fit")
	wantError(t, "string length", patched(data, tok+16, u64b(1<<40)), "tokenizer.ggml.tokens", "string 0 of 512 length 1099511627776 exceeds")
	nd, _, _ := infoFields(p, 0)
	wantError(t, "n_dims", patched(data, nd, u32b(1000)), "has 1000 dimensions; at most 4")

	// ---- metadata
	wantError(t, "duplicate key", patched(data, kvValueAt(t, data, "general.name")-12, []byte("general.type")), `metadata "general.type": duplicate metadata key`)
	wantError(t, "value type", patched(data, kvValueAt(t, data, "general.name"), u32b(13)), `metadata "general.name": unknown value type 13`)
	wantError(t, "array type", patched(data, tok+4, u32b(77)), "array of unknown value type 77")

	// ---- tensor infos
	_, ty, off := infoFields(p, q8)
	qname := p.tensors[q8].Name
	wantError(t, "unknown type", patched(data, ty, u32b(99)), qname, "unknown ggml type id 99")
	wantError(t, "removed type", patched(data, ty, u32b(4)), qname, "type 4 (q4_2) was removed")
	wantError(t, "block size", patched(data, nd+4, u64b(33)), p.tensors[0].Name, "is not a multiple of")
	wantError(t, "misaligned", patched(data, off, u64b(p.tensors[q8].Offset+1)), qname, "not a multiple of the alignment 32")
	wantError(t, "out of range", patched(data, off, u64b(1<<40)), qname, "extends past its end")
	_, _, off0 := infoFields(p, dupA)
	wantError(t, "overlap", patched(data, off0, u64b(p.tensors[dupB].Offset)), "overlaps tensor")
	// a type whose size disagrees with the space the file gives the tensor
	_, fty, _ := infoFields(p, f32)
	wantError(t, "size", patched(data, fty, u32b(uint32(TypeF64))), p.tensors[f32].Name, "f64")
	wantError(t, "duplicate name", patched(data, p.infoPos[dupB]+8, []byte(p.tensors[dupA].Name)), p.tensors[dupA].Name, "duplicate tensor name")
}

// TestBadWritten checks refusals that are easiest to build with Write.
func TestBadWritten(t *testing.T) {
	write := func(meta []KV, tensors ...WriteTensor) []byte {
		var b bytes.Buffer
		if err := Write(&b, meta, tensors); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	ten := WriteTensor{Name: "a", Dims: []uint64{4}, Type: TypeF32, Data: make([]byte, 16)}
	data := write([]KV{{"general.alignment", MustValue(uint32(64))}}, ten)
	if f, err := FromBytes("ok.gguf", data); err != nil {
		t.Fatal(err)
	} else if f.Alignment != 64 || f.Tensors[0].FileOffset%64 != 0 {
		t.Errorf("alignment %d, offset %d", f.Alignment, f.Tensors[0].FileOffset)
	}
	at := kvValueAt(t, data, "general.alignment")
	wantError(t, "alignment 48", patched(data, at+4, u32b(48)), `metadata "general.alignment": 48 is not a power of two`)
	wantError(t, "alignment 0", patched(data, at+4, u32b(0)), "0 is not a power of two")

	data = write([]KV{{"general.alignmenx", MustValue(uint64(32))}}, ten)
	wantError(t, "alignment uint64", patched(data, 24+8, []byte("general.alignment")), "general.alignment", "is a uint64; GGUF requires a uint32")

	data = write([]KV{{"b", MustValue(true)}})
	wantError(t, "bool", patched(data, kvValueAt(t, data, "b")+4, []byte{2}), "bool value 2 is neither 0 nor 1")

	a := MustValue([]int32{1}).x.(*Array)
	for range 20 {
		a = &Array{Elem: ValueArray, data: []*Array{a}}
	}
	data = write([]KV{{"deep", Value{ValueArray, a}}})
	wantError(t, "deep", data, "nested more than 16 deep")

	data = write(nil, ten, WriteTensor{Name: "b", Dims: []uint64{4}, Type: TypeF32, Data: make([]byte, 16)})
	wantError(t, "empty name", patched(data, 24, u64b(0)), "empty tensor name")

	data = write(nil, WriteTensor{Name: "z", Dims: []uint64{0}, Type: TypeF32})
	wantError(t, "empty tensor offset", patched(data, 24+8+1+4+8+4, u64b(1<<20)), `tensor "z"`, "extends past its end")

	if err := Write(&bytes.Buffer{}, nil, []WriteTensor{{Name: "x", Dims: []uint64{32}, Type: TypeQ8_0, Data: make([]byte, 33)}}); err == nil ||
		!strings.Contains(err.Error(), "data is 33 bytes, q8_0 [32] takes 34") {
		t.Errorf("Write with a wrong data size: %v", err)
	}
}

// TestOpenErrors checks Open on a missing file and a folder.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "none.gguf"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "none.gguf: cannot open file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("folder: %v", err)
	}
}

// followed reports whether another tensor's data starts right after ti's.
func followed(p *part, ti TensorInfo) bool {
	next := (ti.Offset + ti.Size + p.alignment - 1) / p.alignment * p.alignment
	for _, o := range p.tensors {
		if o.Offset == next && o.Size > 0 {
			return true
		}
	}
	return false
}
