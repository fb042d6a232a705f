package ktune

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/kernel"
)

// VariantsOptions are variants' flags.
type VariantsOptions struct {
	*cli.Factory
	All    bool
	Op     string
	Format string
}

// NewCmdVariants builds `ktune variants`.
func NewCmdVariants(f *cli.Factory, runF func(*VariantsOptions) error) *cobra.Command {
	opts := &VariantsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "variants",
		Short: "List the registered kernel variants and whether this CPU runs them",
		Long: cli.Doc(`
			List every kernel variant built into this binary: its op, dtypes,
			accuracy class, required CPU features, tunable parameters and
			whether the effective features allow it. The default column marks
			what the dispatcher uses without a tuning profile.
		`) + exitCodes,
		Example: "  ktune variants\n  ktune variants --op norm.rmsnorm -o md",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVariants(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", true, "include variants this CPU cannot run")
	cmd.Flags().StringVar(&opts.Op, "op", "", "only this op (family.op)")
	cmd.Flags().StringVarP(&opts.Format, "output", "o", "text", "table format: text or md")
	return cmd
}

func runVariants(opts *VariantsOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Op != "" {
		var names []string
		for _, op := range kernel.Ops() {
			names = append(names, op.Name)
		}
		if !slices.Contains(names, opts.Op) {
			return cli.Usagef("--op %q: no such op (%s)", opts.Op, strings.Join(names, ", "))
		}
	}
	var rows [][]string
	for _, op := range kernel.Ops() {
		if opts.Op != "" && op.Name != opts.Op {
			continue
		}
		for _, v := range kernel.Variants(op.Name) {
			if !opts.All && !v.Available() {
				continue
			}
			avail := "yes"
			if !v.Available() {
				avail = "no"
			}
			def := ""
			for _, dt := range v.DTypes {
				if kernel.Default(op.Name, dt) == v {
					def = "default"
				}
			}
			if v.Reference {
				def = "reference"
			}
			var params []string
			for _, p := range v.Params {
				vals := make([]string, len(p.Values))
				for i, x := range p.Values {
					vals[i] = p.Label(x)
				}
				params = append(params, p.Name+"∈{"+strings.Join(vals, ",")+"}")
			}
			if v.Threaded {
				params = append(params, "threads")
			}
			dts := make([]string, len(v.DTypes))
			for i, d := range v.DTypes {
				dts[i] = string(d)
			}
			req := v.Requires.String()
			if req == "" {
				req = "-"
			}
			rows = append(rows, []string{op.Name, v.Name, strings.Join(dts, ","), string(v.Class), req, strings.Join(params, " "), avail, def})
		}
	}
	return cli.Table(opts.Out, opts.Format, []string{"op", "variant", "dtypes", "class", "requires", "parameters", "runs here", "role"}, rows)
}
