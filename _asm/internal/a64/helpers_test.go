package a64

import (
	"strings"
	"testing"
)

// texts are the lines of f as the generators wrote them, WORDs marked.
func texts(f *File) string {
	var s []string
	for _, l := range f.lines {
		if l.word {
			s = append(s, "W "+l.text)
		} else {
			s = append(s, l.text)
		}
	}
	return strings.Join(s, "\n")
}

// TestHelpers: the shared emitters write what their hand-rolled loops in
// the generators wrote.
func TestHelpers(t *testing.T) {
	for _, c := range []struct {
		name string
		emit func(f *File)
		want []string
	}{
		{"Args", func(f *File) { f.Args("a+0(FP), R0", "n+8(FP), R1") },
			[]string{"MOVD a+0(FP), R0", "MOVD n+8(FP), R1"}},
		{"ZeroV", func(f *File) { f.ZeroV(4, 2) },
			[]string{"VEOR V4.B16, V4.B16, V4.B16", "VEOR V5.B16, V5.B16, V5.B16"}},
		{"ZeroZ", func(f *File) { f.ZeroZ(16, 2) },
			[]string{"W dup z16.s, #0", "W dup z17.s, #0"}},
		{"WhileLo", func(f *File) { f.WhileLo("h", 4, 3, 20, 19) },
			[]string{"W whilelo p4.h, x20, x19", "W inch x20", "W whilelo p5.h, x20, x19", "W inch x20", "W whilelo p6.h, x20, x19"}},
		{"Ld1w", func(f *File) { f.Ld1w(8, 4, 14, 2) },
			[]string{"W ld1w {z8.s}, p4/z, [x14]", "W ld1w {z9.s}, p5/z, [x14, #1, mul vl]"}},
		{"St1w", func(f *File) { f.St1w(16, 0, 9, 2) },
			[]string{"W st1w {z16.s}, p0, [x9]", "W st1w {z17.s}, p1, [x9, #1, mul vl]"}},
	} {
		f := &File{}
		c.emit(f)
		if got, want := texts(f), strings.Join(c.want, "\n"); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, want)
		}
	}
}
