package reports

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ktune/ktune/internal/atomicfile"
)

// ServeSeries is one server's figures per concurrency level (kprofile
// serve-bench), for ServePlots.
type ServeSeries struct {
	Name         string
	Clients      []int     // concurrency levels, ascending
	AggTokPerSec []float64 // aggregate output tokens/s per level; NaN: no point
	TTFTP99      []float64 // time to first token, p99, ms per level; NaN: no point
}

// ServePlots draws a server benchmark against the number of concurrent
// clients (a log₂ axis ticked at the levels): the aggregate output
// tokens/s, and the p99 time to first token; a line per server, broken
// where a level has no figure (NaN).
func ServePlots(title string, series []ServeSeries) (agg, ttft *plot.Plot, err error) {
	if len(series) == 0 {
		return nil, nil, fmt.Errorf("serve plot: no servers")
	}
	var levels []int
	for _, s := range series {
		if len(s.AggTokPerSec) != len(s.Clients) || len(s.TTFTP99) != len(s.Clients) {
			return nil, nil, fmt.Errorf("serve plot: %s has %d levels but %d and %d figures", s.Name, len(s.Clients), len(s.AggTokPerSec), len(s.TTFTP99))
		}
		for _, c := range s.Clients {
			if c < 1 {
				return nil, nil, fmt.Errorf("serve plot: %s: %d clients", s.Name, c)
			}
		}
		levels = append(levels, s.Clients...)
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	if len(levels) == 0 {
		return nil, nil, fmt.Errorf("serve plot: no levels")
	}
	panel := func(ptitle, ylabel string, values func(ServeSeries) []float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = ptitle
		p.X.Label.Text = "concurrent clients"
		p.Y.Label.Text = ylabel
		p.X.Scale = plot.LogScale{}
		var ticks plot.ConstantTicks
		for _, c := range levels {
			ticks = append(ticks, plot.Tick{Value: float64(c), Label: strconv.Itoa(c)})
		}
		p.X.Tick.Marker = ticks
		p.X.Min, p.X.Max = float64(levels[0])/1.25, float64(levels[len(levels)-1])*1.25
		p.Legend.Top, p.Legend.Left = true, true
		p.Add(plotter.NewGrid())
		top := 0.0
		for i, s := range series {
			// a level without a figure breaks the line there
			var runs []plotter.XYs
			var run plotter.XYs
			for j, v := range values(s) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					if len(run) > 0 {
						runs, run = append(runs, run), nil
					}
					continue
				}
				run = append(run, plotter.XY{X: float64(s.Clients[j]), Y: v})
				top = math.Max(top, v)
			}
			if len(run) > 0 {
				runs = append(runs, run)
			}
			for k, xys := range runs {
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, fmt.Errorf("serve plot %q, %s: %w", ptitle, s.Name, err)
				}
				l.LineStyle.Color, l.LineStyle.Width = plotutil.Color(i), vg.Points(2)
				pts.GlyphStyle.Color, pts.GlyphStyle.Shape, pts.GlyphStyle.Radius = plotutil.Color(i), plotutil.Shape(i), vg.Points(3)
				p.Add(l, pts)
				if k == 0 {
					p.Legend.Add(s.Name, l, pts)
				}
			}
		}
		p.Y.Min, p.Y.Max = 0, 1.15*top // headroom for the legend
		if top == 0 {
			p.Y.Max = 1
		}
		return p, nil
	}
	prefix := ""
	if title != "" {
		prefix = title + ": "
	}
	if agg, err = panel(prefix+"aggregate output throughput", "output tokens/s", func(s ServeSeries) []float64 { return s.AggTokPerSec }); err != nil {
		return nil, nil, err
	}
	if ttft, err = panel(prefix+"time to first token, p99", "TTFT p99 (ms)", func(s ServeSeries) []float64 { return s.TTFTP99 }); err != nil {
		return nil, nil, err
	}
	return agg, ttft, nil
}

// servePNGDPI is the resolution of PNG figures.
const servePNGDPI = 144

// WriteServePlot writes ServePlots as one figure, throughput above TTFT,
// to path in the format its extension names (svg, png, pdf, eps, jpg,
// tiff), atomically.
func WriteServePlot(path, title string, series []ServeSeries) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		return fmt.Errorf("serve plot: %s: no extension to choose a format (.svg, .png)", path)
	}
	agg, ttft, err := ServePlots(title, series)
	if err != nil {
		return err
	}
	w, h := FigureWidth, 2*FigureHeight
	var cw vg.CanvasWriterTo
	if ext == "png" {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(servePNGDPI))}
	} else if cw, err = draw.NewFormattedCanvas(w, h, ext); err != nil {
		return fmt.Errorf("serve plot: %s: %w", path, err)
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	plots := [][]*plot.Plot{{agg}, {ttft}}
	canvases := plot.Align(plots, tiles, draw.New(cw))
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return fmt.Errorf("serve plot: %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}
