package ktune

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/cpu"
)

// DetectOptions are detect's flags.
type DetectOptions struct {
	*cli.Factory
	JSON   bool
	Format string
	// Capture writes what detection read into this folder; From detects
	// from such a folder instead of this machine.
	Capture string
	From    string
}

// NewCmdDetect builds `ktune detect`; runF replaces the run logic in tests.
func NewCmdDetect(f *cli.Factory, runF func(*DetectOptions) error) *cobra.Command {
	opts := &DetectOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "detect",
		Short: "Show the CPU, its effective features, caches, cores and NUMA nodes",
		Long: cli.Doc(`
			Show what ktune sees of this machine. Features are spelled as in
			/proc/cpuinfo. "effective" is what kernels may use: the hardware's
			features, less AMX without the Linux permission, less what
			KTUNE_MAX_ISA, KTUNE_DISABLE, --max-isa or --disable-isa mask
			(listed under "masked"). The fingerprint names the machine in
			tuning profiles and covers the effective features and the usable
			CPU count.

			Cores, caches and NUMA nodes come from the operating system
			(Linux: the affinity mask, /sys/devices/system/cpu, cgroup CPU
			quotas, GOMAXPROCS; macOS: sysctl; Windows:
			GetLogicalProcessorInformationEx); CPUID's counts are only a hint.
			"usable CPUs" is how many threads ktune and krun run at most.

			--capture DIR writes what detection read (the /proc and /sys files,
			the CPUID answers, the affinity mask, sysctl values) into DIR, to
			attach to a bug report; --from DIR detects from such a folder.
		`) + exitCodes,
		Example: "  ktune detect\n  ktune detect --json\n  KTUNE_MAX_ISA=avx2 ktune detect --json\n  ktune detect --capture my-machine\n  ktune detect --from my-machine --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range []string{"capture", "from"} {
				if v, _ := cmd.Flags().GetString(f); cmd.Flags().Changed(f) && strings.TrimSpace(v) == "" {
					return cli.Usagef("--%s: a folder is required", f)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runDetect(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "text", "table format: text or md")
	cmd.Flags().StringVar(&opts.Capture, "capture", "", "write what detection read of this machine into this folder (new or empty)")
	cmd.Flags().StringVar(&opts.From, "from", "", "detect from a folder written by --capture instead of this machine")
	return cmd
}

// DetectReport is the JSON form of detect: what package cpu describes
// (cpu.Info, feature sets as name lists), with the fingerprint, the
// default thread budgets, every known feature's effective state and the
// top ISA level.
type DetectReport struct {
	Fingerprint string `json:"fingerprint"`
	cpu.Info
	SVEBits        int             `json:"sve_bits"` // 0 written too (cpu.Info omits it)
	DefaultThreads []int           `json:"default_threads"`
	Features       map[string]bool `json:"features"`
	TopLevel       string          `json:"top_level"`
}

// NewDetectReport summarises i.
func NewDetectReport(i *cpu.Info) DetectReport {
	r := DetectReport{Fingerprint: i.Fingerprint(), Info: *i, SVEBits: i.SVEBits, DefaultThreads: i.Topology.DefaultThreads(),
		Features: map[string]bool{}, TopLevel: i.TopLevel()}
	for _, f := range cpu.AllFeatures() {
		r.Features[f.String()] = i.Effective.Has(f)
	}
	return r
}

func runDetect(opts *DetectOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	i := cpu.Get()
	if opts.From != "" {
		if opts.Capture != "" {
			return cli.Usagef("--from and --capture do not go together")
		}
		src, err := cpu.LoadCapture(opts.From)
		if err != nil {
			return &cli.UsageError{Err: err}
		}
		i = cpu.Describe(src)
	}
	if opts.Capture != "" {
		if err := cpu.WriteCapture(opts.Capture); err != nil {
			return &cli.UsageError{Err: fmt.Errorf("--capture: %v", err)}
		}
		fmt.Fprintf(opts.Err, "wrote %s: what detection read of this machine (attach it to a bug report; ktune detect --from %s reads it)\n", opts.Capture, opts.Capture)
	}
	r := NewDetectReport(i)
	if opts.JSON {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(opts.Out, "%s\n", b)
		return err
	}
	rows := [][]string{
		{"fingerprint", r.Fingerprint},
		{"cpu", fmt.Sprintf("%s (%s, family %d model %d stepping %d)", r.Brand, r.Vendor, r.Family, r.Model, r.Stepping)},
		{"arch / os", r.Arch + " / " + r.OS},
		{"usable CPUs", usableLine(&r.Topology, r.Warnings)},
		{"cores", fmt.Sprintf("%d physical, %d logical (%d package(s), %s)", r.PhysicalCores, r.LogicalCores, r.Topology.Packages, smtLine(r.ThreadsPerCore))},
	}
	for _, c := range r.Topology.Classes {
		rows = append(rows, []string{"core class", fmt.Sprintf("%s: %d cores, %d CPUs %s", c.Name, c.Cores, c.CPUs, classCPUs(&r.Topology, c.Rank))})
	}
	rows = append(rows, [][]string{
		{"caches", fmt.Sprintf("L1d %s, L2 %s per core, L3 %s%s", cacheCell(r.Cache.L1D, r.Cache.From["l1d"]), cacheCell(r.Cache.L2, r.Cache.From["l2"]), cacheCell(r.Cache.L3, r.Cache.From["l3"]), l3Instances(r.Cache))},
		{"default threads", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(r.DefaultThreads)), ","), "[]")},
		{"memory", cli.HumanBytes(r.MemBytes)},
		{"numa nodes", strconv.Itoa(len(r.NUMA))},
		{"nominal clock", fmt.Sprintf("%.0f MHz (reported; the real clock is measured by roofline)", float64(r.NominalHz)/1e6)},
		{"top ISA level", r.TopLevel},
	}...)
	if r.Hypervisor != "" {
		rows = append(rows, []string{"hypervisor", r.Hypervisor})
	}
	if r.Arch == "arm64" {
		rows = append(rows, []string{"sve vector length", fmt.Sprintf("%d bits", r.SVEBits)})
	}
	for _, f := range cpu.AllFeatures() {
		if (r.Arch == "amd64" && !cpu.X86.Has(f)) || (r.Arch == "arm64" && !cpu.ARM64.Has(f)) {
			continue
		}
		state := "no"
		switch {
		case i.Effective.Has(f):
			state = "yes"
		case i.Masked.Has(f):
			state = "masked"
		case i.Hardware.Has(f) && cpu.AMX.Has(f) && !i.AMXPermission:
			state = "no (OS permission refused)"
		}
		rows = append(rows, []string{f.String(), state})
	}
	if r.Mask != "" {
		rows = append(rows, []string{"mask", r.Mask})
	}
	for _, w := range r.Warnings {
		rows = append(rows, []string{"warning", w})
	}
	return cli.Table(opts.Out, opts.Format, []string{"property", "value"}, rows)
}

func usableLine(t *cpu.Topology, warnings []string) string {
	s := fmt.Sprintf("%d (CPUs %s", t.Usable, cpu.FormatCPUList(t.CPUs))
	if len(t.Affinity) > 0 && len(t.Affinity) < len(t.Online) {
		s += fmt.Sprintf(" of %d online: affinity mask", len(t.Online))
	}
	if t.Quota > 0 {
		s += fmt.Sprintf("; cgroup quota %.2f CPUs from %s", t.Quota, t.QuotaFrom)
	}
	if t.GOMAXPROCS > 0 {
		s += fmt.Sprintf("; GOMAXPROCS=%d", t.GOMAXPROCS)
	}
	s += "; from " + t.From + ")"
	for _, w := range warnings { // only where detection found CPUID wrong
		if strings.HasPrefix(w, "CPUID reports") {
			s += fmt.Sprintf("; CPUID claims %d logical", t.CPUIDLogical)
		}
	}
	return s
}

func smtLine(tpc int) string {
	if tpc > 1 {
		return fmt.Sprintf("SMT, %d threads per core", tpc)
	}
	return "no SMT in use"
}

func classCPUs(t *cpu.Topology, rank int) string {
	return "(" + cpu.FormatCPUList(t.CPUsOfRank(rank)) + ")"
}

func cacheCell(size int64, from string) string {
	s := cli.HumanBytes(size)
	if size > 0 && from != "" {
		s += " (" + from + ")"
	}
	if size <= 0 {
		s = "unknown (measured by roofline)"
	}
	return s
}

func l3Instances(c cpu.Cache) string {
	if c.L3 > 0 && c.L3Total > c.L3 {
		return fmt.Sprintf(", %s in all", cli.HumanBytes(c.L3Total))
	}
	return ""
}
