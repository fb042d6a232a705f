package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxHeaderSize is the largest header length accepted (100 MiB). Real headers
// are a few megabytes at most; a larger length field means a corrupt file.
const MaxHeaderSize = 100 << 20

// metadataKey is the reserved header key holding the string-to-string metadata.
const metadataKey = "__metadata__"

// Header is a parsed and validated safetensors header.
type Header struct {
	// Metadata is the "__metadata__" map; it is empty, not nil, when the
	// header has none.
	Metadata map[string]string
	// Tensors lists the tensors sorted by Begin (then End, then Name).
	Tensors []TensorInfo
	// DataStart is the absolute offset of the data section, 8 plus the
	// header length.
	DataStart int64
	// FileSize is the size of the whole file in bytes.
	FileSize int64

	byName map[string]int // index into Tensors
}

// Lookup returns the tensor called name.
func (h *Header) Lookup(name string) (TensorInfo, bool) {
	if h.byName != nil {
		i, ok := h.byName[name]
		if !ok {
			return TensorInfo{}, false
		}
		return h.Tensors[i], true
	}
	for _, t := range h.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// Names returns the tensor names in sorted order.
func (h *Header) Names() []string {
	names := make([]string, len(h.Tensors))
	for i, t := range h.Tensors {
		names[i] = t.Name
	}
	slices.Sort(names)
	return names
}

// ParseHeader parses and validates a header. headerJSON is the raw header
// (bytes 8..8+N of the file, trailing space padding included) and fileSize
// the size of the whole file; path is used only in error messages.
//
// It checks that the header is a UTF-8 JSON object whose entries have the
// right types, that every dtype is supported, that dims are non-negative
// integers, that each tensor's data_offsets lie inside the data section and
// hold exactly product(shape)*dtype size bytes, and that no two tensors
// overlap. Gaps between tensors are allowed.
func ParseHeader(path string, headerJSON []byte, fileSize int64) (*Header, error) {
	if len(headerJSON) > MaxHeaderSize {
		return nil, errorf(path, "", "header length %d is larger than the %d MiB limit", len(headerJSON), MaxHeaderSize>>20)
	}
	dataStart := 8 + int64(len(headerJSON))
	if fileSize < dataStart {
		return nil, errorf(path, "", "header (%d bytes) extends past the end of the file (%d bytes); the file is truncated", len(headerJSON), fileSize)
	}
	dataSize := fileSize - dataStart
	if !utf8.Valid(headerJSON) {
		return nil, errorf(path, "", "header is not valid UTF-8")
	}

	entries, err := splitObject(headerJSON)
	if err != nil {
		return nil, errorf(path, "", "header is not valid JSON: %v", err)
	}
	if entries == nil {
		return nil, errorf(path, "", "header is not a JSON object")
	}

	h := &Header{
		Metadata:  map[string]string{},
		DataStart: dataStart,
		FileSize:  fileSize,
		byName:    make(map[string]int, len(entries)),
	}
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if seen[e.key] {
			if e.key == metadataKey {
				return nil, errorf(path, "", "duplicate %s entry", metadataKey)
			}
			return nil, errorf(path, e.key, "duplicate tensor name")
		}
		seen[e.key] = true
		if e.key == metadataKey {
			if err := parseMetadata(e.value, h.Metadata); err != nil {
				return nil, errorf(path, "", "%s: %v", metadataKey, err)
			}
			continue
		}
		if e.key == "" {
			return nil, errorf(path, "", "empty tensor name")
		}
		t, err := parseTensor(e.key, e.value, dataStart, dataSize)
		if err != nil {
			return nil, errorf(path, e.key, "%v", err)
		}
		h.Tensors = append(h.Tensors, t)
	}

	slices.SortFunc(h.Tensors, func(a, b TensorInfo) int {
		if a.Begin != b.Begin {
			return cmpInt64(a.Begin, b.Begin)
		}
		if a.End != b.End {
			return cmpInt64(a.End, b.End)
		}
		return strings.Compare(a.Name, b.Name)
	})
	// Empty tensors share no bytes with anything, so they never overlap.
	var last *TensorInfo // the non-empty tensor reaching furthest so far
	for i := range h.Tensors {
		t := &h.Tensors[i]
		if t.End > t.Begin {
			if last != nil && t.Begin < last.End {
				return nil, errorf(path, t.Name, "data_offsets [%d,%d) overlap tensor %q [%d,%d)",
					t.Begin-dataStart, t.End-dataStart, last.Name, last.Begin-dataStart, last.End-dataStart)
			}
			last = t
		}
		h.byName[t.Name] = i
	}
	return h, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// entry is one key/value pair of a JSON object, in document order.
type entry struct {
	key   string
	value json.RawMessage
}

// splitObject splits a JSON object into its entries, keeping duplicates so
// that they can be reported. It returns nil entries and no error when data
// is valid JSON but not an object.
func splitObject(data []byte) ([]entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		// Make sure the rest is valid JSON before calling it "not an object".
		if !json.Valid(data) {
			return nil, fmt.Errorf("invalid JSON value")
		}
		return nil, nil
	}
	entries := []entry{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(err)
		}
		entries = append(entries, entry{key, v})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the header object")
	}
	return entries, nil
}

// jsonError makes the decoder's end-of-input errors readable.
func jsonError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("unexpected end of JSON input")
	}
	return err
}

// jsonKind names the JSON type of a raw value.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func parseMetadata(raw json.RawMessage, into map[string]string) error {
	switch jsonKind(raw) {
	case "null":
		return nil
	case "object":
	default:
		return fmt.Errorf("must be an object of strings, got %s", jsonKind(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	for k, v := range m {
		if jsonKind(v) != "string" {
			return fmt.Errorf("value of %q must be a string, got %s", k, jsonKind(v))
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("value of %q: %v", k, err)
		}
		into[k] = s
	}
	return nil
}

// parseInt parses a JSON integer literal; floats, exponents, strings and
// values outside the int64 range are rejected.
func parseInt(raw json.RawMessage) (int64, error) {
	if k := jsonKind(raw); k != "number" {
		return 0, fmt.Errorf("%s is not an integer", k)
	}
	s := string(bytes.TrimSpace(raw))
	if strings.ContainsAny(s, ".eE") {
		return 0, fmt.Errorf("%s is not an integer", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is outside the int64 range", s)
	}
	return n, nil
}

func parseIntArray(raw json.RawMessage) ([]int64, error) {
	if k := jsonKind(raw); k != "array" {
		return nil, fmt.Errorf("got %s", k)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]int64, len(items))
	for i, it := range items {
		n, err := parseInt(it)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// parseTensor parses one tensor entry and checks it against the data section
// [dataStart, dataStart+dataSize).
func parseTensor(name string, raw json.RawMessage, dataStart, dataSize int64) (TensorInfo, error) {
	t := TensorInfo{Name: name}
	if k := jsonKind(raw); k != "object" {
		return t, fmt.Errorf("entry must be an object, got %s", k)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return t, err
	}
	for _, key := range []string{"dtype", "shape", "data_offsets"} {
		if _, ok := fields[key]; !ok {
			return t, fmt.Errorf("missing %q", key)
		}
	}

	if k := jsonKind(fields["dtype"]); k != "string" {
		return t, fmt.Errorf("dtype must be a string, got %s", k)
	}
	var dt string
	if err := json.Unmarshal(fields["dtype"], &dt); err != nil {
		return t, fmt.Errorf("dtype: %v", err)
	}
	t.DType = DType(dt)
	if !t.DType.Valid() {
		return t, fmt.Errorf("unknown dtype %q", dt)
	}

	shape, err := parseIntArray(fields["shape"])
	if err != nil {
		return t, fmt.Errorf("shape must be an array of non-negative integers: %v", err)
	}
	for _, d := range shape {
		if d < 0 {
			return t, fmt.Errorf("shape %v has a negative dim", shape)
		}
	}
	t.Shape = shape

	offs, err := parseIntArray(fields["data_offsets"])
	if err != nil {
		return t, fmt.Errorf("data_offsets must be an array of two integers: %v", err)
	}
	if len(offs) != 2 {
		return t, fmt.Errorf("data_offsets must be an array of two integers, got %d values", len(offs))
	}
	begin, end := offs[0], offs[1]
	switch {
	case begin < 0 || end < 0:
		return t, fmt.Errorf("data_offsets [%d,%d) are negative", begin, end)
	case begin > end:
		return t, fmt.Errorf("data_offsets [%d,%d) have begin > end", begin, end)
	case end > dataSize:
		return t, fmt.Errorf("data_offsets [%d,%d) exceed the data section (%d bytes)", begin, end, dataSize)
	}
	t.Begin, t.End = dataStart+begin, dataStart+end

	want, ok := byteSize(shape, t.DType)
	if !ok {
		return t, fmt.Errorf("shape %v of %s is too large", shape, t.DType)
	}
	if got := end - begin; got != want {
		return t, fmt.Errorf("data_offsets [%d,%d) hold %d bytes but shape %v of %s needs %d", begin, end, got, shape, t.DType, want)
	}
	return t, nil
}

// byteSize returns product(shape)*dt.Size(), or false if a dim is negative
// or the product overflows int64.
func byteSize(shape []int64, dt DType) (int64, bool) {
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
	}
	if slices.Contains(shape, 0) {
		return 0, true
	}
	n := int64(dt.Size())
	for _, d := range shape {
		if n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}
