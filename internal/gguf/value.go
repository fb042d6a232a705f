package gguf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ValueType is the type of a metadata value (enum gguf_type).
type ValueType uint32

// The metadata value types.
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32",
	"float32", "bool", "string", "array", "uint64", "int64", "float64"}

// valueTypeSizes is the encoded size of the fixed-size types, 0 for string
// and array.
var valueTypeSizes = [...]uint64{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// Valid reports whether t is one of the 13 GGUF value types.
func (t ValueType) Valid() bool { return uint64(t) < uint64(len(valueTypeNames)) }

func (t ValueType) String() string {
	if t.Valid() {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value_type(%d)", uint32(t))
}

// minSize returns the fewest bytes a value of type t can be encoded in: its
// size, 8 for a string (the length), 12 for an array (element type, count).
func (t ValueType) minSize() uint64 {
	switch t {
	case ValueString:
		return 8
	case ValueArray:
		return 12
	}
	return valueTypeSizes[t]
}

func (t ValueType) isInt() bool {
	switch t {
	case ValueUint8, ValueInt8, ValueUint16, ValueInt16, ValueUint32, ValueInt32, ValueUint64, ValueInt64:
		return true
	}
	return false
}

// Value is one metadata value. Its Go value (see [Value.Any]) is uint8, int8,
// uint16, int16, uint32, int32, float32, bool, string, *Array, uint64, int64
// or float64, as its Type says.
type Value struct {
	Type ValueType
	x    any
}

// Any returns the value as its Go type.
func (v Value) Any() any { return v.x }

// AsString returns the value of a string.
func (v Value) AsString() (string, bool) { s, ok := v.x.(string); return s, ok }

// AsBool returns the value of a bool.
func (v Value) AsBool() (bool, bool) { b, ok := v.x.(bool); return b, ok }

// AsArray returns the value of an array.
func (v Value) AsArray() (*Array, bool) { a, ok := v.x.(*Array); return a, ok }

// AsUint returns the value of any integer type if it is not negative.
func (v Value) AsUint() (uint64, bool) {
	switch x := v.x.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	if i, ok := v.AsInt(); ok && i >= 0 {
		return uint64(i), true
	}
	return 0, false
}

// AsInt returns the value of any integer type if it fits in an int64.
func (v Value) AsInt() (int64, bool) {
	switch x := v.x.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// AsFloat returns the value of a float32 or float64.
func (v Value) AsFloat() (float64, bool) {
	switch x := v.x.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// String formats the value for people: strings quoted, long arrays cut after
// 8 elements, e.g. `[string × 512: "<t0>", "<t1>", ...]`.
func (v Value) String() string {
	switch x := v.x.(type) {
	case string:
		return quoteCut(x)
	case *Array:
		return x.String()
	case nil:
		return "<nil>"
	}
	return fmt.Sprint(v.x)
}

func quoteCut(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// Array is a metadata array: elements of one type, which may be string or
// array (nested arrays).
type Array struct {
	Elem ValueType
	// data is []uint8, []int8, []uint16, []int16, []uint32, []int32,
	// []float32, []bool, []string, []*Array, []uint64, []int64 or []float64.
	data any
}

// Len returns the number of elements.
func (a *Array) Len() int {
	switch d := a.data.(type) {
	case []uint8:
		return len(d)
	case []int8:
		return len(d)
	case []uint16:
		return len(d)
	case []int16:
		return len(d)
	case []uint32:
		return len(d)
	case []int32:
		return len(d)
	case []float32:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	case []*Array:
		return len(d)
	case []uint64:
		return len(d)
	case []int64:
		return len(d)
	case []float64:
		return len(d)
	}
	return 0
}

// Data returns the elements as a typed slice ([]uint8 ... []float64,
// []bool, []string, or []*Array for nested arrays), shared with the Array.
func (a *Array) Data() any { return a.data }

// Index returns element i as a Value.
func (a *Array) Index(i int) Value {
	var x any
	switch d := a.data.(type) {
	case []uint8:
		x = d[i]
	case []int8:
		x = d[i]
	case []uint16:
		x = d[i]
	case []int16:
		x = d[i]
	case []uint32:
		x = d[i]
	case []int32:
		x = d[i]
	case []float32:
		x = d[i]
	case []bool:
		x = d[i]
	case []string:
		x = d[i]
	case []*Array:
		x = d[i]
	case []uint64:
		x = d[i]
	case []int64:
		x = d[i]
	case []float64:
		x = d[i]
	}
	return Value{Type: a.Elem, x: x}
}

// Strings returns the elements of an array of strings (shared, do not modify).
func (a *Array) Strings() ([]string, bool) { s, ok := a.data.([]string); return s, ok }

// Ints returns the elements of an array of any integer type as int64s (a new
// slice); false if the elements are not integers or a uint64 exceeds MaxInt64.
func (a *Array) Ints() ([]int64, bool) {
	if !a.Elem.isInt() {
		return nil, false
	}
	out := make([]int64, a.Len())
	for i := range out {
		v, ok := a.Index(i).AsInt()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// Floats returns the elements of an array of float32 or float64 as float64s
// (a new slice).
func (a *Array) Floats() ([]float64, bool) {
	switch d := a.data.(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out, true
	case []float64:
		return append([]float64(nil), d...), true
	}
	return nil, false
}

func (a *Array) String() string {
	var sb strings.Builder
	n := a.Len()
	fmt.Fprintf(&sb, "[%s × %d:", a.Elem, n)
	for i := 0; i < n && i < 8; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte(' ')
		sb.WriteString(a.Index(i).String())
	}
	if n > 8 {
		sb.WriteString(", ...")
	}
	sb.WriteByte(']')
	return sb.String()
}

// NewValue makes a Value from a Go value: uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64, float64, a slice of any of
// these (an array), *Array, or []*Array (an array of arrays, all elements
// non-nil).
func NewValue(x any) (Value, error) {
	switch d := x.(type) {
	case uint8:
		return Value{ValueUint8, d}, nil
	case int8:
		return Value{ValueInt8, d}, nil
	case uint16:
		return Value{ValueUint16, d}, nil
	case int16:
		return Value{ValueInt16, d}, nil
	case uint32:
		return Value{ValueUint32, d}, nil
	case int32:
		return Value{ValueInt32, d}, nil
	case float32:
		return Value{ValueFloat32, d}, nil
	case bool:
		return Value{ValueBool, d}, nil
	case string:
		return Value{ValueString, d}, nil
	case uint64:
		return Value{ValueUint64, d}, nil
	case int64:
		return Value{ValueInt64, d}, nil
	case float64:
		return Value{ValueFloat64, d}, nil
	case *Array:
		if d == nil {
			return Value{}, fmt.Errorf("gguf: nil *Array")
		}
		return Value{ValueArray, d}, nil
	}
	var elem ValueType
	switch d := x.(type) {
	case []uint8:
		elem = ValueUint8
	case []int8:
		elem = ValueInt8
	case []uint16:
		elem = ValueUint16
	case []int16:
		elem = ValueInt16
	case []uint32:
		elem = ValueUint32
	case []int32:
		elem = ValueInt32
	case []float32:
		elem = ValueFloat32
	case []bool:
		elem = ValueBool
	case []string:
		elem = ValueString
	case []uint64:
		elem = ValueUint64
	case []int64:
		elem = ValueInt64
	case []float64:
		elem = ValueFloat64
	case []*Array:
		for _, a := range d {
			if a == nil {
				return Value{}, fmt.Errorf("gguf: nil *Array element")
			}
		}
		elem = ValueArray
	default:
		return Value{}, fmt.Errorf("gguf: no GGUF value type for Go type %T", x)
	}
	return Value{ValueArray, &Array{Elem: elem, data: x}}, nil
}

// MustValue is NewValue that panics on an unsupported Go type.
func MustValue(x any) Value {
	v, err := NewValue(x)
	if err != nil {
		panic(err)
	}
	return v
}

// Metadata is a file's key/value metadata in file order.
type Metadata struct {
	path string
	keys []string
	m    map[string]Value
}

// Keys returns the keys in file order (shared; do not modify).
func (m *Metadata) Keys() []string { return m.keys }

// Len returns the number of keys.
func (m *Metadata) Len() int { return len(m.keys) }

// Get returns the value of key.
func (m *Metadata) Get(key string) (Value, bool) { v, ok := m.m[key]; return v, ok }

// Has reports whether key is present.
func (m *Metadata) Has(key string) bool { _, ok := m.m[key]; return ok }

func (m *Metadata) get(key string) (Value, error) {
	v, ok := m.m[key]
	if !ok {
		return v, &Error{Path: m.path, Key: key, Msg: "no such metadata key"}
	}
	return v, nil
}

func (m *Metadata) typeError(key string, v Value, want string) error {
	return &Error{Path: m.path, Key: key, Msg: fmt.Sprintf("is a %s (%s), not %s", v.Type, v, want)}
}

// String returns the value of a string key.
func (m *Metadata) String(key string) (string, error) {
	v, err := m.get(key)
	if err != nil {
		return "", err
	}
	if s, ok := v.AsString(); ok {
		return s, nil
	}
	return "", m.typeError(key, v, "a string")
}

// Uint returns the value of a key of any integer type whose value is not
// negative.
func (m *Metadata) Uint(key string) (uint64, error) {
	v, err := m.get(key)
	if err != nil {
		return 0, err
	}
	if u, ok := v.AsUint(); ok {
		return u, nil
	}
	return 0, m.typeError(key, v, "a non-negative integer")
}

// Int returns the value of a key of any integer type that fits in an int64.
func (m *Metadata) Int(key string) (int64, error) {
	v, err := m.get(key)
	if err != nil {
		return 0, err
	}
	if i, ok := v.AsInt(); ok {
		return i, nil
	}
	return 0, m.typeError(key, v, "an integer that fits in int64")
}

// Float returns the value of a float32 or float64 key.
func (m *Metadata) Float(key string) (float64, error) {
	v, err := m.get(key)
	if err != nil {
		return 0, err
	}
	if f, ok := v.AsFloat(); ok {
		return f, nil
	}
	return 0, m.typeError(key, v, "a float32 or float64")
}

// Bool returns the value of a bool key.
func (m *Metadata) Bool(key string) (bool, error) {
	v, err := m.get(key)
	if err != nil {
		return false, err
	}
	if b, ok := v.AsBool(); ok {
		return b, nil
	}
	return false, m.typeError(key, v, "a bool")
}

// Array returns the value of an array key.
func (m *Metadata) Array(key string) (*Array, error) {
	v, err := m.get(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.AsArray(); ok {
		return a, nil
	}
	return nil, m.typeError(key, v, "an array")
}

// Strings returns the value of an array-of-strings key (shared; do not
// modify).
func (m *Metadata) Strings(key string) ([]string, error) {
	a, err := m.Array(key)
	if err != nil {
		return nil, err
	}
	if s, ok := a.Strings(); ok {
		return s, nil
	}
	return nil, &Error{Path: m.path, Key: key, Msg: fmt.Sprintf("is an array of %s, not of string", a.Elem)}
}
