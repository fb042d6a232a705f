package kprofile

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/internal/version"
	"github.com/ktune/ktune/reports"
)

// CompareOptions are the arguments of kprofile compare.
type CompareOptions struct {
	Profiles []string
	Format   string // text or md
	HTML     string // path of the HTML report ("" none)
}

// NewCmdCompare builds `kprofile compare A.json B.json [...]`.
func NewCmdCompare(f *cli.Factory, runF func(*CompareOptions) error) *cobra.Command {
	o := &CompareOptions{}
	cmd := &cobra.Command{
		Use:   "compare A.json B.json [...]",
		Short: "Compare tuning profiles of several machines side by side",
		Long: cli.Doc(`
			compare lines up tuning profiles of two or more machines (or of one
			machine under different ISA masks) per op, dtype, shape and thread
			budget: each machine's chosen variant and parameters, the achieved
			GFLOP/s or GB/s, its share of that machine's own roof, and the
			ratio of each machine's figure to the first one's. The last row is
			the geometric mean over the rows every machine has.

			The machines are lettered A, B, ... in the table; the legend above
			it names them. --html also writes a self-contained HTML report
			(no scripts, no external resources): the tables, all machines'
			rooflines overlaid with their tuned kernels as points (at each
			machine's largest thread budget), and a bar chart per op.

			Figures are the tuner's medians; they drift 10-20% between runs on
			a shared machine, so read ratios near 1 as equal.

			Each profile is checked as the engine checks it (see kprofile show
			--help): each bad entry gets a warning on stderr, and is compared
			as written.

			Exit status: 0 compared (warnings or not); 2 a usage or input error
			(a bad flag or argument, an unreadable or corrupt profile, an --html
			path that cannot be written), with one error line; 1 any other
			failure.
		`),
		Example: cli.Doc(`
			$ kprofile compare zen4.json spr.json
			$ kprofile compare -o md --html compare.html a.json b.json c.json
		`),
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Profiles = args
			if err := checkFormat(o.Format); err != nil {
				return err
			}
			if err := checkOutput("--html", o.HTML, args...); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runCompare(f, o)
		},
	}
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "table format: text or md")
	cmd.Flags().StringVar(&o.HTML, "html", "", "also write a self-contained HTML report with rooflines and bar charts to this file")
	return cmd
}

// comparison is the profiles lined up by row key.
type comparison struct {
	ms    []*machine
	keys  []string
	cells map[string][]*profile.Entry // key -> per machine (nil: missing)
	unit  map[string]string
}

func compareMachines(ms []*machine) *comparison {
	c := &comparison{ms: ms, cells: map[string][]*profile.Entry{}, unit: map[string]string{}}
	for j, m := range ms {
		for _, r := range reports.ChoiceRows(m.P) {
			es, ok := c.cells[r.Key]
			if !ok {
				es = make([]*profile.Entry, len(ms))
				c.cells[r.Key] = es
				c.keys = append(c.keys, r.Key)
				_, c.unit[r.Key] = reports.Rate(r.E)
			}
			es[j] = r.E
		}
	}
	return c
}

// value is machine j's figure at key in the row's unit (NaN: missing).
func (c *comparison) value(key string, j int) float64 {
	e := c.cells[key][j]
	if e == nil || !(e.Best.Median > 0) {
		return math.NaN()
	}
	if c.unit[key] == "GB/s" {
		return e.Best.GBs()
	}
	return e.Best.GFLOPs()
}

func (c *comparison) first(key string) *profile.Entry {
	for _, e := range c.cells[key] {
		if e != nil {
			return e
		}
	}
	return nil
}

func letter(j int) string {
	if j < 26 {
		return string(rune('A' + j))
	}
	return fmt.Sprintf("M%d", j+1)
}

// table lays the comparison out: key columns, per machine its choice,
// figure and % of roof, then each machine's ratio to the first, and a
// geomean row (figures and ratios via reports.SideBySide; % of roof over
// the same complete rows).
func (c *comparison) table(names []string) (header []string, out [][]string, err error) {
	keyHeader := []string{"op", "dtype", "shape", "threads", "unit"}
	var keys [][]string
	var values [][]float64
	for _, k := range c.keys {
		e := c.first(k)
		keys = append(keys, []string{e.Op, string(e.DType), reports.ShapeCell(e), fmt.Sprint(e.Threads), c.unit[k]})
		vs := make([]float64, len(c.ms))
		for j := range c.ms {
			vs[j] = c.value(k, j)
		}
		values = append(values, vs)
	}
	sbsHeader, sbs, err := reports.SideBySide(keyHeader, names, keys, values, reports.FormatRate)
	if err != nil {
		return nil, nil, err
	}
	K, M := len(keyHeader), len(names)
	header = append([]string(nil), keyHeader...)
	for j, n := range names {
		header = append(header, n+" chosen", sbsHeader[K+j], n+" % roof")
	}
	header = append(header, sbsHeader[K+M:]...)
	pcts := make([][]float64, M) // complete rows only
	for i, r := range sbs {
		line := append([]string(nil), r[:K]...)
		isGeo := i == len(c.keys)
		for j := range names {
			ch, pct := "", ""
			if !isGeo {
				if e := c.cells[c.keys[i]][j]; e != nil {
					ch, pct = reports.ChoiceCell(e), reports.RoofCellOrDash(c.ms[j].C, e)
				} else {
					ch, pct = "—", "—"
				}
			}
			line = append(line, ch, r[K+j], pct)
		}
		line = append(line, r[K+M:]...)
		if !isGeo {
			complete := true
			fr := make([]float64, M)
			for j := range names {
				e := c.cells[c.keys[i]][j]
				if e == nil {
					complete = false
					continue
				}
				fr[j] = roofFraction(c.ms[j].C, e)
				complete = complete && fr[j] > 0
			}
			if complete {
				for j := range names {
					pcts[j] = append(pcts[j], fr[j])
				}
			}
		} else {
			for j := range names {
				if g := reports.Geomean(pcts[j]); !math.IsNaN(g) {
					line[K+3*j+2] = fmtPct(g)
				}
			}
		}
		out = append(out, line)
	}
	return header, out, nil
}

func runCompare(f *cli.Factory, o *CompareOptions) error {
	ms, err := readMachines(o.Profiles)
	if err != nil {
		return err
	}
	for _, m := range ms {
		for _, w := range m.Warnings {
			fmt.Fprintf(f.Err, "warning: %s\n", w)
		}
		if len(m.P.Noisy) > 0 {
			fmt.Fprintf(f.Err, "warning: %s was measured on a noisy machine (%s): its figures are suspect\n", m.Path, strings.Join(m.P.Noisy, "; "))
		}
	}
	c := compareMachines(ms)
	letters := make([]string, len(ms))
	for j := range ms {
		letters[j] = letter(j)
	}
	w := f.Out
	md := o.Format == "md" || o.Format == "markdown"
	for j, m := range ms {
		roofNote := "no ceilings: % of roof not shown"
		if m.C != nil {
			roofNote = "ceilings from " + m.CeilFrom
		}
		line := fmt.Sprintf("%s = %s: %s, fingerprint %s, ktune %s, %s; %s", letters[j], m.Path, m.Name, m.P.Fingerprint, m.P.KtuneVersion, m.P.Created.Format("2006-01-02"), roofNote)
		if e := m.P.EndToEnd; e != nil {
			line += "; " + e.Gain()
		}
		if md {
			line = "- " + line
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	header, tab, err := c.table(letters)
	if err != nil {
		return err
	}
	if err := cli.Table(w, o.Format, header, tab); err != nil {
		return err
	}
	if o.HTML != "" {
		var buf bytes.Buffer
		rep, err := c.report(o.Profiles)
		if err != nil {
			return err
		}
		if err := reports.HTML(&buf, rep); err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(o.HTML, buf.Bytes()); err != nil {
			return &cli.UsageError{Err: fmt.Errorf("--html %s: %w", o.HTML, err)}
		}
		fmt.Fprintf(w, "\nwrote %s\n", o.HTML)
	}
	return nil
}

// report builds the HTML report: machines, the comparison table, the
// overlaid rooflines and one bar chart per op, dtype and unit.
func (c *comparison) report(paths []string) (*reports.Report, error) {
	names := make([]string, len(c.ms))
	for j, m := range c.ms {
		names[j] = m.Name
	}
	var mrows [][]string
	for j, m := range c.ms {
		p := m.P
		roofNote := "—"
		if m.C != nil {
			roofNote = fmt.Sprintf("%s (clock %.2f GHz)", m.CeilFrom, m.C.ClockGHz)
		}
		mask := p.CPU.Mask
		if mask == "" {
			mask = "none"
		}
		mrows = append(mrows, []string{letter(j), m.Name, p.Fingerprint, mask, fmt.Sprintf("%d/%d", p.CPU.PhysicalCores, p.CPU.LogicalCores),
			p.KtuneVersion, p.Created.Format("2006-01-02 15:04"), roofNote})
	}
	letters := make([]string, len(c.ms))
	for j := range c.ms {
		letters[j] = letter(j)
	}
	header, tab, err := c.table(letters)
	if err != nil {
		return nil, err
	}
	rep := &reports.Report{
		Title:    "ktune profiles: " + strings.Join(names, " vs "),
		Subtitle: fmt.Sprintf("%d machines, %d op/shape/thread rows; ratios are to %s.", len(c.ms), len(c.keys), names[0]),
		Sections: []reports.Section{
			{Heading: "Machines", Tables: []reports.Table{{
				Header: []string{"", "machine", "fingerprint", "ISA mask", "cores (phys/logical)", "ktune", "tuned", "ceilings"}, Rows: mrows}}},
			{Heading: "Side by side",
				Paragraphs: []string{"Per op, dtype, shape and thread budget: each machine's chosen variant and parameters, the achieved figure (the tuner's median), its share of that machine's own roof at the kernel's arithmetic intensity, and the ratio to machine A. The geomean row covers the rows every machine has."},
				Tables:     []reports.Table{{Header: header, Rows: tab}}},
		},
		Footer: fmt.Sprintf("kprofile compare (ktune %s, %s) of %s", version.String(), version.Go(), strings.Join(paths, ", ")),
	}
	roofs := reports.Section{Heading: "Rooflines", Paragraphs: []string{"No machine has ceilings (ktune roofline --out DIR writes ceilings.json beside the profile)."}}
	var rls []reports.Roofline
	for _, m := range c.ms {
		if rl, ok := c.roofline(m, m == c.ms[0]); ok {
			rls = append(rls, rl)
		}
	}
	if len(rls) > 0 {
		fig, err := reports.RooflineFigure("Each machine's roof (f32 FMA peak, int8/bf16 dot-product peaks dashed where lower, DRAM read bandwidth) at its largest thread budget, with its tuned kernels at that budget; kernels labelled for machine A.", "Rooflines", rls)
		if err != nil {
			return nil, err
		}
		roofs = reports.Section{Heading: "Rooflines", Figures: []reports.Figure{fig}}
	}
	// the rooflines first (the picture), then the table
	rep.Sections = []reports.Section{rep.Sections[0], roofs, rep.Sections[1]}
	bars := reports.Section{Heading: "Per op", Paragraphs: []string{"Achieved figure per shape and thread budget, one bar per machine."}}
	type group struct{ op, dt, unit string }
	var order []group
	cats := map[group][]string{}
	vals := map[group][][]float64{}
	for _, k := range c.keys {
		e := c.first(k)
		g := group{e.Op, string(e.DType), c.unit[k]}
		if _, ok := cats[g]; !ok {
			order = append(order, g)
		}
		cat := e.ShapeClass
		if cat == "" {
			cat = e.Shape.String()
		}
		if e.Label != "" && e.Label != strings.SplitN(e.Op, ".", 2)[0] {
			cat += " " + strings.TrimPrefix(e.Label, strings.SplitN(e.Op, ".", 2)[0]+".")
		}
		cats[g] = append(cats[g], fmt.Sprintf("%s t=%d", cat, e.Threads))
		vs := make([]float64, len(c.ms))
		for j := range c.ms {
			vs[j] = c.value(k, j)
		}
		vals[g] = append(vals[g], vs)
	}
	for _, g := range order {
		series := make([]reports.Series, len(c.ms))
		for j := range c.ms {
			series[j].Name = names[j]
			for _, vs := range vals[g] {
				series[j].Values = append(series[j].Values, vs[j])
			}
		}
		title := fmt.Sprintf("%s %s", g.op, g.dt)
		fig, err := reports.BarFigure(fmt.Sprintf("%s, %s of the tuned choice per shape and thread budget.", title, g.unit), title, g.unit, cats[g], series)
		if err != nil {
			return nil, err
		}
		bars.Figures = append(bars.Figures, fig)
	}
	rep.Sections = append(rep.Sections, bars)
	return rep, nil
}

// roofline is machine m's roofline at its largest thread budget: the best
// compute ceiling of each data type, DRAM read bandwidth, and the tuned
// kernels at that budget (labelled when label is set).
func (c *comparison) roofline(m *machine, label bool) (reports.Roofline, bool) {
	if m.C == nil {
		return reports.Roofline{}, false
	}
	t := 0
	for _, e := range m.P.Entries {
		t = max(t, e.Threads)
	}
	t = max(t, 1)
	rl := reports.Roofline{Machine: m.Name}
	for _, dt := range []string{"f32", "int8", "bf16"} {
		v := m.C.PeakFLOPs(dt, t)
		if !(v > 0) {
			continue
		}
		name := dt
		for _, cc := range m.C.ComputeAt(m.C.MaxThreads()) {
			if cc.DType == dt {
				name = cc.Name
				break
			}
		}
		rl.Compute = append(rl.Compute, reports.Ceiling{Name: name, Value: v})
	}
	if bw := m.C.Bandwidth("DRAM", t); bw > 0 {
		rl.Bandwidth = append(rl.Bandwidth, reports.Ceiling{Name: fmt.Sprintf("DRAM read, %d thr", t), Value: bw})
	}
	for _, r := range reports.ChoiceRows(m.P) {
		e := r.E
		if e.Threads != t || !(e.Best.Bytes > 0) || !(e.Best.FLOPs > 0) || !(e.Best.Median > 0) {
			continue
		}
		pt := reports.RooflinePoint{Intensity: e.Best.FLOPs / e.Best.Bytes, Perf: e.Best.GFLOPs()}
		if label {
			_, short, _ := strings.Cut(e.Op, ".")
			pt.Label = fmt.Sprintf("%s %s %s", short, e.DType, e.ShapeClass)
		}
		rl.Points = append(rl.Points, pt)
	}
	return rl, len(rl.Compute) > 0 || len(rl.Bandwidth) > 0
}
