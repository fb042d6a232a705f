package kernel

import (
	"fmt"
	"strconv"
	"strings"
)

// Dim is one named extent of a shape.
type Dim struct {
	Key   string
	Value int
}

// Shape is an ordered list of named extents, written "m=1/n=4096/k=2304"
// (the form benchmark names and profiles use).
type Shape []Dim

// MakeShape pairs keys with values; it panics on a length mismatch (a
// programming error in a family's code, not input).
func MakeShape(keys []string, vals ...int) Shape {
	if len(keys) != len(vals) {
		panic(fmt.Sprintf("kernel.MakeShape: %d keys, %d values", len(keys), len(vals)))
	}
	s := make(Shape, len(keys))
	for i := range keys {
		s[i] = Dim{keys[i], vals[i]}
	}
	return s
}

// Get returns the value of key, or 0 when absent.
func (s Shape) Get(key string) int {
	for _, d := range s {
		if d.Key == key {
			return d.Value
		}
	}
	return 0
}

// With returns a copy of s with key set to v.
func (s Shape) With(key string, v int) Shape {
	t := append(Shape(nil), s...)
	for i := range t {
		if t[i].Key == key {
			t[i].Value = v
			return t
		}
	}
	return append(t, Dim{key, v})
}

func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.Key + "=" + strconv.Itoa(d.Value)
	}
	return strings.Join(parts, "/")
}

// ParseShape reads the String form.
func ParseShape(str string) (Shape, error) {
	var s Shape
	if str == "" {
		return s, nil
	}
	for _, part := range strings.Split(str, "/") {
		k, v, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(v)
		if !ok || k == "" || err != nil {
			return nil, fmt.Errorf("bad shape %q: want key=value/key=value", str)
		}
		s = append(s, Dim{k, n})
	}
	return s, nil
}

// MarshalText writes the String form.
func (s Shape) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the String form.
func (s *Shape) UnmarshalText(b []byte) error {
	v, err := ParseShape(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
