package ktune

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/cli"
	"github.com/ktune/ktune/internal/cpu"
)

// DetectOptions are detect's flags.
type DetectOptions struct {
	*cli.Factory
	JSON   bool
	Format string
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
			tuning profiles and covers the effective features.
		`),
		Example: "  ktune detect\n  ktune detect --json\n  KTUNE_MAX_ISA=avx2 ktune detect --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runDetect(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "text", "table format: text or md")
	return cmd
}

// DetectReport is the JSON form of detect.
type DetectReport struct {
	Fingerprint    string          `json:"fingerprint"`
	Arch           string          `json:"arch"`
	OS             string          `json:"os"`
	Vendor         string          `json:"vendor"`
	Brand          string          `json:"brand"`
	Family         int             `json:"family"`
	Model          int             `json:"model"`
	Stepping       int             `json:"stepping"`
	Hypervisor     string          `json:"hypervisor,omitempty"`
	PhysicalCores  int             `json:"physical_cores"`
	LogicalCores   int             `json:"logical_cores"`
	Cache          cpu.Cache       `json:"cache"`
	NUMA           []cpu.Node      `json:"numa"`
	MemBytes       int64           `json:"mem_bytes"`
	NominalHz      int64           `json:"nominal_hz"`
	SVEBits        int             `json:"sve_bits"`
	AMXPermission  bool            `json:"amx_permission"`
	Features       map[string]bool `json:"features"`
	Hardware       []string        `json:"hardware"`
	Masked         []string        `json:"masked"`
	Mask           string          `json:"mask,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`
	TopLevel       string          `json:"top_level"`
	ThreadsPerCore int             `json:"threads_per_core"`
}

// NewDetectReport summarises cpu.Get().
func NewDetectReport(i *cpu.Info) DetectReport {
	r := DetectReport{
		Fingerprint: i.Fingerprint(), Arch: i.Arch, OS: i.OS, Vendor: i.Vendor, Brand: i.Brand,
		Family: i.Family, Model: i.Model, Stepping: i.Stepping, Hypervisor: i.Hypervisor,
		PhysicalCores: i.PhysicalCores, LogicalCores: i.LogicalCores, ThreadsPerCore: i.ThreadsPerCore,
		Cache: i.Cache, NUMA: i.NUMA, MemBytes: i.MemBytes, NominalHz: i.NominalHz, SVEBits: i.SVEBits,
		AMXPermission: i.AMXPermission, Features: map[string]bool{},
		Hardware: i.Hardware.Names(), Masked: i.Masked.Names(), Mask: i.Mask, Warnings: i.Warnings,
		TopLevel: i.TopLevel(),
	}
	for _, f := range cpu.AllFeatures() {
		r.Features[f.String()] = i.Effective.Has(f)
	}
	return r
}

func runDetect(opts *DetectOptions) error {
	i := cpu.Get()
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
		{"cores", fmt.Sprintf("%d physical, %d logical", r.PhysicalCores, r.LogicalCores)},
		{"caches", fmt.Sprintf("L1d %s, L2 %s, L3 %s", cli.HumanBytes(r.Cache.L1D), cli.HumanBytes(r.Cache.L2), cli.HumanBytes(r.Cache.L3))},
		{"memory", cli.HumanBytes(r.MemBytes)},
		{"numa nodes", strconv.Itoa(len(r.NUMA))},
		{"nominal clock", fmt.Sprintf("%.0f MHz (reported; the real clock is measured by roofline)", float64(r.NominalHz)/1e6)},
		{"top ISA level", r.TopLevel},
	}
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
