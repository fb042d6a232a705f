package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Default figure size: about 850×480 CSS pixels.
const (
	FigureWidth  = 640 * vg.Inch / 72
	FigureHeight = 360 * vg.Inch / 72
)

// SVG renders a plot as an inline <svg> element (no XML prolog), ready to
// embed in an HTML page. Fonts are not embedded: the text falls back to the
// browser's serif/sans fonts where Liberation is not installed.
func SVG(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("rendering SVG: %w", err)
	}
	s := buf.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("rendering SVG: no <svg> element in the output")
	}
	return template.HTML(s[i:]), nil
}

// Series is one bar per category, e.g. one machine's figures.
type Series struct {
	Name   string
	Values []float64 // aligned with the chart's categories; NaN (or ≤ 0) draws no bar
}

// BarChart draws grouped bars: one group per category (an op's shapes or
// thread counts), one bar per series (machine) in a group, with a legend.
func BarChart(title, ylabel string, categories []string, series []Series) (*plot.Plot, error) {
	if len(categories) == 0 || len(series) == 0 {
		return nil, fmt.Errorf("bar chart %q: no data", title)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	// bars share ~80% of each category's slot of the plot's width
	slot := 0.8 * 0.85 * float64(FigureWidth) / float64(len(categories))
	width := vg.Length(math.Min(24, slot/float64(len(series))))
	top := 0.0
	for i, s := range series {
		if len(s.Values) != len(categories) {
			return nil, fmt.Errorf("bar chart %q: series %q has %d values for %d categories", title, s.Name, len(s.Values), len(categories))
		}
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 {
				vals[j] = v
				top = math.Max(top, v)
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("bar chart %q: %w", title, err)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * width
		p.Add(b)
		p.Legend.Add(s.Name, b)
	}
	p.Y.Max = 1.12 * top // headroom for the legend
	p.Add(plotter.NewGrid())
	p.NominalX(categories...)
	for _, c := range categories {
		if len(c) > 12 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
			break
		}
	}
	return p, nil
}

// Ceiling is a named roof: a compute peak in GFLOP/s (or GOP/s), or a
// bandwidth in GB/s.
type Ceiling struct {
	Name  string
	Value float64
}

// RooflinePoint is a measured kernel on a roofline plot.
type RooflinePoint struct {
	Label     string
	Intensity float64 // FLOP per byte moved
	Perf      float64 // GFLOP/s achieved
}

// Roofline is one machine's roofline in plain numbers, independent of the
// profile schema.
type Roofline struct {
	Machine   string
	Compute   []Ceiling // GFLOP/s
	Bandwidth []Ceiling // GB/s
	Points    []RooflinePoint
}

func maxCeiling(cs []Ceiling) float64 {
	m := math.NaN()
	for _, c := range cs {
		if c.Value > 0 && !(m >= c.Value) {
			m = c.Value
		}
	}
	return m
}

// RooflinePlot overlays several machines' rooflines on log-log axes
// (arithmetic intensity in FLOP/byte against GFLOP/s). Each machine gets
// a colour: its roof (the highest compute ceiling and the highest
// bandwidth) as a solid line, lower ceilings dashed, every ceiling
// labelled with its value, and its kernels as labelled points.
func RooflinePlot(title string, machines []Roofline) (*plot.Plot, error) {
	if len(machines) == 0 {
		return nil, fmt.Errorf("roofline %q: no machines", title)
	}
	// x range: around every ridge point and every measured point
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, m := range machines {
		peak, bw := maxCeiling(m.Compute), maxCeiling(m.Bandwidth)
		if ridge := peak / bw; ridge > 0 {
			xmin, xmax = math.Min(xmin, ridge/64), math.Max(xmax, ridge*16)
		}
		for _, pt := range m.Points {
			if pt.Intensity > 0 && pt.Perf > 0 {
				xmin, xmax = math.Min(xmin, pt.Intensity/2), math.Max(xmax, pt.Intensity*2)
			}
		}
	}
	if math.IsInf(xmin, 0) {
		return nil, fmt.Errorf("roofline %q: no positive ceilings or points", title)
	}

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "arithmetic intensity (FLOP/byte)"
	p.Y.Label.Text = "GFLOP/s"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())

	for i, m := range machines {
		col := plotutil.Color(i)
		var labels plotter.XYLabels // in the machine's colour
		peak, bw := maxCeiling(m.Compute), maxCeiling(m.Bandwidth)
		roof := func(x, peak, bw float64) float64 {
			y := math.Inf(1)
			if peak > 0 {
				y = peak
			}
			if bw > 0 {
				y = math.Min(y, bw*x)
			}
			return y
		}
		line := func(peak, bw float64, dashed bool) (*plotter.Line, error) {
			xs := []float64{xmin}
			if peak > 0 && bw > 0 {
				if r := peak / bw; r > xmin && r < xmax {
					xs = append(xs, r)
				}
			}
			xs = append(xs, xmax)
			var xys plotter.XYs
			for _, x := range xs {
				xys = append(xys, plotter.XY{X: x, Y: roof(x, peak, bw)})
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.LineStyle.Color = col
			l.LineStyle.Width = vg.Points(2)
			if dashed {
				l.LineStyle.Width = vg.Points(1)
				l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			return l, nil
		}
		if !(peak > 0) && !(bw > 0) {
			continue
		}
		l, err := line(peak, bw, false)
		if err != nil {
			return nil, fmt.Errorf("roofline %q, %s: %w", title, m.Machine, err)
		}
		p.Add(l)
		p.Legend.Add(m.Machine, l)
		for _, c := range m.Compute {
			if c.Value > 0 && c.Value <= peak {
				if c.Value < peak {
					l, err := line(c.Value, bw, true)
					if err != nil {
						return nil, err
					}
					p.Add(l)
				}
				labels.XYs = append(labels.XYs, plotter.XY{X: xmax / 32, Y: c.Value})
				labels.Labels = append(labels.Labels, fmt.Sprintf("%s %.4g", c.Name, c.Value))
			}
		}
		for _, c := range m.Bandwidth {
			if c.Value > 0 && c.Value <= bw {
				if c.Value < bw {
					l, err := line(peak, c.Value, true)
					if err != nil {
						return nil, err
					}
					p.Add(l)
				}
				labels.XYs = append(labels.XYs, plotter.XY{X: xmin * 2, Y: c.Value * xmin * 2})
				labels.Labels = append(labels.Labels, fmt.Sprintf("%s %.4g GB/s", c.Name, c.Value))
			}
		}
		var pts plotter.XYs
		for _, pt := range m.Points {
			if pt.Intensity > 0 && pt.Perf > 0 {
				pts = append(pts, plotter.XY{X: pt.Intensity, Y: pt.Perf})
				labels.XYs = append(labels.XYs, plotter.XY{X: pt.Intensity, Y: pt.Perf})
				labels.Labels = append(labels.Labels, pt.Label)
			}
		}
		if len(pts) > 0 {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle.Color = col
			s.GlyphStyle.Shape = plotutil.Shape(i)
			s.GlyphStyle.Radius = vg.Points(3.5)
			p.Add(s)
			p.Legend.Add(m.Machine+" kernels", s)
		}
		if len(labels.XYs) > 0 {
			lb, err := plotter.NewLabels(labels)
			if err != nil {
				return nil, err
			}
			for j := range lb.TextStyle {
				lb.TextStyle[j].Font.Size = vg.Points(8)
				lb.TextStyle[j].Color = col
			}
			lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
			p.Add(lb)
		}
	}
	return p, nil
}

// BarFigure renders BarChart as a Figure of the default size.
func BarFigure(caption, title, ylabel string, categories []string, series []Series) (Figure, error) {
	p, err := BarChart(title, ylabel, categories, series)
	if err != nil {
		return Figure{}, err
	}
	svg, err := SVG(p, FigureWidth, FigureHeight)
	return Figure{Caption: caption, SVG: svg}, err
}

// RooflineFigure renders RooflinePlot as a Figure, taller than the default.
func RooflineFigure(caption, title string, machines []Roofline) (Figure, error) {
	p, err := RooflinePlot(title, machines)
	if err != nil {
		return Figure{}, err
	}
	svg, err := SVG(p, FigureWidth, FigureWidth*3/4)
	return Figure{Caption: caption, SVG: svg}, err
}
