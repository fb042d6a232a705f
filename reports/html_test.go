package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
	"testing"
)

// sampleRooflines are two machines in the shape kprofile compare will
// pass: this VM's ceilings (docs/performance.md) and an AVX2-masked run.
func sampleRooflines() []Roofline {
	pts := func(scale float64) []RooflinePoint {
		return []RooflinePoint{
			{"gemv q4", 1.9, 90 * scale},
			{"gemm f32 512", 120, 190 * scale},
			{"kda decode", 0.5, 13 * scale},
			{"mla decode 32K", 3.6, 70 * scale},
		}
	}
	return []Roofline{
		{Machine: "zen5 avx512", Compute: []Ceiling{{"f32 zmm", 420}, {"f32 ymm", 210}}, Bandwidth: []Ceiling{{"DRAM", 70}, {"L2", 340}}, Points: pts(1)},
		{Machine: "zen5 avx2 <masked>", Compute: []Ceiling{{"f32 ymm", 210}}, Bandwidth: []Ceiling{{"DRAM", 68}}, Points: pts(0.55)},
	}
}

func sampleReport(t testing.TB) *Report {
	t.Helper()
	rl, err := RooflineFigure("Rooflines of both machines with the tuned kernels.", "Rooflines", sampleRooflines())
	if err != nil {
		t.Fatal(err)
	}
	cats := []string{"m=1 t=1", "m=1 t=2", "m=8 t=1", "m=8 t=2"}
	bars, err := BarFigure("gemm.gemv q4, GFLOP/s per shape and threads.", "gemm.gemv q4", "GFLOP/s", cats, []Series{
		{"zen5 avx512", []float64{48, 90, 150, 210}},
		{"zen5 avx2 <masked>", []float64{30, 52, math.NaN(), 120}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, rows, err := SideBySide([]string{"op", "shape", "threads"}, []string{"zen5 avx512", "zen5 avx2 <masked>"},
		[][]string{{"gemm.gemv", "m=1 n=4096 k=2304", "1"}, {"gemm.gemv", "m=8 n=4096 k=2304", "2"}, {"kda.decode", "h=32", "1"}},
		[][]float64{{48, 30}, {210, 120}, {13, math.NaN()}}, func(v float64) string { return fmt.Sprintf("%.1f", v) })
	if err != nil {
		t.Fatal(err)
	}
	return &Report{
		Title:    "ktune: zen5 avx512 vs zen5 avx2 <masked>",
		Subtitle: "Two tuning profiles, side by side.",
		Sections: []Section{
			{Heading: "Per op", Paragraphs: []string{"GFLOP/s of the tuned choice; ratios to the first machine."},
				Tables: []Table{{Caption: "GFLOP/s", Header: h, Rows: rows}}, Figures: []Figure{bars}},
			{Heading: "Rooflines", Figures: []Figure{rl}},
		},
		Footer: "kprofile test",
	}
}

func TestHTMLReport(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	if !strings.HasPrefix(s, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(s), "</html>") {
		t.Error("not a complete document")
	}
	if n := strings.Count(s, "<svg"); n != 2 {
		t.Errorf("%d inline SVGs, want 2", n)
	}
	for _, bad := range []string{"<script", "<?xml", "http://", "https://", "src=", "<link"} {
		if strings.Contains(strings.ToLower(s), bad) && !(bad == "http://" && onlyXMLNS(s)) {
			t.Errorf("report holds %q: not self-contained", bad)
		}
	}
	if strings.Contains(s, "avx2 <masked>") || !strings.Contains(s, "avx2 &lt;masked&gt;") {
		t.Error("table text not escaped")
	}
	if !strings.Contains(s, `<td class="num">0.62×</td>`) {
		t.Error("ratio cell missing or not right-aligned")
	}
	// each SVG is well-formed XML (labels with < and & escaped)
	for i, part := range strings.Split(s, "<svg")[1:] {
		svg := "<svg" + part[:strings.Index(part, "</svg>")+len("</svg>")]
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("svg %d: %v", i, err)
				}
				break
			}
		}
	}
}

// onlyXMLNS: the only URLs are SVG namespace declarations, which browsers
// never fetch.
func onlyXMLNS(s string) bool {
	for _, u := range []string{`"http://www.w3.org/2000/svg"`, `"http://www.w3.org/1999/xlink"`} {
		s = strings.ReplaceAll(s, u, "")
	}
	return !strings.Contains(s, "http://")
}

func TestGeomean(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{2, 8}, 4},
		{[]float64{1, 10, 100}, 10},
		{[]float64{5}, 5},
		{[]float64{}, math.NaN()},
		{[]float64{1, 0}, math.NaN()},
		{[]float64{1, -2}, math.NaN()},
		{[]float64{1, math.NaN()}, math.NaN()},
		{[]float64{1, math.Inf(1)}, math.NaN()},
	} {
		got := Geomean(tc.xs)
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12*tc.want) {
			t.Errorf("Geomean(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestSideBySide(t *testing.T) {
	h, rows, err := SideBySide([]string{"op"}, []string{"a", "b"}, [][]string{{"x"}, {"y"}, {"z"}},
		[][]float64{{2, 4}, {8, 4}, {1, math.NaN()}}, func(v float64) string { return fmt.Sprintf("%g", v) })
	if err != nil {
		t.Fatal(err)
	}
	want := "[op a b b / a] [[x 2 4 2.00×] [y 8 4 0.50×] [z 1 — —] [geomean (2 rows) 4 4 1.00×]]"
	if got := fmt.Sprint(h, rows); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, _, err := SideBySide([]string{"op"}, []string{"a"}, [][]string{{"x"}}, [][]float64{{1, 2}}, nil); err == nil {
		t.Error("ragged row accepted")
	}
}

func TestPlotErrors(t *testing.T) {
	if _, err := BarChart("t", "y", nil, nil); err == nil {
		t.Error("empty bar chart accepted")
	}
	if _, err := BarChart("t", "y", []string{"a"}, []Series{{"m", []float64{1, 2}}}); err == nil {
		t.Error("misaligned series accepted")
	}
	if _, err := RooflineFigure("", "t", nil); err == nil {
		t.Error("roofline without machines accepted")
	}
	if _, err := RooflineFigure("", "t", []Roofline{{Machine: "m"}}); err == nil {
		t.Error("roofline without data accepted")
	}
	// bandwidth only, or compute only, still draws
	for _, m := range []Roofline{{Machine: "bw", Bandwidth: []Ceiling{{"DRAM", 50}}, Points: []RooflinePoint{{"k", 1, 20}}},
		{Machine: "peak", Compute: []Ceiling{{"f32", 100}}, Points: []RooflinePoint{{"k", 1, 20}}}} {
		fig, err := RooflineFigure("", "t", []Roofline{m})
		if err != nil {
			t.Fatalf("%s: %v", m.Machine, err)
		}
		if !strings.HasPrefix(string(fig.SVG), "<svg") {
			t.Fatalf("%s: no <svg> element", m.Machine)
		}
	}
}

// TestRooflineFigureLayout: the comparison goes through the same layout
// as ktune's plots, so its labels get the same promises (no overlaps,
// none off the data area or over a mark), and every ceiling is labelled
// in the plot and named in the key under its machine.
func TestRooflineFigureLayout(t *testing.T) {
	ch, err := machinesChart("Rooflines", sampleRooflines())
	if err != nil {
		t.Fatal(err)
	}
	f, err := ch.layout(FigureWidth, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range boxProblems(f) {
		if !strings.Contains(p, " labels point ") { // labels, not numbers, beside the marks
			t.Error(p)
		}
	}
	if len(f.dropped) > 0 {
		t.Errorf("ceiling labels with no place in the plot: %q", f.dropped)
	}
	text := map[boxKind][]string{}
	for _, b := range f.boxes {
		text[b.Kind] = append(text[b.Kind], b.Text)
	}
	for _, want := range []string{"f32 zmm 420", "f32 ymm 210", "DRAM 70 GB/s", "L2 340 GB/s", "DRAM 68 GB/s"} {
		for _, k := range []boxKind{boxRoof, boxKey} {
			if !slicesContainsPrefix(text[k], want) {
				t.Errorf("no %s label %q in %q", k, want, text[k])
			}
		}
	}
	for _, want := range []string{"zen5 avx512:", "zen5 avx2 <masked>:", "zen5 avx512 kernels", "zen5 avx2 <masked> kernels"} {
		if !slicesContainsPrefix(text[boxKey], want) {
			t.Errorf("key lacks %q: %q", want, text[boxKey])
		}
	}
	fams := map[int]int{}
	for _, m := range f.marks {
		fams[m.fam]++
	}
	if len(f.marks) != 8 || fams[0] != 4 || fams[1] != 4 {
		t.Errorf("marks per machine: %v", fams)
	}
	if n := len(text[boxNumber]); n != 8 || !slicesContainsPrefix(text[boxNumber], "mla decode 32K") {
		t.Errorf("point labels: %q", text[boxNumber])
	}
}
