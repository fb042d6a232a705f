package gguf

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// MaxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
const MaxDims = 4

// maxArrayDepth bounds the nesting of metadata arrays.
const maxArrayDepth = 16

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// Minimum encoded sizes used to bound counts before allocating.
const (
	minKVBytes     = 8 + 4 + 1     // key length, value type, a uint8
	minTensorBytes = 8 + 4 + 4 + 8 // name length, n_dims, type, offset
)

// part is one parsed GGUF file (one part of a split set, or the whole file).
type part struct {
	path      string
	data      []byte
	release   func([]byte) error
	version   uint32
	alignment uint64
	meta      *Metadata
	tensors   []TensorInfo
	dataStart uint64
	infoPos   []uint64 // file offset of each tensor info (tests patch files with it)
}

// truncated reports a read past the end of the file.
type truncated struct {
	field          string
	need, at, have uint64
}

func (e *truncated) Error() string {
	return fmt.Sprintf("file truncated in the %s: needs %d bytes at offset %d, the file has %d", e.field, e.need, e.at, e.have)
}

// reader decodes little-endian fields from b.
type reader struct {
	b   []byte
	off uint64
}

func (r *reader) left() uint64 { return uint64(len(r.b)) - r.off }

func (r *reader) take(n uint64, field string) ([]byte, error) {
	if n > r.left() {
		return nil, &truncated{field, n, r.off, uint64(len(r.b))}
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

func (r *reader) u32(field string) (uint32, error) {
	s, err := r.take(4, field)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

func (r *reader) u64(field string) (uint64, error) {
	s, err := r.take(8, field)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

// str reads a string: a uint64 length, checked against the bytes left, and
// the bytes.
func (r *reader) str(field string) (string, error) {
	n, err := r.u64(field + " length")
	if err != nil {
		return "", err
	}
	if n > r.left() {
		return "", fmt.Errorf("%s length %d exceeds the %d bytes left in the file (truncated or corrupt)", field, n, r.left())
	}
	s, _ := r.take(n, field)
	return string(s), nil
}

// value reads a value of type t.
func (r *reader) value(t ValueType, depth int) (Value, error) {
	if !t.Valid() {
		return Value{}, fmt.Errorf("unknown value type %d", uint32(t))
	}
	switch t {
	case ValueString:
		s, err := r.str("string")
		return Value{t, s}, err
	case ValueArray:
		a, err := r.array(depth + 1)
		return Value{t, a}, err
	case ValueBool:
		s, err := r.take(1, "bool")
		if err != nil {
			return Value{}, err
		}
		if s[0] > 1 {
			return Value{}, fmt.Errorf("bool value %d is neither 0 nor 1", s[0])
		}
		return Value{t, s[0] == 1}, nil
	}
	s, err := r.take(valueTypeSizes[t], t.String())
	if err != nil {
		return Value{}, err
	}
	var x any
	switch t {
	case ValueUint8:
		x = s[0]
	case ValueInt8:
		x = int8(s[0])
	case ValueUint16:
		x = binary.LittleEndian.Uint16(s)
	case ValueInt16:
		x = int16(binary.LittleEndian.Uint16(s))
	case ValueUint32:
		x = binary.LittleEndian.Uint32(s)
	case ValueInt32:
		x = int32(binary.LittleEndian.Uint32(s))
	case ValueFloat32:
		x = math.Float32frombits(binary.LittleEndian.Uint32(s))
	case ValueUint64:
		x = binary.LittleEndian.Uint64(s)
	case ValueInt64:
		x = int64(binary.LittleEndian.Uint64(s))
	case ValueFloat64:
		x = math.Float64frombits(binary.LittleEndian.Uint64(s))
	}
	return Value{t, x}, nil
}

// array reads an array's element type, count and elements. The count is
// checked against the bytes left before the elements are allocated.
func (r *reader) array(depth int) (*Array, error) {
	if depth > maxArrayDepth {
		return nil, fmt.Errorf("arrays nested more than %d deep", maxArrayDepth)
	}
	et, err := r.u32("array element type")
	if err != nil {
		return nil, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		return nil, fmt.Errorf("array of unknown value type %d", et)
	}
	n, err := r.u64("array length")
	if err != nil {
		return nil, err
	}
	if n > r.left()/elem.minSize() {
		return nil, fmt.Errorf("array of %d %s cannot fit in the %d bytes left in the file (truncated or corrupt)", n, elem, r.left())
	}
	a := &Array{Elem: elem}
	if sz := valueTypeSizes[elem]; sz != 0 {
		s, _ := r.take(n*sz, "array")
		a.data, err = decodeFixed(elem, s, int(n))
		return a, err
	}
	switch elem {
	case ValueString:
		d := make([]string, n)
		for i := range d {
			if d[i], err = r.str(fmt.Sprintf("string %d of %d", i, n)); err != nil {
				return nil, err
			}
		}
		a.data = d
	case ValueArray:
		d := make([]*Array, n)
		for i := range d {
			if d[i], err = r.array(depth + 1); err != nil {
				if depth == 1 {
					err = fmt.Errorf("element %d of %d: %w", i, n, err)
				}
				return nil, err
			}
		}
		a.data = d
	}
	return a, nil
}

// decodeFixed decodes n little-endian elements of a fixed-size type.
func decodeFixed(t ValueType, s []byte, n int) (any, error) {
	le := binary.LittleEndian
	switch t {
	case ValueUint8:
		return slices.Clone(s), nil
	case ValueInt8:
		d := make([]int8, n)
		for i := range d {
			d[i] = int8(s[i])
		}
		return d, nil
	case ValueBool:
		d := make([]bool, n)
		for i := range d {
			if s[i] > 1 {
				return nil, fmt.Errorf("bool element %d is %d, neither 0 nor 1", i, s[i])
			}
			d[i] = s[i] == 1
		}
		return d, nil
	case ValueUint16:
		d := make([]uint16, n)
		for i := range d {
			d[i] = le.Uint16(s[2*i:])
		}
		return d, nil
	case ValueInt16:
		d := make([]int16, n)
		for i := range d {
			d[i] = int16(le.Uint16(s[2*i:]))
		}
		return d, nil
	case ValueUint32:
		d := make([]uint32, n)
		for i := range d {
			d[i] = le.Uint32(s[4*i:])
		}
		return d, nil
	case ValueInt32:
		d := make([]int32, n)
		for i := range d {
			d[i] = int32(le.Uint32(s[4*i:]))
		}
		return d, nil
	case ValueFloat32:
		d := make([]float32, n)
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(s[4*i:]))
		}
		return d, nil
	case ValueUint64:
		d := make([]uint64, n)
		for i := range d {
			d[i] = le.Uint64(s[8*i:])
		}
		return d, nil
	case ValueInt64:
		d := make([]int64, n)
		for i := range d {
			d[i] = int64(le.Uint64(s[8*i:]))
		}
		return d, nil
	case ValueFloat64:
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(s[8*i:]))
		}
		return d, nil
	}
	return nil, fmt.Errorf("internal error: %s is not fixed-size", t)
}

// parsePart parses and validates the GGUF file held in data. path is used in
// errors only.
func parsePart(path string, data []byte) (*part, error) {
	fail := func(format string, args ...any) (*part, error) {
		return nil, errorf(path, "", "", format, args...)
	}
	r := &reader{b: data}
	magic, err := r.take(4, "magic")
	if err != nil {
		return fail("file is %d bytes: truncated in the GGUF magic", len(data))
	}
	if string(magic) != "GGUF" {
		return fail("not a GGUF file: starts with %q, not \"GGUF\"", magic)
	}
	ver, err := r.u32("version")
	if err != nil {
		return fail("%v", err)
	}
	switch sw := bits.ReverseBytes32(ver); {
	case ver == 3:
	case ver == 1 || ver == 2:
		return fail("GGUF version %d is not supported, only version 3 (convert the model again with a current llama.cpp)", ver)
	case sw >= 1 && sw <= 3:
		return fail("big-endian GGUF file (the version field reads %d byte-swapped); only little-endian files are supported", sw)
	default:
		return fail("GGUF version %d is not supported, only version 3", ver)
	}
	nt, err := r.u64("tensor count")
	if err != nil {
		return fail("%v", err)
	}
	nkv, err := r.u64("metadata count")
	if err != nil {
		return fail("%v", err)
	}
	if nkv > r.left()/minKVBytes {
		return fail("metadata count %d cannot fit in the %d bytes after the header (a key/value takes at least %d; truncated or corrupt)", nkv, r.left(), minKVBytes)
	}
	if nt > (r.left()-nkv*minKVBytes)/minTensorBytes {
		return fail("tensor count %d cannot fit in the %d bytes after the header (a tensor info takes at least %d; truncated or corrupt)", nt, r.left(), minTensorBytes)
	}
	p := &part{path: path, data: data, version: ver, alignment: DefaultAlignment}

	// ---- metadata
	meta := &Metadata{path: path, keys: make([]string, 0, nkv), m: make(map[string]Value, nkv)}
	for i := uint64(0); i < nkv; i++ {
		key, err := r.str("metadata key")
		if err != nil {
			return fail("metadata key/value %d of %d: %v", i, nkv, err)
		}
		if _, dup := meta.m[key]; dup {
			return nil, errorf(path, "", key, "duplicate metadata key")
		}
		vt, err := r.u32("value type")
		if err != nil {
			return nil, errorf(path, "", key, "%v", err)
		}
		v, err := r.value(ValueType(vt), 0)
		if err != nil {
			return nil, errorf(path, "", key, "%v", err)
		}
		meta.keys = append(meta.keys, key)
		meta.m[key] = v
	}
	p.meta = meta
	if v, ok := meta.m["general.alignment"]; ok {
		a, isU32 := v.x.(uint32)
		if !isU32 {
			return nil, errorf(path, "", "general.alignment", "is a %s; GGUF requires a uint32", v.Type)
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, errorf(path, "", "general.alignment", "%d is not a power of two", a)
		}
		p.alignment = uint64(a)
	}

	// ---- tensor infos
	if nt > r.left()/minTensorBytes {
		return fail("tensor count %d cannot fit in the %d bytes after the metadata (a tensor info takes at least %d; truncated or corrupt)", nt, r.left(), minTensorBytes)
	}
	p.tensors = make([]TensorInfo, nt)
	p.infoPos = make([]uint64, nt)
	seen := make(map[string]bool, nt)
	for i := range p.tensors {
		p.infoPos[i] = r.off
		name, err := r.str("tensor name")
		if err != nil {
			return fail("tensor info %d of %d: %v", i, nt, err)
		}
		tfail := func(format string, args ...any) (*part, error) {
			return nil, errorf(path, name, "", format, args...)
		}
		if name == "" {
			return fail("tensor info %d of %d: empty tensor name", i, nt)
		}
		if seen[name] {
			return tfail("duplicate tensor name")
		}
		seen[name] = true
		nd, err := r.u32("n_dims")
		if err != nil {
			return tfail("%v", err)
		}
		if nd > MaxDims {
			return tfail("has %d dimensions; at most %d are allowed", nd, MaxDims)
		}
		dims := make([]uint64, nd)
		for j := range dims {
			if dims[j], err = r.u64("dims"); err != nil {
				return tfail("%v", err)
			}
		}
		ty, err := r.u32("type")
		if err != nil {
			return tfail("%v", err)
		}
		off, err := r.u64("offset")
		if err != nil {
			return tfail("%v", err)
		}
		t := Type(ty)
		size, err := t.ByteSize(dims)
		if err != nil {
			return tfail("%v", err)
		}
		if off%p.alignment != 0 {
			return tfail("offset %d is not a multiple of the alignment %d", off, p.alignment)
		}
		p.tensors[i] = TensorInfo{Name: name, Dims: dims, Type: t, Offset: off, Size: size}
	}

	// ---- data section
	p.dataStart = (r.off + p.alignment - 1) / p.alignment * p.alignment
	var dataLen uint64
	if p.dataStart <= uint64(len(data)) {
		dataLen = uint64(len(data)) - p.dataStart
	}
	order := make([]int, nt)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ta, tb := &p.tensors[a], &p.tensors[b]
		if c := cmp.Compare(ta.Offset, tb.Offset); c != 0 {
			return c
		}
		return cmp.Compare(ta.Size, tb.Size)
	})
	var last *TensorInfo
	for _, i := range order {
		t := &p.tensors[i]
		t.FileOffset = p.dataStart + t.Offset
		if t.Offset > dataLen || t.Size > dataLen-t.Offset {
			return nil, errorf(path, t.Name, "", "data [%d, %d) of the data section (%s %v) extends past its end (%d bytes from file offset %d; the file has %d bytes): the file is truncated or the offset is wrong",
				t.Offset, satAdd(t.Offset, t.Size), t.Type, t.Dims, dataLen, p.dataStart, len(data))
		}
		if t.Size == 0 {
			continue
		}
		if last != nil && t.Offset < last.Offset+last.Size {
			return nil, errorf(path, t.Name, "", "data [%d, %d) (%s %v, %d bytes) overlaps tensor %q at [%d, %d) (%s %v, %d bytes)",
				t.Offset, t.Offset+t.Size, t.Type, t.Dims, t.Size, last.Name, last.Offset, last.Offset+last.Size, last.Type, last.Dims, last.Size)
		}
		last = t
	}
	return p, nil
}

func satAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return math.MaxUint64
	}
	return s
}
