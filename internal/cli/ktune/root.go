// Package ktune implements the ktune command: detect the CPU, measure its
// ceilings, tune every kernel of Kimi Linear, write the tuning profile.
package ktune

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/cli"
	_ "github.com/ktune/ktune/kernels/all" // register every kernel family
)

// Main runs ktune with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	f := &cli.Factory{Out: stdout, Err: stderr}
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		return 1
	}
	return 0
}

// NewCmdRoot builds the ktune command tree.
func NewCmdRoot(f *cli.Factory) *cobra.Command {
	var isa cli.ISAFlags
	cmd := &cobra.Command{
		Use:   "ktune",
		Short: "Tune Kimi Linear's CPU kernels for this machine",
		Long: cli.Doc(`
			ktune detects this CPU, measures what it can do, and chooses for
			every kernel of Kimi Linear the fastest correct variant and
			parameters, writing a per-machine tuning profile that the engine
			loads.

			With no subcommand it runs the whole job. Today that is detection
			and the list of kernel variants this CPU can run; the tuner comes
			with the roofline and autotuner work.
		`),
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return isa.Apply()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := runDetect(&DetectOptions{Factory: f}); err != nil {
				return err
			}
			io.WriteString(f.Out, "\n")
			return runVariants(&VariantsOptions{Factory: f, All: true})
		},
	}
	isa.Register(cmd)
	cmd.AddCommand(NewCmdDetect(f, nil), NewCmdVariants(f, nil), NewCmdRoofline(f, nil), NewCmdVersion(f))
	return cmd
}
