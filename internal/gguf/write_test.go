package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// allValues has a value of every GGUF value type, arrays of each, arrays of
// strings and nested arrays.
func allValues() []KV {
	inner1 := MustValue([]int16{-1, 2}).x.(*Array)
	inner2 := MustValue([]string{"x", ""}).x.(*Array)
	vals := []any{
		uint8(200), int8(-100), uint16(60000), int16(-30000), uint32(4e9), int32(-2e9),
		float32(1.5), true, false, "héllo", uint64(1 << 63), int64(-1 << 62), math.Pi,
		[]uint8{1, 2}, []int8{-1}, []uint16{}, []int16{7}, []uint32{1, 2, 3}, []int32{-5},
		[]float32{0.25}, []bool{true, false}, []string{"a", "bc", ""}, []uint64{9}, []int64{-9}, []float64{2.5},
		[]*Array{inner1, inner2, MustValue([]*Array{inner1}).x.(*Array)},
	}
	kvs := make([]KV, len(vals))
	for i, v := range vals {
		kvs[i] = KV{fmt.Sprintf("k%02d.%T", i, v), MustValue(v)}
	}
	return kvs
}

// TestWriteRoundTrip writes every value type and a tensor of each sizeable
// type, and reads them back.
func TestWriteRoundTrip(t *testing.T) {
	kvs := allValues()
	var tensors []WriteTensor
	for id := range Type(len(traits)) {
		if !id.Known() {
			continue
		}
		dims := []uint64{uint64(id.BlockSize()) * 2, 3}
		size, err := id.ByteSize(dims)
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte{byte(id)}, int(size))
		tensors = append(tensors, WriteTensor{Name: "t." + id.String(), Dims: dims, Type: id, Data: data})
	}
	var b bytes.Buffer
	if err := Write(&b, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	f, err := FromBytes("rt.gguf", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.Metadata.Keys(); len(got) != len(kvs) {
		t.Fatalf("%d keys, want %d", len(got), len(kvs))
	}
	for i, kv := range kvs {
		if f.Metadata.Keys()[i] != kv.Key {
			t.Errorf("key %d = %q, want %q", i, f.Metadata.Keys()[i], kv.Key)
		}
		v, _ := f.Metadata.Get(kv.Key)
		if v.Type != kv.Value.Type || !reflect.DeepEqual(v.Any(), kv.Value.Any()) {
			t.Errorf("%s = %s %v, want %s %v", kv.Key, v.Type, v, kv.Value.Type, kv.Value)
		}
	}
	checkFile(t, f)
	for _, wt := range tensors {
		got, err := f.TensorData(wt.Name)
		if err != nil || !bytes.Equal(got, wt.Data) {
			t.Errorf("%s: data differs (%v)", wt.Name, err)
		}
		ti, _ := f.Tensor(wt.Name)
		if ti.Type != wt.Type || !reflect.DeepEqual(ti.Dims, wt.Dims) || ti.NumElements() != wt.Dims[0]*wt.Dims[1] {
			t.Errorf("%s: info %+v", wt.Name, ti)
		}
	}

	// typed getters and their errors
	m := f.Metadata
	check := func(what string, got any, err error, want any) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, %v; want %v", what, got, err, want)
		}
	}
	u, err := m.Uint("k04.uint32")
	check("Uint(uint32)", u, err, uint64(4e9))
	u, err = m.Uint("k00.uint8")
	check("Uint(uint8)", u, err, uint64(200))
	i, err := m.Int("k05.int32")
	check("Int(int32)", i, err, int64(-2e9))
	fl, err := m.Float("k06.float32")
	check("Float(float32)", fl, err, 1.5)
	bo, err := m.Bool("k07.bool")
	check("Bool", bo, err, true)
	s, err := m.String("k09.string")
	check("String", s, err, "héllo")
	ss, err := m.Strings("k21.[]string")
	check("Strings", ss, err, []string{"a", "bc", ""})
	a, err := m.Array("k18.[]int32")
	check("Array", a.Data(), err, []int32{-5})
	ints, ok := a.Ints()
	check("Ints", ints, nil, []int64{-5})
	if !ok {
		t.Error("Ints failed")
	}
	a, _ = m.Array("k24.[]float64")
	floats, _ := a.Floats()
	check("Floats", floats, nil, []float64{2.5})
	for _, c := range []struct {
		call func() error
		want string
	}{
		{func() error { _, err := m.Uint("k05.int32"); return err }, `rt.gguf: metadata "k05.int32": is a int32 (-2000000000), not a non-negative integer`},
		{func() error { _, err := m.Int("k12.float64"); return err }, "is a float64"},
		{func() error { _, err := m.Float("k04.uint32"); return err }, "not a float32 or float64"},
		{func() error { _, err := m.String("k18.[]int32"); return err }, "is a array ([int32 × 1: -5]), not a string"},
		{func() error { _, err := m.Strings("k18.[]int32"); return err }, "is an array of int32, not of string"},
		{func() error { _, err := m.Bool("nope"); return err }, `metadata "nope": no such metadata key`},
		{func() error { _, err := f.TensorData("nope"); return err }, `tensor "nope": no such tensor`},
	} {
		err := c.call()
		var ge *Error
		if !errors.As(err, &ge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v; want one containing %q", err, c.want)
		}
	}
	if _, err := NewValue(struct{}{}); err == nil {
		t.Error("NewValue(struct{}{}) accepted")
	}
	f.Close()
	if _, err := f.TensorData(tensors[0].Name); err == nil || !strings.Contains(err.Error(), "file is closed") {
		t.Errorf("TensorData after Close: %v", err)
	}
}

// TestTypeTable checks ggml's block sizes through the bits per weight that
// ggml-common.h states for each type.
func TestTypeTable(t *testing.T) {
	bpw := map[Type]float64{
		TypeF32: 32, TypeF16: 16, TypeBF16: 16, TypeF64: 64, TypeI8: 8, TypeI16: 16, TypeI32: 32, TypeI64: 64,
		TypeQ4_0: 4.5, TypeQ4_1: 5, TypeQ5_0: 5.5, TypeQ5_1: 6, TypeQ8_0: 8.5, TypeQ8_1: 9,
		TypeQ2_K: 2.625, TypeQ3_K: 3.4375, TypeQ4_K: 4.5, TypeQ5_K: 5.5, TypeQ6_K: 6.5625, TypeQ8_K: 9.125,
		TypeIQ2_XXS: 2.0625, TypeIQ2_XS: 2.3125, TypeIQ2_S: 2.5625, TypeIQ3_XXS: 3.0625, TypeIQ3_S: 3.4375,
		TypeIQ1_S: 1.5625, TypeIQ1_M: 1.75, TypeIQ4_NL: 4.5, TypeIQ4_XS: 4.25,
		TypeTQ1_0: 1.6875, TypeTQ2_0: 2.0625, TypeMXFP4: 4.25,
	}
	n := 0
	for id := range Type(64) {
		if !id.Known() {
			if id.BlockSize() != 0 || !strings.Contains(fmt.Sprint(id.ByteSize([]uint64{256})), "type") {
				t.Errorf("%d: unknown type sized", id)
			}
			continue
		}
		n++
		want, ok := bpw[id]
		got := float64(id.BlockBytes()*8) / float64(id.BlockSize())
		if !ok || got != want {
			t.Errorf("%s: %v bits per weight, want %v", id, got, want)
		}
	}
	if n != len(bpw) {
		t.Errorf("%d known types, %d listed", n, len(bpw))
	}
	if TypeQ4_K.String() != "q4_K" || Type(99).String() != "type(99)" {
		t.Error("names")
	}
}

// TestSplit writes a set of three parts as gguf-split does (all metadata in
// the first, split.* keys in each) and opens it from each part.
func TestSplit(t *testing.T) {
	dir := t.TempDir()
	name := func(i int) string { return filepath.Join(dir, fmt.Sprintf("m-%05d-of-00003.gguf", i)) }
	mk := func(n string, val byte) WriteTensor {
		return WriteTensor{Name: n, Dims: []uint64{32, 2}, Type: TypeQ8_0, Data: bytes.Repeat([]byte{val}, 68)}
	}
	parts := [][]WriteTensor{{mk("a", 1), mk("b", 2)}, {mk("c", 3)}, {mk("d", 4), mk("e", 5)}}
	write := func(i int, tensorsCount int32) {
		meta := []KV{
			{KeySplitNo, MustValue(uint16(i))},
			{KeySplitCount, MustValue(uint16(3))},
			{KeySplitTensorsCount, MustValue(tensorsCount)},
		}
		if i == 0 {
			meta = append([]KV{{"general.architecture", MustValue("kimi-linear")}}, meta...)
		}
		var b bytes.Buffer
		if err := Write(&b, meta, parts[i]); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name(i+1), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range parts {
		write(i, 5)
	}
	for i := 1; i <= 3; i++ {
		f, err := Open(name(i))
		if err != nil {
			t.Fatal(err)
		}
		if f.Path != name(1) || len(f.Parts) != 3 || len(f.Tensors) != 5 {
			t.Errorf("opened from part %d: path %s, %d parts, %d tensors", i, f.Path, len(f.Parts), len(f.Tensors))
		}
		if a, _ := f.Metadata.String("general.architecture"); a != "kimi-linear" {
			t.Errorf("metadata not from the first part: %q", a)
		}
		checkFile(t, f)
		for j, n := range []string{"a", "b", "c", "d", "e"} {
			b, err := f.TensorData(n)
			if err != nil || !bytes.Equal(b, bytes.Repeat([]byte{byte(j + 1)}, 68)) {
				t.Errorf("tensor %s: %v", n, err)
			}
		}
		if ti, _ := f.Tensor("d"); ti.Part != 2 {
			t.Errorf("d in part %d", ti.Part)
		}
		f.Close()
	}
	data, _ := os.ReadFile(name(1))
	if _, err := FromBytes(name(1), data); err == nil || !strings.Contains(err.Error(), "part of a split file") {
		t.Errorf("FromBytes of a part: %v", err)
	}

	// wrong total, wrong part number, a missing part
	write(0, 6)
	if _, err := Open(name(2)); err == nil || !strings.Contains(err.Error(), `"split.tensors.count": is 6 but the 3 parts hold 5 tensors`) {
		t.Errorf("wrong tensor count: %v", err)
	}
	write(0, 5)
	write(2, 5)
	if err := os.Rename(name(3), name(3)+".x"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(name(1)); err == nil || !strings.Contains(err.Error(), "split part 3 of 3 ("+name(3)+") is missing") {
		t.Errorf("missing part: %v", err)
	}
	if err := os.Rename(name(3)+".x", name(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(name(1)); err == nil || !strings.Contains(err.Error(), "split metadata says part 3 of 3; expected part 2 of 3") {
		t.Errorf("part in the wrong place: %v", err)
	}
	if err := os.Rename(name(2), filepath.Join(dir, "renamed.gguf")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "renamed.gguf")); err == nil || !strings.Contains(err.Error(), "file name does not end in -NNNNN-of-00003.gguf") {
		t.Errorf("renamed part: %v", err)
	}
}

// goldenContents reads a golden GGUF file's metadata and tensors for Write.
func goldenContents(t *testing.T, suffix string) (path string, kvs []KV, tensors []WriteTensor) {
	t.Helper()
	_, paths := goldenGGUFs(t)
	for _, p := range paths {
		if strings.HasSuffix(p, suffix) {
			path = p
		}
	}
	if path == "" {
		t.Skipf("no golden *%s file", suffix)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	for _, k := range f.Metadata.Keys() {
		v, _ := f.Metadata.Get(k)
		kvs = append(kvs, KV{k, v})
	}
	for _, ti := range f.Tensors {
		b, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		tensors = append(tensors, WriteTensor{Name: ti.Name, Dims: ti.Dims, Type: ti.Type, Data: b})
	}
	return path, kvs, tensors
}

// TestRewriteGolden writes a golden file's metadata and tensors again: the
// bytes equal llama.cpp's file (which adds only zero padding at the end), so
// the reader has every offset and the alignment right.
func TestRewriteGolden(t *testing.T) {
	path, kvs, tensors := goldenContents(t, "-Q4_K_M.gguf")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	got := b.Bytes()
	if len(got) > len(orig) || !bytes.Equal(got, orig[:len(got)]) || bytes.ContainsFunc(orig[len(got):], func(r rune) bool { return r != 0 }) {
		n := 0
		for n < min(len(got), len(orig)) && got[n] == orig[n] {
			n++
		}
		t.Fatalf("rewritten file (%d bytes) differs from %s (%d bytes) at byte %d", len(got), path, len(orig), n)
	}
}

// TestSplitGolden splits a golden file into three parts as gguf-split does
// and checks every tensor reads back the same.
func TestSplitGolden(t *testing.T) {
	_, kvs, tensors := goldenContents(t, "-Q4_K_M.gguf")
	dir := t.TempDir()
	cuts := []int{0, len(tensors) / 3, 2 * len(tensors) / 3, len(tensors)}
	for i := range 3 {
		meta := []KV{
			{KeySplitNo, MustValue(uint16(i))},
			{KeySplitCount, MustValue(uint16(3))},
			{KeySplitTensorsCount, MustValue(int32(len(tensors)))},
		}
		if i == 0 {
			meta = append(slices.Clone(kvs), meta...)
		}
		var b bytes.Buffer
		if err := Write(&b, meta, tensors[cuts[i]:cuts[i+1]]); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("g-%05d-of-00003.gguf", i+1)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Open(filepath.Join(dir, "g-00003-of-00003.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Tensors) != len(tensors) || f.Metadata.Len() != len(kvs)+3 {
		t.Fatalf("%d tensors, %d keys; want %d, %d", len(f.Tensors), f.Metadata.Len(), len(tensors), len(kvs)+3)
	}
	for i, wt := range tensors {
		ti := f.Tensors[i]
		b, err := f.TensorData(wt.Name)
		if err != nil || ti.Name != wt.Name || !bytes.Equal(b, wt.Data) || ti.Part != sort.SearchInts(cuts[1:], i+1) {
			t.Errorf("%s: part %d, err %v, data equal %v", wt.Name, ti.Part, err, bytes.Equal(b, wt.Data))
		}
	}
}

// TestWriteFill: tensors streamed through Fill give the bytes Data gives;
// Size is the written length; a Fill that writes too few or too many
// bytes, or fails, is an error naming the tensor.
func TestWriteFill(t *testing.T) {
	kvs := []KV{{"general.architecture", MustValue("x")}, {"general.alignment", MustValue(uint32(64))}}
	var held, streamed []WriteTensor
	for i, tp := range []Type{TypeF32, TypeQ4_K, TypeQ8_0, TypeF16} {
		dims := []uint64{uint64(tp.BlockSize()) * 3, uint64(i + 1)}
		size, _ := tp.ByteSize(dims)
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(i*31 + j)
		}
		name := fmt.Sprintf("t%d", i)
		held = append(held, WriteTensor{Name: name, Dims: dims, Type: tp, Data: data})
		streamed = append(streamed, WriteTensor{Name: name, Dims: dims, Type: tp, Fill: func(w io.Writer) error {
			for k := 0; k < len(data); k += 7 { // in pieces
				if _, err := w.Write(data[k:min(k+7, len(data))]); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	var a, b bytes.Buffer
	if err := Write(&a, kvs, held); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, kvs, streamed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("Fill wrote other bytes than Data")
	}
	size, err := Size(kvs, streamed)
	if err != nil || size != uint64(b.Len()) {
		t.Fatalf("Size = %d, %v; wrote %d", size, err, b.Len())
	}
	if _, err := FromBytes("fill.gguf", b.Bytes()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fill func(w io.Writer) error
		want string
	}{
		{func(w io.Writer) error { _, err := w.Write(make([]byte, 5)); return err }, `tensor "t1": Fill wrote 5 bytes`},
		{func(w io.Writer) error { _, err := w.Write(make([]byte, 1<<20)); return err }, `tensor "t1": Fill wrote 1048576 bytes`},
		{func(w io.Writer) error { return errors.New("boom") }, `tensor "t1": boom`},
	} {
		bad := slices.Clone(streamed)
		bad[1].Fill = c.fill
		if err := Write(io.Discard, kvs, bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
}
