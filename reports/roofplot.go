package reports

// ktune's plots: a machine's measured ceilings (roofline.Ceilings) and
// kernel points as rooflines, one per thread count, through the roofline
// plotter (rooflayout.go), and bandwidth against working set with the
// detected cache sizes.

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/roofline"
)

// RooflineThreads lists the thread counts with compute ceilings,
// ascending: there is a roofline plot for each.
func RooflineThreads(c *roofline.Ceilings) []int {
	var ts []int
	for _, cc := range c.Compute {
		if cc.Threads > 0 && !slices.Contains(ts, cc.Threads) {
			ts = append(ts, cc.Threads)
		}
	}
	slices.Sort(ts)
	return ts
}

// plotOf is the thread count of the plot a point ran at t goes on: t when
// its ceilings were measured, else the nearest measured count below (else
// the smallest); the largest for a point without a count.
func plotOf(ts []int, t int) int {
	if len(ts) == 0 {
		return max(t, 1)
	}
	if t <= 0 {
		return ts[len(ts)-1]
	}
	return ts[roofline.NearestThreads(len(ts), func(i int) int { return ts[i] }, t)]
}

// PlotThreads is the thread count PlotRoofline draws: the largest plot
// one of the points goes on, else the largest with compute ceilings.
func PlotThreads(c *roofline.Ceilings, pts []roofline.Point) int {
	ts := RooflineThreads(c)
	t := 0
	for _, p := range pts {
		t = max(t, plotOf(ts, p.Threads))
	}
	if t == 0 && len(ts) > 0 {
		t = ts[len(ts)-1]
	}
	if t == 0 {
		t = c.MaxThreads()
	}
	return max(t, 1)
}

// PlotRoofline draws the roofline at PlotThreads with the points that go
// on it (see PlotRooflineAt). The format (png, svg, pdf, …) comes from
// path's extension; the file is written atomically.
func PlotRoofline(c *roofline.Ceilings, pts []roofline.Point, path string) error {
	return PlotRooflineAt(c, pts, PlotThreads(c, pts), path)
}

// PlotRooflineAt draws the roofline at threads threads: a horizontal line
// per compute ceiling, a slope per read-bandwidth level (DRAM solid black,
// each cache level in its own colour and dash), and the points that ran
// at that thread count (a point whose count has no ceilings goes on the
// nearest measured count below), coloured and shaped by op family,
// numbered, and ringed in red above OverRoof of their roof (Point.Roof).
// Below the plot a key names the families and every roof with its figure,
// and a table lists each number's point: op, variant, dtype, shape,
// intensity, achieved GFLOP/s and GB/s, and the fraction of its roof. No
// two labels overlap. The format (png, svg, pdf, …) comes from path's
// extension; the file is written atomically.
func PlotRooflineAt(c *roofline.Ceilings, pts []roofline.Point, threads int, path string) error {
	return writePlot(path, func(ext string) ([]byte, error) {
		f, err := layout(c, pointsAt(c, pts, threads), threads, figWidth, 0)
		if err != nil {
			return nil, err
		}
		return f.encode(ext)
	})
}

// layout lays out c's roofline at threads threads with the points pts
// (the caller picks those that belong on it) on a canvas w wide and h
// high (h ≤ 0: as high as the points table needs).
func layout(c *roofline.Ceilings, pts []roofline.Point, threads int, w, h vg.Length) (*figure, error) {
	ch, err := ceilingsChart(c, pts, threads)
	if err != nil {
		return nil, err
	}
	return ch.layout(w, h)
}

// ceilingsChart is the chart of c's roofline at threads threads with the
// points pts: its compute ceilings in grey, its read bandwidths by level
// (levelStyle), the points styled by op family and numbered.
func ceilingsChart(c *roofline.Ceilings, pts []roofline.Point, threads int) (*roofChart, error) {
	comp := c.ComputeAt(threads)
	if len(comp) == 0 {
		return nil, fmt.Errorf("roofline: no compute ceiling at %d threads", threads)
	}
	var m chartMachine
	for _, cc := range comp {
		m.lines = append(m.lines, chartLine{label: fmt.Sprintf("%s %s %s", cc.Name, fmtFig(cc.GFLOPS), cc.Unit()), value: cc.GFLOPS, style: computeStyle})
	}
	for i := len(roofline.Levels) - 1; i >= 0; i-- { // DRAM first: its label gets the first pick
		l := roofline.Levels[i]
		v := c.Bandwidth(l, threads)
		if !(v > 0) {
			continue
		}
		cl := chartLine{label: fmt.Sprintf("%s read %s GB/s", l, fmtFig(v)), value: v, slope: true, style: levelStyle(l)}
		if s := c.Sweep(roofline.KindRead, threads); s != nil && l != "DRAM" {
			for _, p := range s.Plateaus {
				if p.Level == l && p.CacheBytes > 0 {
					cl.key = cmp.Or(cl.key, cl.label) + " (" + roofline.HumanBytes(p.CacheBytes) + ")"
				}
			}
		}
		m.lines = append(m.lines, cl)
	}
	if len(m.lines) == len(comp) {
		return nil, fmt.Errorf("roofline: no read bandwidth at %d threads", threads)
	}
	s := "s"
	if threads == 1 {
		s = ""
	}
	ch := &roofChart{
		title:    fmt.Sprintf("Roofline, %d thread%s: %s (clock %.2f GHz)", threads, s, c.CPU, c.ClockGHz),
		machines: []chartMachine{m},
		styleKey: "Op families:",
		numbered: true,
		threads:  threads,
	}
	for i, fam := range roofline.Families {
		ch.styles = append(ch.styles, styleFor(i, fam))
	}
	for _, p := range pts {
		roof, _ := p.Roof(c)
		ch.points = append(ch.points, plotPoint{Point: p, ai: p.AI(), g: p.GFLOPS(), roof: roof, cell: p.RoofCell(c), fam: slices.Index(roofline.Families, p.Family())})
	}
	return ch, nil
}

// pointsAt picks the points that go on the plot at threads.
func pointsAt(c *roofline.Ceilings, pts []roofline.Point, threads int) []roofline.Point {
	ts := RooflineThreads(c)
	var out []roofline.Point
	for _, p := range pts {
		if plotOf(ts, p.Threads) == threads {
			out = append(out, p)
		}
	}
	return out
}

// PlotRooflines draws a roofline per thread count with ceilings
// (RooflineThreads) into dir, roofline-t<threads>.<ext> for each format
// in exts ("png", "svg", …), and copies the largest count's to
// roofline.<ext>. It returns the paths written: the roofline.<ext> files
// first, then the per-thread ones.
func PlotRooflines(c *roofline.Ceilings, pts []roofline.Point, dir string, exts ...string) ([]string, error) {
	ts := RooflineThreads(c)
	if len(ts) == 0 {
		return nil, fmt.Errorf("roofline: no compute ceiling to plot")
	}
	var main, per []string
	for i, t := range ts {
		f, err := layout(c, pointsAt(c, pts, t), t, figWidth, 0)
		if err != nil {
			return nil, err
		}
		for _, ext := range exts {
			b, err := f.encode(ext)
			if err != nil {
				return nil, err
			}
			p := filepath.Join(dir, fmt.Sprintf("roofline-t%d.%s", t, ext))
			if err := atomicfile.WriteBytes(p, b); err != nil {
				return nil, err
			}
			per = append(per, p)
			if i == len(ts)-1 {
				p = filepath.Join(dir, "roofline."+ext)
				if err := atomicfile.WriteBytes(p, b); err != nil {
					return nil, err
				}
				main = append(main, p)
			}
		}
	}
	return append(main, per...), nil
}

// PlotBandwidth draws every sweep (GB/s against working-set bytes, log x)
// with vertical markers at the detected cache sizes (L1d and L2 per core,
// and their totals over the largest thread count; L3 shared).
func PlotBandwidth(c *roofline.Ceilings, path string) error {
	if len(c.Sweeps) == 0 {
		return fmt.Errorf("roofline: no bandwidth sweep")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Bandwidth vs working set: %s", c.CPU)
	p.X.Label.Text = "working set (bytes, all arrays)"
	p.Y.Label.Text = "GB/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = byteTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	xmin, xmax, ymax := math.Inf(1), 0.0, 0.0
	for _, s := range c.Sweeps {
		var xy plotter.XYs
		for _, q := range s.Points {
			xy = append(xy, plotter.XY{X: float64(q.Bytes), Y: q.GBs})
			xmin, xmax, ymax = math.Min(xmin, float64(q.Bytes)), math.Max(xmax, float64(q.Bytes)), math.Max(ymax, q.GBs)
		}
		l, sc, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(max(0, slices.Index(roofline.Kinds, s.Kind)))
		sc.Color = l.Color
		sc.Radius = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(threadIndex(c.Threads, s.Threads))
		p.Add(l, sc)
		p.Legend.Add(fmt.Sprintf("%s, %d thr", s.Kind, s.Threads), l)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin/1.2, xmax*1.2, 0, ymax*1.1
	type marker struct {
		name string
		at   int64
	}
	var ms []marker
	T := int64(c.MaxThreads())
	if c.Cache.L1D > 0 {
		ms = append(ms, marker{"L1d " + roofline.HumanBytes(c.Cache.L1D), c.Cache.L1D})
		if T > 1 {
			ms = append(ms, marker{fmt.Sprintf("%d×L1d", T), T * c.Cache.L1D})
		}
	}
	if c.Cache.L2 > 0 {
		ms = append(ms, marker{"L2 " + roofline.HumanBytes(c.Cache.L2), c.Cache.L2})
		if T > 1 {
			ms = append(ms, marker{fmt.Sprintf("%d×L2", T), T * c.Cache.L2})
		}
	}
	if c.Cache.L3 > 0 {
		ms = append(ms, marker{"L3 " + roofline.HumanBytes(c.Cache.L3), c.Cache.L3})
	}
	var lx plotter.XYs
	var ll []string
	for i, m := range ms {
		x := float64(m.at)
		if x < p.X.Min || x > p.X.Max {
			continue
		}
		if err := addLine(p, plotter.XYs{{X: x, Y: 0}, {X: x, Y: p.Y.Max}}, color.Gray{Y: 110}, []vg.Length{vg.Points(2), vg.Points(2)}); err != nil {
			return err
		}
		lx = append(lx, plotter.XY{X: x * 1.05, Y: p.Y.Max * (0.97 - 0.04*float64(i%4))})
		ll = append(ll, m.name)
	}
	if err := addLabels(p, lx, ll, 8, false); err != nil {
		return err
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin/1.2, xmax*1.2, 0, ymax*1.1
	return writePlot(path, func(ext string) ([]byte, error) {
		wt, err := p.WriterTo(11*vg.Inch, 7*vg.Inch, ext)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		_, err = wt.WriteTo(&buf)
		return buf.Bytes(), err
	})
}

func threadIndex(ts []int, t int) int {
	for i, x := range ts {
		if x == t {
			return i
		}
	}
	return 0
}

func addLine(p *plot.Plot, xy plotter.XYs, c color.Color, dashes []vg.Length) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.5), dashes
	p.Add(l)
	return nil
}

func addLabels(p *plot.Plot, xy plotter.XYs, labels []string, size float64, rightAlign bool) error {
	if len(xy) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: labels})
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(size)
		if rightAlign {
			l.TextStyle[i].XAlign = draw.XRight
		}
	}
	l.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
	if rightAlign {
		l.Offset.X = 0
	}
	p.Add(l)
	return nil
}

// byteTicks labels a log axis in binary units at powers of 4.
type byteTicks struct{}

func (byteTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := 10; e <= 42; e += 2 {
		v := math.Ldexp(1, e)
		if v < lo || v > hi {
			continue
		}
		ts = append(ts, plot.Tick{Value: v, Label: shortBytes(int64(v))})
	}
	return ts
}

func shortBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%dG", b>>30)
	case b >= 1<<20:
		return fmt.Sprintf("%dM", b>>20)
	default:
		return fmt.Sprintf("%dK", b>>10)
	}
}

// writePlot writes what render gives for the format path's extension
// names (png, svg, pdf, …), atomically.
func writePlot(path string, render func(ext string) ([]byte, error)) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		return fmt.Errorf("roofline: %s: no extension to choose a format", path)
	}
	b, err := render(ext)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, b)
}
