package roofline

// Plots: the log–log roofline with every ceiling and the kernel points,
// and bandwidth against working set with the detected cache sizes.

import (
	"bytes"
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
)

// PlotThreads is the thread count the roofline plot draws ceilings for:
// the points' largest, else the largest measured.
func PlotThreads(c *Ceilings, pts []Point) int {
	t := 0
	for _, p := range pts {
		t = max(t, p.Threads)
	}
	if t == 0 {
		t = c.MaxThreads()
	}
	return max(t, 1)
}

// PlotRoofline draws the roofline at PlotThreads: a horizontal line per
// compute ceiling, a slope per read-bandwidth level, each labelled with
// its figure, and every point labelled. The format (png, svg, pdf, …)
// comes from path's extension; the file is written atomically.
func PlotRoofline(c *Ceilings, pts []Point, path string) error {
	T := PlotThreads(c, pts)
	comp := c.ComputeAt(T)
	if len(comp) == 0 {
		return fmt.Errorf("roofline: no compute ceiling at %d threads", T)
	}
	type slope struct {
		name string
		gbs  float64
	}
	var bws []slope
	for _, l := range Levels {
		if v := c.Bandwidth(l, T); v > 0 {
			bws = append(bws, slope{l, v})
		}
	}
	if len(bws) == 0 {
		return fmt.Errorf("roofline: no read bandwidth at %d threads", T)
	}
	top := comp[0].GFLOPS
	low := comp[len(comp)-1].GFLOPS
	maxBW, minBW := bws[0].gbs, bws[0].gbs
	for _, b := range bws {
		maxBW, minBW = math.Max(maxBW, b.gbs), math.Min(minBW, b.gbs)
	}
	xmin, xmax := 1.0/64, 4*top/minBW
	ymin, ymax := math.Min(low, xmin*minBW)/2, 2*top
	for _, p := range pts {
		if ai, g := p.AI(), p.GFLOPS(); ai > 0 && g > 0 {
			xmin, xmax = math.Min(xmin, ai/2), math.Max(xmax, ai*4)
			ymin = math.Min(ymin, g/2)
		}
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("Roofline, %d thread(s): %s (clock %.2f GHz)", T, c.CPU, c.ClockGHz)
	p.X.Label.Text = "arithmetic intensity (FLOP or OP per byte)"
	p.Y.Label.Text = "GFLOP/s (GOP/s for int8)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Add(plotter.NewGrid())

	var lx plotter.XYs
	var ll []string
	for i, cc := range comp {
		x0 := math.Max(xmin, cc.GFLOPS/maxBW)
		if err := addLine(p, plotter.XYs{{X: x0, Y: cc.GFLOPS}, {X: xmax, Y: cc.GFLOPS}}, plotutil.Color(i), nil); err != nil {
			return err
		}
		lx = append(lx, plotter.XY{X: xmax / 1.5, Y: cc.GFLOPS * 1.05})
		ll = append(ll, fmt.Sprintf("%s %.0f %s", cc.Name, cc.GFLOPS, cc.Unit()))
	}
	for i, b := range bws {
		x1 := math.Min(xmax, top/b.gbs)
		if err := addLine(p, plotter.XYs{{X: xmin, Y: xmin * b.gbs}, {X: x1, Y: x1 * b.gbs}}, color.Gray{Y: uint8(40 + 40*i)}, []vg.Length{vg.Points(4), vg.Points(2)}); err != nil {
			return err
		}
		// stagger the labels along the slopes: level i at x = 1.5·xmin·3^i
		x := 1.5 * xmin * math.Pow(3, float64(i))
		lx = append(lx, plotter.XY{X: x * 1.1, Y: x * b.gbs})
		ll = append(ll, fmt.Sprintf("%s read %.0f GB/s", b.name, b.gbs))
	}
	if err := addLabels(p, lx, ll, 8, true); err != nil {
		return err
	}

	var px plotter.XYs
	var pl []string
	for _, pt := range pts {
		if ai, g := pt.AI(), pt.GFLOPS(); ai > 0 && g > 0 {
			px = append(px, plotter.XY{X: ai, Y: g})
			pl = append(pl, fmt.Sprintf("%s (%s) %.3g", pt.Label, pt.Variant, g))
		}
	}
	if len(px) > 0 {
		sc, err := plotter.NewScatter(px)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Radius = vg.Points(3.5)
		sc.GlyphStyle.Color = color.RGBA{R: 200, A: 255}
		p.Add(sc)
		if err := addLabels(p, px, pl, 8, false); err != nil {
			return err
		}
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	return save(p, 11*vg.Inch, 7.5*vg.Inch, path)
}

// PlotBandwidth draws every sweep (GB/s against working-set bytes, log x)
// with vertical markers at the detected cache sizes (L1d and L2 per core,
// and their totals over the largest thread count; L3 shared).
func PlotBandwidth(c *Ceilings, path string) error {
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
		l.Color = plotutil.Color(max(0, slices.Index(Kinds, s.Kind)))
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
		ms = append(ms, marker{"L1d " + humanBytes(c.Cache.L1D), c.Cache.L1D})
		if T > 1 {
			ms = append(ms, marker{fmt.Sprintf("%d×L1d", T), T * c.Cache.L1D})
		}
	}
	if c.Cache.L2 > 0 {
		ms = append(ms, marker{"L2 " + humanBytes(c.Cache.L2), c.Cache.L2})
		if T > 1 {
			ms = append(ms, marker{fmt.Sprintf("%d×L2", T), T * c.Cache.L2})
		}
	}
	if c.Cache.L3 > 0 {
		ms = append(ms, marker{"L3 " + humanBytes(c.Cache.L3), c.Cache.L3})
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
	return save(p, 11*vg.Inch, 7*vg.Inch, path)
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

func save(p *plot.Plot, w, h vg.Length, path string) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		return fmt.Errorf("roofline: %s: no extension to choose a format", path)
	}
	wt, err := p.WriterTo(w, h, ext)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}
