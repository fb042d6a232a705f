package reports

// The one roofline plotter: a roofChart is the ceilings of one or more
// machines (compute peaks as horizontal lines, bandwidths as slopes up to
// their ridge with the machine's peak) and the points measured on them;
// ktune's per-machine plots (roofplot.go) and kprofile's comparison
// (RooflineFigure) both draw through it.
//
// The figure is laid out before anything is drawn: where every roof line,
// point mark and piece of text goes, in canvas coordinates (points, origin
// at the bottom left), with the same font metrics the renderer uses.
// render then draws exactly those boxes, so the test can check on the
// layout alone that no two text boxes overlap and none leaves the canvas.
//
// The figure is the gonum plot (axes, grid, roof lines) in the upper part
// of the canvas and a panel below it: a key (the point styles, the
// over-roof ring, every roof line's style and figure, under its machine)
// and, for a numbered chart, a table with a row per point. Each point
// carries its number (or, unnumbered, its label), placed next to it where
// it covers no other text or mark (a leader line joins the two when the
// nearest free place is further out), and the table gives the number's
// op, shape, dtype, variant, achieved figures and fraction of its roof.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ktune/ktune/roofline"
)

// Sizes, in points unless said otherwise.
const (
	figWidth   = 12 * vg.Inch // canvas width
	plotHeight = 7 * vg.Inch  // the plot above the panel
	panelPad   = vg.Length(10)
	textPad    = vg.Length(1.5) // around the ink of every text box
	markRadius = vg.Length(4.5)
	ringRadius = vg.Length(8)
	pngDPI     = 144
)

var (
	numberFont = font.Font{Typeface: "Liberation", Variant: "Sans", Size: 8}
	roofFont   = font.Font{Typeface: "Liberation", Variant: "Sans", Size: 8}
	keyFont    = font.Font{Typeface: "Liberation", Variant: "Sans", Size: 8}
	tableFont  = font.Font{Typeface: "Liberation", Variant: "Sans", Size: 7.5}
)

var (
	textColor    = color.RGBA{R: 0x11, G: 0x11, B: 0x11, A: 0xff}
	overColor    = color.RGBA{R: 0xd0, A: 0xff}
	computeColor = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	leaderColor  = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}
	backColor    = color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xd8} // behind text over the data
)

// markStyle is how a point is marked, and what the key calls the style.
type markStyle struct {
	name  string
	color color.Color
	shape string
}

// markStyles is the palette of point marks (Okabe–Ito colours): ktune's
// plots give one to each op family (indexed as roofline.Families), the
// comparison one to each machine.
var markStyles = []markStyle{
	{"", color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, "circle"},   // gemm
	{"", color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, "square"},   // moe
	{"", color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, "triangle"}, // kda
	{"", color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, "diamond"},  // mla
	{"", color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, "down"},     // norm
	{"", color.RGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xff}, "cross"},    // other
}

// styleFor is the palette's style number i, named.
func styleFor(i int, name string) markStyle {
	st := markStyles[i%len(markStyles)]
	st.name = name
	return st
}

// chartLine is a ceiling on a roofChart: a compute peak (GFLOP/s), drawn
// level from its ridge with the machine's highest bandwidth, or a
// bandwidth (GB/s), drawn as a slope up to its ridge with the machine's
// highest peak.
type chartLine struct {
	label string // in the plot
	key   string // in the key, when it says more than label
	value float64
	slope bool // a bandwidth
	style draw.LineStyle
}

// chartMachine is one machine's ceilings, in the order their labels get
// a place in the plot (drawn in reverse, the first on top).
type chartMachine struct {
	name  string // heads its lines in the key ("" for the only machine)
	lines []chartLine
}

// roof is the machine's highest compute peak and its highest and lowest
// bandwidths, 0 where it has none.
func (m chartMachine) roof() (peak, maxBW, minBW float64) {
	for _, l := range m.lines {
		switch {
		case !l.slope:
			peak = max(peak, l.value)
		case minBW == 0:
			maxBW, minBW = l.value, l.value
		default:
			maxBW, minBW = max(maxBW, l.value), min(minBW, l.value)
		}
	}
	return peak, maxBW, minBW
}

// roofChart is a roofline plot of one or more machines and points.
type roofChart struct {
	title    string
	machines []chartMachine
	points   []plotPoint // plotPoint.fam indexes styles
	styles   []markStyle
	styleKey string // heads the styles in the key
	// numbered charts number their points and list them in a table below
	// (noting a point's threads where they are not threads); others write
	// each point's label, if any, beside it.
	numbered bool
	threads  int
	plotH    vg.Length // the plot's height above the panel (0: plotHeight)
}

// levelStyle is a bandwidth roof's line: DRAM solid black, the caches in
// their own colours and dashes.
func levelStyle(level string) draw.LineStyle {
	switch level {
	case "L1":
		return draw.LineStyle{Color: color.RGBA{R: 0x5e, G: 0x3c, B: 0x99, A: 0xff}, Width: 1.6, Dashes: []vg.Length{1.5, 2.5}}
	case "L2":
		return draw.LineStyle{Color: color.RGBA{R: 0x01, G: 0x85, B: 0x71, A: 0xff}, Width: 1.6, Dashes: []vg.Length{5, 2.5}}
	case "L3":
		return draw.LineStyle{Color: color.RGBA{R: 0xa6, G: 0x61, B: 0x1a, A: 0xff}, Width: 1.6, Dashes: []vg.Length{10, 3, 2, 3}}
	}
	return draw.LineStyle{Color: color.Black, Width: 2}
}

var computeStyle = draw.LineStyle{Color: computeColor, Width: 1.2}

// boxKind says what a labelBox is.
type boxKind int

const (
	boxNumber boxKind = iota // a point's number in the plot
	boxRoof                  // a roof line's label in the plot
	boxKey                   // text of the key
	boxTable                 // a cell of the points table
	boxSwatch                // a mark or line sample in the key or table
)

func (k boxKind) String() string {
	return [...]string{"number", "roof", "key", "table", "swatch"}[k]
}

// labelBox is one thing drawn over or beside the plot that must not
// overlap another: a text (Rect is its ink box, ascent to descent, plus
// textPad) or a swatch (a family mark or a line sample).
type labelBox struct {
	Kind boxKind
	Text string
	Rect vg.Rectangle
	// Point is the index in figure.marks of the point a number or table
	// row belongs to (-1 none).
	Point int

	font  font.Font
	color color.Color
	back  bool // a white backing: text over the data area
	// swatches: a point's mark (fam ≥ 0, its style; ring for over-roof),
	// or a line.
	fam  int
	ring bool
	line *draw.LineStyle
}

// baseline is where the text is drawn from: left end of its baseline.
func (b labelBox) baseline() vg.Point {
	e := fontFace(b.font).Extents()
	return vg.Point{X: b.Rect.Min.X + textPad, Y: b.Rect.Min.Y + textPad + e.Descent}
}

// mark is a point on the plot.
type mark struct {
	at   vg.Point // canvas
	fam  int      // its style, index in figure.styles
	over bool     // above roofline.OverRoof of its roof
	num  int      // its number in the table, from 1
}

// rect is the area the mark covers (its ring included).
func (m mark) rect() vg.Rectangle {
	r := markRadius * 1.3
	if m.over {
		r = ringRadius + 1
	}
	return vg.Rectangle{Min: vg.Point{X: m.at.X - r, Y: m.at.Y - r}, Max: vg.Point{X: m.at.X + r, Y: m.at.Y + r}}
}

// figure is a laid-out roofline plot.
type figure struct {
	w, h     vg.Length
	styles   []markStyle // the marks'
	plot     *plot.Plot
	plotArea vg.Rectangle // where plot is drawn
	data     vg.Rectangle // its data area
	segs     [][2]vg.Point
	marks    []mark
	leaders  [][2]vg.Point
	boxes    []labelBox
	// dropped lists the roof labels that found no free place in the plot
	// (their figures are in the key).
	dropped []string
}

func fontFace(f font.Font) *font.Face {
	face := font.DefaultCache.Lookup(f, f.Size)
	return &face
}

// textBox sizes a text's box with its bottom-left corner at the origin.
func textBox(kind boxKind, txt string, f font.Font, c color.Color) labelBox {
	face := fontFace(f)
	e := face.Extents()
	return labelBox{Kind: kind, Text: txt, font: f, color: c, fam: -1, Point: -1,
		Rect: vg.Rectangle{Max: vg.Point{X: face.Width(txt) + 2*textPad, Y: e.Ascent + e.Descent + 2*textPad}}}
}

func (b labelBox) size() vg.Point { return b.Rect.Size() }

// moveTo puts the box's bottom-left corner at p.
func (b labelBox) moveTo(p vg.Point) labelBox {
	s := b.size()
	b.Rect = vg.Rectangle{Min: p, Max: p.Add(s)}
	return b
}

// overlaps reports whether two rectangles share area (touching edges do not).
func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// inside reports whether a lies within b.
func inside(a, b vg.Rectangle) bool {
	return a.Min.X >= b.Min.X && a.Max.X <= b.Max.X && a.Min.Y >= b.Min.Y && a.Max.Y <= b.Max.Y
}

// crosses reports whether the segment p–q passes through the rectangle.
func crosses(p, q vg.Point, r vg.Rectangle) bool {
	_, _, ok := clipSeg(p, q, r)
	return ok
}

// clipSeg clips the segment p–q to r; ok is false when nothing is left.
func clipSeg(p, q vg.Point, r vg.Rectangle) (a, b vg.Point, ok bool) {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(q.X-p.X), float64(q.Y-p.Y)
	for _, c := range [4][2]float64{
		{-dx, float64(p.X - r.Min.X)}, {dx, float64(r.Max.X - p.X)},
		{-dy, float64(p.Y - r.Min.Y)}, {dy, float64(r.Max.Y - p.Y)},
	} {
		pk, qk := c[0], c[1]
		if pk == 0 {
			if qk < 0 {
				return a, b, false
			}
			continue
		}
		t := qk / pk
		if pk < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return a, b, false
		}
	}
	at := func(t float64) vg.Point {
		return vg.Point{X: p.X + vg.Length(t*dx), Y: p.Y + vg.Length(t*dy)}
	}
	return at(t0), at(t1), true
}

// placer finds free places for labels in the data area.
type placer struct {
	area  vg.Rectangle
	taken []vg.Rectangle
	segs  [][2]vg.Point
}

// free reports whether r fits in the area over nothing taken (and, with
// lines, crossing no roof line).
func (pl *placer) free(r vg.Rectangle, lines bool) bool {
	if !inside(r, pl.area) {
		return false
	}
	for _, t := range pl.taken {
		if overlaps(r, t) {
			return false
		}
	}
	if lines {
		for _, s := range pl.segs {
			if crosses(s[0], s[1], r) {
				return false
			}
		}
	}
	return true
}

// first returns the first candidate free of everything, else the first
// free of all but the lines; ok is false when none is free.
func (pl *placer) first(cands []vg.Rectangle) (vg.Rectangle, bool) {
	for _, lines := range []bool{true, false} {
		for _, r := range cands {
			if pl.free(r, lines) {
				return r, true
			}
		}
	}
	return vg.Rectangle{}, false
}

// around lists places for a box of size s near p, nearest first: the
// eight directions at the mark's edge, then rings further out in sixteen.
func around(p vg.Point, s vg.Point, from, to vg.Length) []vg.Rectangle {
	var out []vg.Rectangle
	dirs8 := []float64{0, 45, -45, 90, -90, 135, -135, 180}
	var dirs16 []float64
	for i := 0; i < 16; i++ {
		dirs16 = append(dirs16, float64(i)*22.5)
	}
	for d := from; d <= to; d += 3 {
		dirs := dirs16
		if d == from {
			dirs = dirs8
		}
		for _, deg := range dirs {
			sin, cos := math.Sincos(deg * math.Pi / 180)
			c := vg.Point{X: p.X + vg.Length(cos)*(d+s.X/2), Y: p.Y + vg.Length(sin)*(d+s.Y/2)}
			out = append(out, vg.Rectangle{Min: vg.Point{X: c.X - s.X/2, Y: c.Y - s.Y/2}, Max: vg.Point{X: c.X + s.X/2, Y: c.Y + s.Y/2}})
		}
	}
	return out
}

// gridNearest lists every place for a box of size s on a 4-point grid
// over area, nearest to p first: the last resort.
func gridNearest(p, s vg.Point, area vg.Rectangle) []vg.Rectangle {
	var out []vg.Rectangle
	for y := area.Min.Y; y+s.Y <= area.Max.Y; y += 4 {
		for x := area.Min.X; x+s.X <= area.Max.X; x += 4 {
			out = append(out, vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + s.X, Y: y + s.Y}})
		}
	}
	dist := func(r vg.Rectangle) float64 { return float64(rectDist(p, r)) }
	sort.SliceStable(out, func(i, j int) bool { return dist(out[i]) < dist(out[j]) })
	return out
}

// rectDist is the distance from p to the nearest point of r.
func rectDist(p vg.Point, r vg.Rectangle) vg.Length {
	q := nearestOn(p, r)
	return vg.Length(math.Hypot(float64(p.X-q.X), float64(p.Y-q.Y)))
}

func nearestOn(p vg.Point, r vg.Rectangle) vg.Point {
	return vg.Point{X: min(max(p.X, r.Min.X), r.Max.X), Y: min(max(p.Y, r.Min.Y), r.Max.Y)}
}

// plotPoint is a point with what the figure shows of it.
type plotPoint struct {
	roofline.Point
	ai, g, roof float64
	cell        string // RoofCell
	fam         int    // its style in the chart
}

func fmtFig(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// layout lays the chart out on a canvas w wide and h high (h ≤ 0: its
// plot height plus what the key and table need).
func (ch *roofChart) layout(w, h vg.Length) (*figure, error) {
	// The points, numbered by style (family or machine), then intensity.
	var pp []plotPoint
	for _, p := range ch.points {
		if p.ai > 0 && p.g > 0 && !math.IsInf(p.ai, 0) && !math.IsInf(p.g, 0) {
			pp = append(pp, p)
		}
	}
	sort.SliceStable(pp, func(i, j int) bool {
		a, b := pp[i], pp[j]
		if a.fam != b.fam {
			return a.fam < b.fam
		}
		if a.ai != b.ai {
			return a.ai < b.ai
		}
		return a.g < b.g
	})
	over := func(p plotPoint) bool { return p.roof > 0 && p.g > roofline.OverRoof*p.roof }

	f := &figure{w: w, styles: ch.styles}

	// The panel: key and table, sized first for the canvas height.
	avail := w - 2*panelPad
	keyBoxes, keyH := flow(ch.keyItems(pp, over), avail)
	var table []labelBox
	var tableH vg.Length
	if ch.numbered {
		table, tableH = pointTable(pp, ch.threads, over, avail)
	}
	panelH := panelPad + keyH + panelPad
	if len(table) > 0 {
		panelH += tableH + panelPad
	}
	if h <= 0 {
		h = cmp.Or(ch.plotH, plotHeight) + panelH
	}
	f.h = h
	if h-panelH < 2*vg.Inch {
		return nil, fmt.Errorf("roofline: a %.0f pt high canvas leaves no room for the plot above %.0f pt of key and table", float64(h), float64(panelH))
	}
	top := panelH - panelPad // the panel's content, top down
	for _, b := range keyBoxes {
		b.Rect = b.Rect.Add(vg.Point{X: panelPad, Y: top - keyH})
		f.boxes = append(f.boxes, b)
	}
	for _, b := range table {
		b.Rect = b.Rect.Add(vg.Point{X: panelPad, Y: top - keyH - panelPad - tableH})
		f.boxes = append(f.boxes, b)
	}

	// The plot: ranges as wide as every roof and point needs, the roof
	// lines in data coordinates.
	xmin, xmax := 1.0/64, 4.0
	for _, m := range ch.machines {
		if peak, _, minBW := m.roof(); peak > 0 && minBW > 0 {
			xmax = max(xmax, 4*peak/minBW)
		}
	}
	for _, p := range pp {
		xmin, xmax = min(xmin, p.ai/2), max(xmax, p.ai*4)
	}
	type line struct {
		chartLine
		xy    plotter.XYs
		below bool // label below the line first: the machine's lowest slope
	}
	var lines []line
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, m := range ch.machines {
		peak, maxBW, minBW := m.roof()
		for _, l := range m.lines {
			var xy plotter.XYs
			if l.slope {
				x1 := xmax
				if peak > 0 {
					x1 = min(xmax, peak/l.value)
				}
				xy = plotter.XYs{{X: xmin, Y: xmin * l.value}, {X: x1, Y: x1 * l.value}}
			} else {
				x0 := xmin
				if maxBW > 0 {
					x0 = max(xmin, l.value/maxBW)
				}
				xy = plotter.XYs{{X: x0, Y: l.value}, {X: xmax, Y: l.value}}
			}
			ymin, ymax = min(ymin, xy[0].Y), max(ymax, xy[1].Y)
			lines = append(lines, line{chartLine: l, xy: xy, below: l.slope && l.value == minBW})
		}
	}
	if len(lines) == 0 {
		return nil, errors.New("roofline: no ceilings to plot")
	}
	ymin, ymax = ymin/2, 2*ymax
	for _, p := range pp {
		ymin, ymax = min(ymin, p.g/2), max(ymax, p.g*2)
	}
	p := plot.New()
	p.Title.Text = ch.title
	p.X.Label.Text = "arithmetic intensity (FLOP or OP per byte)"
	p.Y.Label.Text = "GFLOP/s (GOP/s for int8)"
	p.Title.TextStyle.Font.Variant = "Sans"
	p.Title.TextStyle.Font.Size = 12
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.LogTicks{Prec: -1}
		a.Label.TextStyle.Font.Variant = "Sans"
		a.Tick.Label.Font.Variant = "Sans"
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	for i := len(lines) - 1; i >= 0; i-- { // the first line on top
		l, err := plotter.NewLine(lines[i].xy)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lines[i].style
		p.Add(l)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	f.plot = p
	f.plotArea = vg.Rectangle{Min: vg.Point{X: 0, Y: panelH}, Max: vg.Point{X: w, Y: h}}
	dc := p.DataCanvas(draw.Canvas{Rectangle: f.plotArea})
	f.data = dc.Rectangle
	tx, ty := p.Transforms(&dc)
	at := func(x, y float64) vg.Point { return vg.Point{X: tx(x), Y: ty(y)} }

	// Roof segments and marks in canvas coordinates.
	pl := &placer{area: vg.Rectangle{Min: f.data.Min.Add(vg.Point{X: 2, Y: 2}), Max: f.data.Max.Sub(vg.Point{X: 2, Y: 2})}}
	lineSegs := make([][2]vg.Point, len(lines))
	for i, l := range lines {
		a, b, ok := clipSeg(at(l.xy[0].X, l.xy[0].Y), at(l.xy[1].X, l.xy[1].Y), f.data)
		if ok {
			lineSegs[i] = [2]vg.Point{a, b}
			pl.segs = append(pl.segs, lineSegs[i])
		}
	}
	f.segs = pl.segs
	for i, q := range pp {
		m := mark{at: at(q.ai, q.g), fam: q.fam, over: over(q), num: i + 1}
		f.marks = append(f.marks, m)
		pl.taken = append(pl.taken, m.rect())
	}

	// Roof labels: compute ceilings at the right end, above the line then
	// below, moving left; slopes beside the line, up from its low end.
	for i, l := range lines {
		b := textBox(boxRoof, l.label, roofFont, l.style.Color)
		b.back = true
		sz := b.size()
		seg := lineSegs[i]
		if seg == [2]vg.Point{} {
			f.dropped = append(f.dropped, l.label)
			continue
		}
		var cands []vg.Rectangle
		if !l.slope {
			y := seg[0].Y
			for x := seg[1].X - 2; x-sz.X >= seg[0].X; x -= 12 {
				for _, y0 := range []vg.Length{y + 1, y - 1 - sz.Y} {
					cands = append(cands, vg.Rectangle{Min: vg.Point{X: x - sz.X, Y: y0}, Max: vg.Point{X: x, Y: y0 + sz.Y}})
				}
			}
		} else {
			n := 40
			above := func(q vg.Point) vg.Rectangle { // to the upper left of the line
				return vg.Rectangle{Min: vg.Point{X: q.X - 1 - sz.X, Y: q.Y + 1}, Max: vg.Point{X: q.X - 1, Y: q.Y + 1 + sz.Y}}
			}
			below := func(q vg.Point) vg.Rectangle { // to the lower right
				return vg.Rectangle{Min: vg.Point{X: q.X + 1, Y: q.Y - 1 - sz.Y}, Max: vg.Point{X: q.X + 1 + sz.X, Y: q.Y - 1}}
			}
			sides := []func(vg.Point) vg.Rectangle{above, below}
			if l.below {
				sides = []func(vg.Point) vg.Rectangle{below, above}
			}
			for k := 0; k <= n; k++ {
				t := vg.Length(float64(k) / float64(n))
				q := vg.Point{X: seg[0].X + t*(seg[1].X-seg[0].X), Y: seg[0].Y + t*(seg[1].Y-seg[0].Y)}
				for _, side := range sides {
					cands = append(cands, side(q))
				}
			}
		}
		if r, ok := pl.first(cands); ok {
			b.Rect = r
			f.boxes = append(f.boxes, b)
			pl.taken = append(pl.taken, r)
		} else {
			f.dropped = append(f.dropped, l.label)
		}
	}

	// Point numbers (or labels): next to the mark, else the nearest free
	// place with a leader line.
	for i, m := range f.marks {
		txt := fmt.Sprint(m.num)
		if !ch.numbered {
			if txt = pp[i].Label; txt == "" {
				continue
			}
		}
		b := textBox(boxNumber, txt, numberFont, textColor)
		b.back, b.Point = true, i
		sz := b.size()
		edge := m.rect().Max.X - m.at.X + 0.5
		r, ok := pl.first(around(m.at, sz, edge, edge+30))
		if !ok {
			r, ok = pl.first(around(m.at, sz, edge+33, 200))
		}
		if !ok {
			r, ok = pl.first(gridNearest(m.at, sz, pl.area))
		}
		if !ok {
			return nil, errors.New("roofline: no free place for a point's number")
		}
		b.Rect = r
		f.boxes = append(f.boxes, b)
		pl.taken = append(pl.taken, r)
		if d := rectDist(m.at, r); d > edge+4 {
			q := nearestOn(m.at, r)
			// from the mark's edge to the box
			u := vg.Length(float64(markRadius) / float64(d))
			f.leaders = append(f.leaders, [2]vg.Point{m.at.Add(q.Sub(m.at).Scale(u)), q})
		}
	}
	return f, nil
}

// keyItem is one entry of the key: an optional swatch and a text. A nil
// item breaks the line.
type keyItem struct {
	swatch *labelBox
	text   string
	color  color.Color
}

// keyItems is the key: the styles of the points there are (and the ring
// if a point is above its roof), then each machine's roofs, bandwidths
// first.
func (ch *roofChart) keyItems(pp []plotPoint, over func(plotPoint) bool) []*keyItem {
	var out []*keyItem
	sw := func(fam int, ring bool, line *draw.LineStyle) *labelBox {
		b := textBox(boxSwatch, "", keyFont, nil)
		b.Rect.Max.X = 16
		if line != nil {
			b.Rect.Max.X = 30
		}
		b.fam, b.ring, b.line = fam, ring, line
		return &b
	}
	if len(pp) > 0 {
		out = append(out, &keyItem{text: ch.styleKey})
		for i, st := range ch.styles {
			if slices.ContainsFunc(pp, func(p plotPoint) bool { return p.fam == i }) {
				out = append(out, &keyItem{swatch: sw(i, false, nil), text: st.name})
			}
		}
		if slices.ContainsFunc(pp, over) {
			ringText := fmt.Sprintf("above %.0f%% of its roof (cold runs: DRAM; warm: the smallest cache holding the working set; or the class's compute peak)", 100*roofline.OverRoof)
			out = append(out, &keyItem{swatch: sw(-1, true, nil), text: ringText, color: overColor})
		}
		out = append(out, nil)
	}
	for i, m := range ch.machines {
		if i > 0 {
			out = append(out, nil)
		}
		head := "Roofs:"
		if m.name != "" {
			head = m.name + ":"
		}
		out = append(out, &keyItem{text: head})
		for _, slope := range []bool{true, false} {
			for _, l := range m.lines {
				if l.slope == slope {
					st := l.style
					out = append(out, &keyItem{swatch: sw(-1, false, &st), text: cmp.Or(l.key, l.label)})
				}
			}
		}
	}
	return out
}

// flow lays the key out in lines across width w, top down, from y = 0
// (the boxes' Y end at height, which it returns).
func flow(items []*keyItem, w vg.Length) ([]labelBox, vg.Length) {
	const gap, itemGap = 3, 14
	var lines [][]labelBox
	var cur []labelBox
	x := vg.Length(0)
	for _, it := range items {
		if it == nil {
			lines, cur, x = append(lines, cur), nil, 0
			continue
		}
		col := it.color
		if col == nil {
			col = textColor
		}
		t := textBox(boxKey, it.text, keyFont, col)
		var sw labelBox
		need := t.size().X
		if it.swatch != nil {
			sw = *it.swatch
			need += sw.size().X + gap
		}
		if x > 0 && x+need > w {
			lines, cur, x = append(lines, cur), nil, 0
		}
		if it.swatch != nil {
			cur = append(cur, sw.moveTo(vg.Point{X: x}))
			x += sw.size().X + gap
		}
		cur = append(cur, t.moveTo(vg.Point{X: x}))
		x += t.size().X + itemGap
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	lineH := textBox(boxKey, "x", keyFont, nil).size().Y + 2
	var out []labelBox
	for i, l := range lines {
		y := vg.Length(len(lines)-1-i) * lineH
		for _, b := range l {
			out = append(out, b.moveTo(vg.Point{X: b.Rect.Min.X, Y: y}))
		}
	}
	return out, vg.Length(len(lines)) * lineH
}

// pointTable lays out the table of points in at most width w: a header
// and a row per point, in side-by-side blocks when there are many rows
// and the width allows. Boxes start at y = 0; it returns the height.
func pointTable(pp []plotPoint, threads int, over func(plotPoint) bool, w vg.Length) ([]labelBox, vg.Length) {
	if len(pp) == 0 {
		return nil, 0
	}
	const colGap, blockGap = 8, 24
	header := []string{"#", "", "point", "op / variant", "dtype", "shape", "caches", "FLOP/B", "GFLOP/s", "GB/s", "of roof"}
	right := []bool{true, false, false, false, false, false, false, true, true, true, false}
	trunc := []int{2, 3, 5} // columns that may be shortened to fit
	rows := make([][]string, len(pp))
	for i, p := range pp {
		lbl := p.Label
		if p.Threads != threads && p.Threads > 0 {
			lbl += fmt.Sprintf(" (%d thr)", p.Threads)
		}
		run := "warm"
		if p.Cold {
			run = "cold"
		}
		rows[i] = []string{fmt.Sprint(i + 1), "", lbl, p.Op + " / " + p.Variant, p.DType, p.Shape, run,
			fmtFig(p.ai), fmtFig(p.g), fmtFig(p.GBs()), p.cell}
	}
	swatchW := vg.Length(14)
	widths := func() ([]vg.Length, vg.Length) {
		ws := make([]vg.Length, len(header))
		for j := range header {
			ws[j] = textBox(boxTable, header[j], tableFont, nil).size().X
			for _, r := range rows {
				ws[j] = max(ws[j], textBox(boxTable, r[j], tableFont, nil).size().X)
			}
		}
		ws[1] = swatchW
		total := vg.Length(colGap * (len(ws) - 1))
		for _, x := range ws {
			total += x
		}
		return ws, total
	}
	ws, total := widths()
	for total > w {
		// shorten the longest cell of the widest shortenable column
		j := trunc[0]
		for _, k := range trunc {
			if ws[k] > ws[j] {
				j = k
			}
		}
		longest := 0
		for i, r := range rows {
			if len([]rune(r[j])) > len([]rune(rows[longest][j])) {
				longest = i
			}
		}
		rs := []rune(strings.TrimSuffix(rows[longest][j], "…"))
		if len(rs) <= 6 {
			break
		}
		rows[longest][j] = string(rs[:len(rs)-1]) + "…"
		ws, total = widths()
	}
	blocks := 1
	for b := 2; b <= 3; b++ {
		if len(pp) >= 12*b && vg.Length(b)*total+vg.Length(b-1)*blockGap <= w {
			blocks = b
		}
	}
	perBlock := (len(pp) + blocks - 1) / blocks
	rowH := textBox(boxTable, "x", tableFont, nil).size().Y + 1
	height := vg.Length(perBlock+1) * rowH
	var out []labelBox
	cell := func(txt string, j int, x0, y vg.Length, col color.Color, point int) {
		b := textBox(boxTable, txt, tableFont, col)
		b.Point = point
		x := x0
		for k := 0; k < j; k++ {
			x += ws[k] + colGap
		}
		if right[j] {
			x += ws[j] - b.size().X
		}
		out = append(out, b.moveTo(vg.Point{X: x, Y: y}))
	}
	for blk := 0; blk < blocks; blk++ {
		x0 := vg.Length(blk) * (total + blockGap)
		y := height - rowH
		for j, hd := range header {
			if hd != "" {
				cell(hd, j, x0, y, computeColor, -1)
			}
		}
		for i := blk * perBlock; i < min(len(pp), (blk+1)*perBlock); i++ {
			y -= rowH
			for j, txt := range rows[i] {
				if j == 1 {
					sw := textBox(boxSwatch, "", tableFont, nil)
					sw.Rect.Max.X = swatchW
					sw.fam, sw.ring, sw.Point = pp[i].fam, over(pp[i]), i
					x := x0 + ws[0] + colGap
					out = append(out, sw.moveTo(vg.Point{X: x, Y: y}))
					continue
				}
				col := color.Color(textColor)
				if j == len(header)-1 && over(pp[i]) {
					col = overColor
				}
				cell(txt, j, x0, y, col, i)
			}
		}
	}
	return out, height
}

// encode renders the figure in a format: PNG at pngDPI, anything else
// gonum writes.
func (f *figure) encode(ext string) ([]byte, error) {
	var cw vg.CanvasWriterTo
	if ext == "png" {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI))}
	} else {
		var err error
		if cw, err = draw.NewFormattedCanvas(f.w, f.h, ext); err != nil {
			return nil, err
		}
	}
	f.render(draw.New(cw))
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// svg renders the figure as an inline <svg> element (see SVG).
func (f *figure) svg() (template.HTML, error) {
	b, err := f.encode("svg")
	if err != nil {
		return "", fmt.Errorf("rendering SVG: %w", err)
	}
	return svgElement(b)
}

// render draws the figure on c, a canvas of the figure's size.
func (f *figure) render(c draw.Canvas) {
	f.plot.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: f.plotArea})
	for _, l := range f.leaders {
		c.StrokeLine2(draw.LineStyle{Color: leaderColor, Width: 0.7}, l[0].X, l[0].Y, l[1].X, l[1].Y)
	}
	for _, m := range f.marks {
		drawMark(c, f.styles[m.fam], m.at, markRadius)
	}
	for _, m := range f.marks {
		if m.over {
			drawRing(c, m.at)
		}
	}
	for _, b := range f.boxes {
		switch {
		case b.Kind == boxSwatch && b.line != nil:
			y := (b.Rect.Min.Y + b.Rect.Max.Y) / 2
			c.StrokeLine2(*b.line, b.Rect.Min.X+1, y, b.Rect.Max.X-1, y)
		case b.Kind == boxSwatch:
			ctr := vg.Point{X: (b.Rect.Min.X + b.Rect.Max.X) / 2, Y: (b.Rect.Min.Y + b.Rect.Max.Y) / 2}
			r := min(markRadius, b.size().Y/2-1)
			if b.fam >= 0 {
				drawMark(c, f.styles[b.fam], ctr, r)
			}
			if b.ring {
				rr := min(ringRadius, b.size().Y/2+1)
				if b.fam >= 0 {
					rr = min(rr, b.size().X/2)
				}
				c.SetLineStyle(draw.LineStyle{Color: overColor, Width: 1.4})
				var p vg.Path
				p.Move(vg.Point{X: ctr.X + rr, Y: ctr.Y})
				p.Arc(ctr, rr, 0, 2*math.Pi)
				p.Close()
				c.Stroke(p)
			}
		default:
			if b.back {
				c.SetColor(backColor)
				c.Fill(b.Rect.Path())
			}
			c.SetColor(b.color)
			c.FillString(*fontFace(b.font), b.baseline(), b.Text)
		}
	}
}

// drawMark draws a filled mark of radius r at p, outlined.
func drawMark(c draw.Canvas, st markStyle, p vg.Point, r vg.Length) {
	poly := func(radius vg.Length, degs ...float64) vg.Path {
		var path vg.Path
		for i, d := range degs {
			sin, cos := math.Sincos(d * math.Pi / 180)
			q := vg.Point{X: p.X + radius*vg.Length(cos), Y: p.Y + radius*vg.Length(sin)}
			if i == 0 {
				path.Move(q)
			} else {
				path.Line(q)
			}
		}
		path.Close()
		return path
	}
	var path vg.Path
	switch st.shape {
	case "circle":
		path.Move(vg.Point{X: p.X + r, Y: p.Y})
		path.Arc(p, r, 0, 2*math.Pi)
		path.Close()
	case "square":
		path = poly(r*1.25, 45, 135, 225, 315)
	case "triangle":
		path = poly(r*1.3, 90, 210, 330)
	case "diamond":
		path = poly(r*1.25, 0, 90, 180, 270)
	case "down":
		path = poly(r*1.3, 270, 30, 150)
	case "cross":
		d := r * 0.85
		c.StrokeLine2(draw.LineStyle{Color: st.color, Width: 2.2}, p.X-d, p.Y-d, p.X+d, p.Y+d)
		c.StrokeLine2(draw.LineStyle{Color: st.color, Width: 2.2}, p.X-d, p.Y+d, p.X+d, p.Y-d)
		return
	}
	c.SetColor(st.color)
	c.Fill(path)
	c.SetLineStyle(draw.LineStyle{Color: color.RGBA{R: 0x20, G: 0x20, B: 0x20, A: 0xff}, Width: 0.5})
	c.Stroke(path)
}

// drawRing circles an over-roof point in red.
func drawRing(c draw.Canvas, p vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: overColor, Width: 1.6})
	var path vg.Path
	path.Move(vg.Point{X: p.X + ringRadius, Y: p.Y})
	path.Arc(p, ringRadius, 0, 2*math.Pi)
	path.Close()
	c.Stroke(path)
}
