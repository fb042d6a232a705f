package kprofile

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/roofline"
)

// ShowOptions are the arguments of kprofile show.
type ShowOptions struct {
	Profile string
	Format  string // text or md
}

// NewCmdShow builds `kprofile show PROFILE`.
func NewCmdShow(f *cli.Factory, runF func(*ShowOptions) error) *cobra.Command {
	o := &ShowOptions{}
	cmd := &cobra.Command{
		Use:   "show PROFILE",
		Short: "Print a tuning profile as tables",
		Long: cli.Doc(`
			show prints a tuning profile from any machine: the machine (CPU,
			fingerprint, ktune version, when it was tuned), its ceilings
			(compute per instruction class and thread count, read bandwidth
			plateaus per memory level), and per op and shape the chosen
			variant and parameters, the achieved GFLOP/s or GB/s, the share
			of the roof at the kernel's arithmetic intensity, and the speedup
			over the untuned default.

			The roof is the lower of the compute peak (int8act kernels
			against the VNNI int8 peak when the machine has one, everything
			else against the f32 FMA peak) and intensity × DRAM read
			bandwidth, at the threads the choice runs on; kernels timed warm
			(not mem=dram) are held to the read bandwidth of the smallest
			cache level that holds the bytes one run moves instead. Ceilings come from
			the profile, or else from a ceilings.json beside it (written by
			ktune roofline --out) for the same fingerprint.

			Where a key was tuned in several accuracy classes, the row shows
			the fastest, which is what the engine runs.

			The profile is checked as the engine checks it, on any machine
			(schema, thread counts, finite figures, ops and shapes, and for a
			profile of this build's architecture variants and parameters
			within their space): each bad entry gets a warning on stderr, and
			is shown as written.

			Exit status: 0 shown (warnings or not); 2 a usage or input error
			(a bad flag or argument, an unreadable or corrupt profile), with
			one error line; 1 any other failure (writing the output).
		`),
		Example: cli.Doc(`
			$ kprofile show ~/.config/ktune/ktune-profile-intel-6.167.1-2c-amx-9502e824.json
			$ kprofile show -o md profile.json
		`),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Profile = args[0]
			if err := checkFormat(o.Format); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runShow(f, o)
		},
	}
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "table format: text or md")
	return cmd
}

func runShow(f *cli.Factory, o *ShowOptions) error {
	m, err := readMachine(o.Profile)
	if err != nil {
		return err
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(f.Err, "warning: %s\n", w)
	}
	w, p := f.Out, m.P
	if len(p.Noisy) > 0 {
		fmt.Fprintf(f.Err, "warning: %s was measured on a noisy machine (%s): its figures and %% of roof are suspect\n", o.Profile, strings.Join(p.Noisy, "; "))
	}
	heading := func(s string) {
		if o.Format == "md" || o.Format == "markdown" {
			fmt.Fprintf(w, "\n### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	heading("Machine")
	if err := cli.Table(w, o.Format, []string{"property", "value"}, machineRows(m)); err != nil {
		return err
	}

	heading("Ceilings")
	if m.C == nil {
		fmt.Fprintln(w, "none in the profile, and no ceilings.json beside it (ktune roofline --out DIR writes one): % of roof not shown")
	} else {
		fmt.Fprintf(w, "from %s, measured %s, clock %.2f GHz\n", m.CeilFrom, m.C.Measured.Format(time.DateTime), m.C.ClockGHz)
		if o.Format == "md" || o.Format == "markdown" {
			fmt.Fprintln(w)
		}
		if err := cli.Table(w, o.Format, []string{"kind", "ceiling", "isa", "threads", "figure"}, ceilingRows(m.C)); err != nil {
			return err
		}
	}

	heading("Choices")
	if c := reports.ConfirmSummary(p); c != "" {
		fmt.Fprintln(w, c)
		if o.Format == "md" || o.Format == "markdown" {
			fmt.Fprintln(w)
		}
	}
	if err := cli.Table(w, o.Format, reports.ChoicesHeader, reports.ChoicesTable(p, m.C)); err != nil {
		return err
	}
	if e := p.EndToEnd; e != nil {
		heading("End to end")
		fmt.Fprintf(w, "%s, %d alternating rounds with the profile and without\n", e.Model, e.Rounds)
		if o.Format == "md" || o.Format == "markdown" {
			fmt.Fprintln(w)
		}
		if err := cli.Table(w, o.Format, reports.EndToEndHeader, reports.EndToEndRows(e)); err != nil {
			return err
		}
		fmt.Fprintln(w, e.Gain())
	}
	return nil
}

func machineRows(m *machine) [][]string {
	p := m.P
	c := p.CPU
	mask := c.Mask
	if mask == "" {
		mask = "none"
	}
	return [][]string{
		{"cpu", fmt.Sprintf("%s (%s, family %d model %d stepping %d)", strings.TrimSpace(c.Brand), c.Vendor, c.Family, c.Model, c.Stepping)},
		{"fingerprint", p.Fingerprint},
		{"cores", fmt.Sprintf("%d physical, %d logical, %d NUMA node(s)", c.PhysicalCores, c.LogicalCores, c.NUMANodes)},
		{"caches", fmt.Sprintf("L1d %s, L2 %s, L3 %s", cli.HumanBytes(c.L1D), cli.HumanBytes(c.L2), l3Cell(c.L3, m.C))},
		{"features", c.Features},
		{"mask", mask},
		{"model", p.Model},
		{"ktune version", p.KtuneVersion + " (" + p.GoVersion + ")"},
		{"created", p.Created.Format(time.DateTime + " MST")},
		{"placement", placementCell(p)},
		{"search", fmt.Sprintf("%d entries, %d of %d candidates measured, %d rejected, %.0f s (budget %s)",
			len(p.Entries), p.Stats.Measured, p.Stats.Space, p.Stats.Rejected, p.Stats.WallSeconds, orNone(p.Stats.Budget))},
		{"measured", noisyCell(p)},
	}
}

// noisyCell says whether the run that wrote the profile was quiet.
func noisyCell(p *profile.Profile) string {
	if len(p.Noisy) == 0 {
		return "quiet (ceilings re-measured at the end agreed; no other process took CPU time)"
	}
	return fmt.Sprintf("NOISY: %d reason(s), in the warning above (the choices stand; figures and %% of roof are suspect)", len(p.Noisy))
}

// placementCell lists the placement per thread budget.
func placementCell(p *profile.Profile) string {
	if len(p.Placements) == 0 {
		return orNone(p.Placement)
	}
	var parts []string
	for _, tp := range p.Placements {
		parts = append(parts, fmt.Sprintf("%s at %d threads", tp.Placement, tp.Threads))
	}
	return strings.Join(parts, ", ")
}

func checkFormat(f string) error {
	switch f {
	case "text", "", "md", "markdown":
		return nil
	}
	return cli.Usagef("unknown table format %q (text or md)", f)
}

// l3Cell is the detected L3, or the one roofline measured where detection
// had none.
func l3Cell(detected int64, c *roofline.Ceilings) string {
	if detected <= 0 && c != nil && c.Cache.L3 > 0 && c.Cache.From["l3"] == "measured" {
		return cli.HumanBytes(c.Cache.L3) + " (measured from the bandwidth sweep)"
	}
	return cli.HumanBytes(detected)
}
