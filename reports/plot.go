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

	"github.com/ktune/ktune/roofline"
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
	return svgElement(buf.Bytes())
}

// svgElement is an SVG document's <svg> element, without the prolog.
func svgElement(b []byte) (template.HTML, error) {
	s := string(b)
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

// RooflineFigure overlays several machines' rooflines on one log–log
// chart (arithmetic intensity against GFLOP/s), drawn as ktune's
// per-machine plots are (rooflayout.go): each machine gets a colour, its
// roof (the highest compute ceiling and the highest bandwidth) as solid
// lines, lower ceilings dashed, every ceiling labelled with its value, and
// its kernels as marks of its colour and shape, labelled beside them (no
// two labels overlap). A key below the plot names each machine's ceilings
// and kernels. Machines without ceilings are left out; it is an error when
// none has one.
func RooflineFigure(caption, title string, machines []Roofline) (Figure, error) {
	ch, err := machinesChart(title, machines)
	if err != nil {
		return Figure{}, err
	}
	f, err := ch.layout(FigureWidth, 0)
	if err != nil {
		return Figure{}, fmt.Errorf("roofline %q: %w", title, err)
	}
	svg, err := f.svg()
	return Figure{Caption: caption, SVG: svg}, err
}

// machinesChart is the chart RooflineFigure draws.
func machinesChart(title string, machines []Roofline) (*roofChart, error) {
	if len(machines) == 0 {
		return nil, fmt.Errorf("roofline %q: no machines", title)
	}
	ch := &roofChart{title: title, styleKey: "Kernels:", plotH: FigureWidth * 3 / 4}
	for i, m := range machines {
		st := styleFor(i, m.Machine+" kernels")
		ch.styles = append(ch.styles, st)
		cm := chartMachine{name: m.Machine}
		add := func(cs []Ceiling, slope bool, unit string) {
			top := 0.0
			for _, c := range cs {
				top = max(top, c.Value)
			}
			for _, c := range cs {
				if !(c.Value > 0) {
					continue
				}
				style := draw.LineStyle{Color: st.color, Width: vg.Points(2)}
				if c.Value < top {
					style.Width, style.Dashes = vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
				}
				cm.lines = append(cm.lines, chartLine{label: c.Name + " " + fmtFig(c.Value) + unit, value: c.Value, slope: slope, style: style})
			}
		}
		add(m.Compute, false, "")
		add(m.Bandwidth, true, " GB/s")
		if len(cm.lines) == 0 {
			continue
		}
		ch.machines = append(ch.machines, cm)
		for _, pt := range m.Points {
			ch.points = append(ch.points, plotPoint{Point: roofline.Point{Label: pt.Label}, ai: pt.Intensity, g: pt.Perf, fam: i})
		}
	}
	if len(ch.machines) == 0 {
		return nil, fmt.Errorf("roofline %q: no positive ceilings", title)
	}
	return ch, nil
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
