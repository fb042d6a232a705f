package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ktune/ktune/roofline"
	"github.com/ktune/ktune/roofline/rooflinetest"
)

// pointAt builds a point with the given intensity (FLOP/B) and rate
// (GFLOP/s) moving bytes per run.
func pointAt(op, label, dtype, class, shape string, threads int, cold bool, bytes, ai, gflops float64) roofline.Point {
	flops := ai * bytes
	variant := "avx512"
	if class == "int8act" {
		variant = "avx512_vnni"
	}
	return roofline.Point{Label: label, Op: op, Variant: variant, DType: dtype, Class: class, Shape: shape, Threads: threads,
		Cold: cold, FLOPs: flops, Bytes: bytes, Seconds: flops / gflops / 1e9}
}

// clustered is a tuned profile's worth of points on rooflinetest.Ceilings(): many at
// the same intensity (the decode GEMVs and MoE blocks near 3.5 FLOP/B,
// MLA decode at 30), a few far above their roof, a family the plot does
// not know, one point at a thread count without ceilings (3, drawn on the
// 2-thread plot) and two on the 1-thread plot. It returns the points and
// how many go on the 2-thread plot.
func clustered() ([]roofline.Point, int) {
	var pts []roofline.Point
	for i, proj := range []string{"kda.q_proj", "kda.k_proj", "kda.v_proj", "kda.o_proj", "mla.q_b_proj", "mla.kv_b_proj", "moe.expert.gate_up", "moe.expert.down", "moe.shared.gate_up", "lm_head"} {
		pts = append(pts, pointAt("gemm.gemv", proj+" decode-1 q4", "q4", "int8act", fmt.Sprintf("m=1/n=%d/k=2304", 4096+256*i), 2, true, 5e6, 3.5, 30+2*float64(i%4)))
	}
	for i := 0; i < 6; i++ {
		pts = append(pts, pointAt("gemm.gateup", fmt.Sprintf("moe.expert.gate_up decode-%d q4", 1<<i), "q4", "int8act", fmt.Sprintf("m=%d/n=2048/k=2304", 1<<i), 2, i == 0, 5e6, 3.5*float64(int(1)<<i), 31+30*float64(i)))
	}
	for i := 0; i < 4; i++ {
		pts = append(pts, pointAt("gemm.gemm", fmt.Sprintf("kda.q_proj prefill-%d q4", 128<<i), "q4", "int8act", fmt.Sprintf("m=%d/n=4096/k=2304", 128<<i), 2, false, 3e7, 100+20*float64(i), 500+40*float64(i)))
	}
	for i := 0; i < 4; i++ {
		pts = append(pts, pointAt("moe.block", fmt.Sprintf("MoE decode e=%d", 32<<i), "q4", "int8act", fmt.Sprintf("n=1/e=%d/k=8/c=2304/i=1024", 32<<i), 2, true, 2e7, 3.53, 15+float64(i)))
	}
	pts = append(pts, pointAt("moe.block", "MoE prefill", "q4", "int8act", "n=512/e=256/k=8/c=2304/i=1024", 2, false, 2e8, 40, 330))
	for i := 0; i < 4; i++ {
		pts = append(pts, pointAt("kda.decode", fmt.Sprintf("KDA decode b=%d", 1<<i), "f32", "f32", fmt.Sprintf("b=%d/h=32/dk=128/dv=128", 1<<i), 2, true, 2e6, 0.858, 16+float64(i)/2))
	}
	pts = append(pts, pointAt("kda.decode", "KDA decode warm, overcounted", "f32", "f32", "b=8/h=32/dk=128/dv=128", 2, false, 2e6, 0.858, 400)) // far above L3
	pts = append(pts, pointAt("kda.prefill", "KDA prefill", "f32", "f32", "b=1/t=512/h=32/dk=128/dv=128", 2, false, 3e7, 32, 166))
	for i, ctx := range []int{4, 8, 16, 32, 64, 128} {
		pts = append(pts, pointAt("mla.decode", fmt.Sprintf("MLA decode %dK", ctx), "f32", "f32", fmt.Sprintf("b=1/c=%d/nh=32/r=512/dr=64", ctx<<10), 2, true, 1e7*float64(ctx), 30.2, 50+20*float64(i)))
	}
	pts = append(pts, pointAt("mla.prefill", "MLA prefill", "f32", "f32", "b=1/t=512/nh=32", 2, false, 5e7, 60, 130))
	for i := 0; i < 4; i++ {
		pts = append(pts, pointAt("norm.rmsnorm", fmt.Sprintf("rmsnorm decode-%d", 1<<i), "f32", "f32", fmt.Sprintf("n=%d/d=2304", 1<<i), 2, i%2 == 0, 2e4*float64(int(1)<<i), 0.25, 30+float64(i))) // the cold ones are above DRAM
	}
	pts = append(pts,
		pointAt("attn.softmax", "softmax", "f32", "f32", "n=4096", 2, false, 1e5, 1.2, 20),
		pointAt("rope.apply", "rope", "f32", "f32", "n=4096/d=64", 3, false, 1e5, 0.9, 25), // 3 threads: on the 2-thread plot
	)
	n := len(pts)
	pts = append(pts,
		pointAt("gemm.gemv", "kda.q_proj decode-1 q4", "q4", "int8act", "m=1/n=4096/k=2304", 1, true, 5e6, 3.5, 20),
		pointAt("kda.decode", "KDA decode", "f32", "f32", "b=1/h=32/dk=128/dv=128", 1, true, 2e6, 0.858, 8),
		roofline.Point{Label: "no time", Op: "gemm.gemv", Threads: 2, FLOPs: 1, Bytes: 1}, // not drawn
	)
	return pts, n
}

// boxProblems lists every way the figure's layout breaks its promises:
// two boxes that overlap, a box off the canvas, a number or roof label
// off the data area or over a point's mark, a point without exactly one
// number. The test asserts it finds none, and that it does find planted
// ones.
func boxProblems(f *figure) []string {
	var out []string
	canvas := vg.Rectangle{Max: vg.Point{X: f.w, Y: f.h}}
	name := func(b labelBox) string { return fmt.Sprintf("%s %q at %v", b.Kind, b.Text, b.Rect) }
	numbers := map[int]int{}
	for i, a := range f.boxes {
		if !(a.Rect.Size().X > 0 && a.Rect.Size().Y > 0) {
			out = append(out, "empty box: "+name(a))
		}
		if !inside(a.Rect, canvas) {
			out = append(out, "off the canvas: "+name(a))
		}
		if a.Kind == boxNumber || a.Kind == boxRoof {
			if !inside(a.Rect, f.data) {
				out = append(out, "off the data area: "+name(a))
			}
			for j, m := range f.marks {
				if overlaps(a.Rect, m.rect()) {
					out = append(out, fmt.Sprintf("%s covers the mark of point %d", name(a), j+1))
				}
			}
		}
		if a.Kind == boxNumber {
			numbers[a.Point]++
			if a.Text != fmt.Sprint(f.marks[a.Point].num) {
				out = append(out, fmt.Sprintf("%s labels point %d", name(a), f.marks[a.Point].num))
			}
		}
		for _, b := range f.boxes[i+1:] {
			if overlaps(a.Rect, b.Rect) {
				out = append(out, "overlap: "+name(a)+" and "+name(b))
			}
		}
	}
	for i := range f.marks {
		if numbers[i] != 1 {
			out = append(out, fmt.Sprintf("point %d has %d numbers", i+1, numbers[i]))
		}
	}
	return out
}

func TestPlotLayout(t *testing.T) {
	c := rooflinetest.Ceilings()
	pts, n2 := clustered()
	if n2 < 40 {
		t.Fatalf("only %d points on the 2-thread plot", n2)
	}
	on2 := pointsAt(c, pts, 2)
	if len(on2) != n2+1 || len(pointsAt(c, pts, 1)) != 2 {
		t.Fatalf("%d points on the 2-thread plot (want %d), %d on the 1-thread one", len(on2), n2+1, len(pointsAt(c, pts, 1)))
	}
	f, err := layout(c, on2, 2, figWidth, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.marks) != n2 {
		t.Fatalf("%d marks for %d points", len(f.marks), n2)
	}
	for _, p := range boxProblems(f) {
		t.Error(p)
	}
	if len(f.dropped) > 0 {
		t.Errorf("roof labels with no place in the plot: %q", f.dropped)
	}
	// Every roof has its label in the plot and in the key; every point a
	// table row; the families and over-roof rings are told apart.
	text := map[boxKind][]string{}
	rows := map[int]bool{}
	for _, b := range f.boxes {
		text[b.Kind] = append(text[b.Kind], b.Text)
		if b.Kind == boxTable && b.Point >= 0 {
			rows[b.Point] = true
		}
	}
	for _, want := range []string{"DRAM read 20 GB/s", "L3 read 100 GB/s", "L2 read 200 GB/s", "L1 read 400 GB/s", "x_fma_f32 200 GFLOP/s", "x_narrow_f32 100 GFLOP/s", "x_dot_int8 800 GOP/s"} {
		for _, k := range []boxKind{boxRoof, boxKey} {
			if !slicesContainsPrefix(text[k], want) {
				t.Errorf("no %s label %q in %q", k, want, text[k])
			}
		}
	}
	if len(rows) != n2 {
		t.Errorf("table rows for %d of %d points", len(rows), n2)
	}
	for _, fam := range roofline.Families {
		if !slicesContainsPrefix(text[boxKey], fam) {
			t.Errorf("family %s not in the key", fam)
		}
	}
	var over []string
	fams := map[int]int{}
	for i, m := range f.marks {
		fams[m.fam]++
		if m.over {
			over = append(over, fmt.Sprint(i+1))
		}
	}
	if len(fams) != len(roofline.Families) {
		t.Errorf("marks in %d families: %v", len(fams), fams)
	}
	// the overcounted warm KDA decode and the two cold rmsnorms
	if len(over) != 3 {
		t.Errorf("points flagged above their roof: %v", over)
	}
	if !slicesContainsPrefix(text[boxTable], "rope (3 thr)") {
		t.Error("the 3-thread point is not marked in the table")
	}

	// The checker itself fails on planted faults: a number moved onto a
	// table cell, two overlapping boxes, a box off the canvas, a label on
	// a mark.
	for name, plant := range map[string]func(g *figure){
		"overlap": func(g *figure) {
			a := textBox(boxKey, "a", keyFont, nil).moveTo(vg.Point{X: 20, Y: 20})
			b := textBox(boxKey, "b", keyFont, nil).moveTo(vg.Point{X: 22, Y: 22})
			g.boxes = append(g.boxes, a, b)
		},
		"moved": func(g *figure) {
			for i, b := range g.boxes {
				if b.Kind == boxTable {
					g.boxes[0] = g.boxes[0].moveTo(g.boxes[i].Rect.Min)
					return
				}
			}
		},
		"off canvas": func(g *figure) {
			g.boxes = append(g.boxes, textBox(boxKey, "far", keyFont, nil).moveTo(vg.Point{X: g.w - 2, Y: 5}))
		},
		// every number straight right of its mark, as the old plot put
		// its labels: the clustered points must make these collide
		"naive placement": func(g *figure) {
			for i, b := range g.boxes {
				if b.Kind == boxNumber {
					m := g.marks[b.Point]
					g.boxes[i] = b.moveTo(vg.Point{X: m.rect().Max.X + 0.5, Y: m.at.Y - b.size().Y/2})
				}
			}
		},
		"on a mark": func(g *figure) {
			for i, b := range g.boxes {
				if b.Kind == boxNumber {
					g.boxes[i] = b.moveTo(g.marks[0].at)
					return
				}
			}
		},
	} {
		g := *f
		g.boxes = append([]labelBox(nil), f.boxes...)
		plant(&g)
		ps := boxProblems(&g)
		if len(ps) == 0 {
			t.Errorf("the checker missed a planted fault: %s", name)
		}
		if name == "naive placement" && !slicesContainsPrefix(ps, "overlap: number") {
			t.Errorf("numbers beside their marks do not collide: the points are not clustered enough to test the layout\n%q", ps)
		}
	}
	if !overlaps(vg.Rectangle{Max: vg.Point{X: 2, Y: 2}}, vg.Rectangle{Min: vg.Point{X: 1, Y: 1}, Max: vg.Point{X: 3, Y: 3}}) ||
		overlaps(vg.Rectangle{Max: vg.Point{X: 2, Y: 2}}, vg.Rectangle{Min: vg.Point{X: 2, Y: 0}, Max: vg.Point{X: 3, Y: 2}}) {
		t.Error("overlaps is wrong on a plain pair")
	}

	// Random clusters: points piled on a few intensities (as decode
	// kernels are), rates near and above their roofs, every family.
	rng := rand.New(rand.NewPCG(1, 2))
	ops := []string{"gemm.gemv", "moe.block", "kda.decode", "mla.decode", "norm.rmsnorm", "attn.x"}
	ais := []float64{0.25, 0.858, 3.5, 3.53, 30.2, 182}
	for trial := 0; trial < 6; trial++ {
		var ps []roofline.Point
		for i := 0; i < 30+10*trial; i++ {
			ai := ais[rng.IntN(len(ais))] * (1 + 0.02*rng.Float64())
			roof := math.Min(200, ai*20)
			ps = append(ps, pointAt(ops[rng.IntN(len(ops))], fmt.Sprintf("p%d", i), "f32", "f32", "n=1", 2, true, 1e6, ai, roof*(0.05+1.2*rng.Float64())))
		}
		g, err := layout(c, ps, 2, figWidth, 0)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for _, p := range boxProblems(g) {
			t.Errorf("trial %d: %s", trial, p)
		}
	}

	// A canvas too small for the panel is refused, not overprinted.
	if _, err := layout(c, on2, 2, figWidth, 3*vg.Inch); err == nil {
		t.Error("a 3-inch canvas accepted for 40 points")
	}
	// Few points, no points: still no overlaps.
	for _, ps := range [][]roofline.Point{nil, on2[:3]} {
		g, err := layout(c, ps, 1, figWidth, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range boxProblems(g) {
			t.Errorf("%d points: %s", len(ps), p)
		}
	}
}

func slicesContainsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// recorder is a canvas that notes every string drawn.
type recorder struct {
	*vgimg.Canvas
	drawn []drawnText
}

type drawnText struct {
	face font.Face
	at   vg.Point
	text string
}

func (r *recorder) FillString(f font.Face, pt vg.Point, s string) {
	r.drawn = append(r.drawn, drawnText{f, pt, s})
	r.Canvas.FillString(f, pt, s)
}

// TestPlotRenders renders the layout and checks that every text is drawn
// where its box is, in the font it was measured with, and that the files
// are real images.
func TestPlotRenders(t *testing.T) {
	c := rooflinetest.Ceilings()
	pts, _ := clustered()
	f, err := layout(c, pointsAt(c, pts, 2), 2, figWidth, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Canvas: vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(72))}
	f.render(draw.New(rec))
	type key struct {
		text string
		x, y int64
	}
	at := map[key]drawnText{}
	for _, d := range rec.drawn {
		at[key{d.text, int64(math.Round(float64(d.at.X) * 100)), int64(math.Round(float64(d.at.Y) * 100))}] = d
	}
	texts := 0
	for _, b := range f.boxes {
		if b.Kind == boxSwatch {
			continue
		}
		texts++
		bl := b.baseline()
		d, ok := at[key{b.Text, int64(math.Round(float64(bl.X) * 100)), int64(math.Round(float64(bl.Y) * 100))}]
		if !ok {
			t.Errorf("%s %q not drawn at its box's baseline %v", b.Kind, b.Text, bl)
			continue
		}
		e := d.face.Extents()
		ink := vg.Rectangle{Min: vg.Point{X: d.at.X, Y: d.at.Y - e.Descent}, Max: vg.Point{X: d.at.X + d.face.Width(d.text), Y: d.at.Y + e.Ascent}}
		if !inside(ink, b.Rect) || b.Rect.Size().X-ink.Size().X > 2*textPad+0.01 {
			t.Errorf("%s %q: drawn over %v, box %v", b.Kind, b.Text, ink, b.Rect)
		}
	}
	if texts < 3*40 {
		t.Errorf("only %d texts laid out", texts)
	}

	dir := t.TempDir()
	if out := os.Getenv("KTUNE_PLOT_DIR"); out != "" { // to look at them
		dir = out
	}
	paths, err := PlotRooflines(c, pts, dir, "png", "svg")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"roofline.png", "roofline.svg", "roofline-t1.png", "roofline-t1.svg", "roofline-t2.png", "roofline-t2.svg"}
	if len(paths) != len(want) {
		t.Fatalf("wrote %q", paths)
	}
	for i, p := range paths {
		if filepath.Base(p) != want[i] {
			t.Errorf("path %d: %s, want %s", i, p, want[i])
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "roofline.png"))
	b, _ := os.ReadFile(filepath.Join(dir, "roofline-t2.png"))
	if !bytes.Equal(a, b) {
		t.Error("roofline.png is not the largest thread count's plot")
	}
	for _, name := range []string{"roofline-t1.png", "roofline-t2.png"} {
		fh, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bd := img.Bounds()
		dpi := float64(pngDPI)
		if w := int(float64(figWidth/vg.Inch)*dpi + 0.5); bd.Dx() != w || bd.Dy() < int(float64(plotHeight/vg.Inch)*dpi) {
			t.Errorf("%s: %v, want %d wide and over %d high", name, bd, w, int(float64(plotHeight/vg.Inch)*dpi))
		}
		var ink, red int
		for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
			for x := bd.Min.X; x < bd.Max.X; x += 2 {
				r, g, b, _ := img.At(x, y).RGBA()
				if r < 0xf000 || g < 0xf000 || b < 0xf000 {
					ink++
				}
				if r > 0xb000 && g < 0x3000 && b < 0x3000 {
					red++
				}
			}
		}
		if frac := float64(ink) / float64(bd.Dx()*bd.Dy()/4); frac < 0.01 || frac > 0.5 {
			t.Errorf("%s: %.1f%% of the pixels inked", name, 100*frac)
		}
		if name == "roofline-t2.png" && red == 0 {
			t.Errorf("%s: no red ring for the points above their roof", name)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "roofline-t2.svg"))
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var chars strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("roofline-t2.svg: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			chars.Write(cd)
		}
	}
	for _, want := range []string{"b=1/c=131072/nh=32/r=512/dr=64", "DRAM read 20 GB/s", "rope (3 thr)", "Roofline, 2 threads"} {
		if !strings.Contains(chars.String(), want) {
			t.Errorf("roofline-t2.svg lacks %q", want)
		}
	}
}

func TestPointRoofAndFamily(t *testing.T) {
	c := rooflinetest.Ceilings()
	for _, tc := range []struct {
		p     roofline.Point
		roof  float64
		bound string
	}{
		// cold: DRAM, 10 GB/s per thread
		{roofline.Point{Op: "gemm.gemv", Threads: 2, Cold: true, FLOPs: 4e6, Bytes: 1e6, Seconds: 1}, 80, "DRAM"},
		// warm, 1 MB at 2 threads fits the 2 MiB of L2: 200 GB/s
		{roofline.Point{Op: "norm.rmsnorm", Threads: 2, FLOPs: 1e5, Bytes: 1e6, Seconds: 1}, 20, "L2"},
		// warm, 16 KiB fits L1
		{roofline.Point{Op: "norm.rmsnorm", Threads: 1, FLOPs: 4 << 10, Bytes: 16 << 10, Seconds: 1}, 50, "L1"},
		// warm, too big for L3: DRAM
		{roofline.Point{Op: "x.y", Threads: 1, FLOPs: 1e8, Bytes: 1e8, Seconds: 1}, 10, "DRAM"},
		// compute bound: f32 peak, and int8 for int8act
		{roofline.Point{Op: "gemm.gemm", Threads: 1, Cold: true, FLOPs: 1e9, Bytes: 1e6, Seconds: 1}, 100, "compute"},
		{roofline.Point{Op: "gemm.gemm", Class: "int8act", Threads: 1, Cold: true, FLOPs: 1e9, Bytes: 1e6, Seconds: 1}, 400, "compute"},
		// bf16act without a bf16 peak: held to f32
		{roofline.Point{Op: "gemm.gemm", Class: "bf16act", Threads: 1, Cold: true, FLOPs: 1e9, Bytes: 1e6, Seconds: 1}, 100, "compute"},
		{roofline.Point{Op: "gemm.gemm", Threads: 1}, 0, ""},
		// the working set, not the bytes moved, picks the level: 4 MB
		// moved over a 16 KiB state is held to L1
		{roofline.Point{Op: "kda.decode", Threads: 1, FLOPs: 1e5, Bytes: 4e6, Footprint: 16 << 10, Seconds: 1}, 5, "L1"},
		{roofline.Point{Op: "kda.decode", Threads: 1, FLOPs: 1e5, Bytes: 4e6, Seconds: 1}, 1.25, "L3"},
	} {
		roof, bound := tc.p.Roof(c)
		if math.Abs(roof-tc.roof) > 1e-9 || bound != tc.bound {
			t.Errorf("%+v: roof %g %s, want %g %s", tc.p, roof, bound, tc.roof, tc.bound)
		}
	}
	for _, tc := range []struct {
		p    roofline.Point
		want string
	}{
		{roofline.Point{Threads: 1, Cold: true, FLOPs: 4e6, Bytes: 1e6, Seconds: 1e-3}, "10% DRAM"},  // 4 GFLOP/s of 40
		{roofline.Point{Threads: 1, Cold: true, FLOPs: 4e6, Bytes: 1e6, Seconds: 1e-4}, "100% DRAM"}, // 40 of 40
		{roofline.Point{Threads: 1, Cold: true, FLOPs: 4e6, Bytes: 1e6, Seconds: 5e-5}, "above roof (200% of DRAM)"},
		{roofline.Point{Threads: 1, Cold: true, FLOPs: 1e9, Bytes: 1e6, Seconds: 0.02}, "50% compute"}, // 50 of 100
		{roofline.Point{Threads: 1, FLOPs: 1e9, Bytes: 1e6}, "-"},
	} {
		if got := tc.p.RoofCell(c); got != tc.want {
			t.Errorf("RoofCell(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
	for op, want := range map[string]string{"gemm.gemv": "gemm", "moe.block": "moe", "kda.decode": "kda", "mla.prefill": "mla",
		"norm.rmsnorm": "norm", "attn.softmax": "other", "gemm": "gemm", "": "other", "other.x": "other"} {
		if got := (roofline.Point{Op: op}).Family(); got != want {
			t.Errorf("Family(%q) = %s, want %s", op, got, want)
		}
	}
	if got := RooflineThreads(c); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("RooflineThreads = %v", got)
	}
	if got := PlotThreads(c, []roofline.Point{{Threads: 7}}); got != 2 {
		t.Errorf("PlotThreads for a 7-thread point = %d", got)
	}
}
func TestPlots(t *testing.T) {
	c := rooflinetest.Ceilings()
	pts := []roofline.Point{
		{Label: "decode", Variant: "v", Threads: 2, FLOPs: 1e6, Bytes: 1e6, Seconds: 1e-4},
		{Label: "prefill", Variant: "v", Threads: 2, FLOPs: 1e10, Bytes: 1e7, Seconds: 0.1},
	}
	dir := t.TempDir()
	for _, name := range []string{"roofline.png", "roofline.svg", "bandwidth.png", "bandwidth.svg"} {
		path := filepath.Join(dir, name)
		var err error
		if name[0] == 'r' {
			err = PlotRoofline(c, pts, path)
		} else {
			err = PlotBandwidth(c, path)
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v, %d bytes", name, err, st.Size())
		}
	}
	if err := PlotRoofline(c, pts, filepath.Join(dir, "noext")); err == nil {
		t.Error("a path without extension was accepted")
	}
	if err := PlotRoofline(&roofline.Ceilings{}, nil, filepath.Join(dir, "x.png")); err == nil {
		t.Error("empty ceilings plotted")
	}
	if os.Getenv("KTUNE_PLOT_DIR") != "" { // to look at them
		PlotRoofline(c, pts, filepath.Join(os.Getenv("KTUNE_PLOT_DIR"), "roofline.png"))
		PlotBandwidth(c, filepath.Join(os.Getenv("KTUNE_PLOT_DIR"), "bandwidth.png"))
	}
}
