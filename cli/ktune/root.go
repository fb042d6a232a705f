// Package ktune implements the ktune command: detect the CPU, measure its
// ceilings, tune every kernel of Kimi Linear, write the tuning profile.
package ktune

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	_ "github.com/ktune/ktune/kernels/all" // register every kernel family
)

// Main runs ktune with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return cli.Main(NewCmdRoot(&cli.Factory{Out: stdout, Err: stderr}), args, stdout, stderr, nil)
}

// NewCmdRoot builds the ktune command tree.
func NewCmdRoot(f *cli.Factory) *cobra.Command { return newCmdRoot(f, nil) }

func newCmdRoot(f *cli.Factory, runF func(*TuneOptions) error) *cobra.Command {
	var isa cli.ISAFlags
	tune := &TuneOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "ktune",
		Short: "Tune Kimi Linear's CPU kernels for this machine",
		Long: cli.Doc(`
			ktune detects this CPU, measures what it can do, and chooses for
			every kernel of Kimi Linear the fastest correct variant and
			parameters, writing a per-machine tuning profile that the engine
			loads.

			With no subcommand it runs the whole job: detect the CPU, measure
			its ceilings (quick), tune every kernel at Kimi Linear's shapes
			(decode 1/2/4/8 tokens, prefill passes of 64 and 512 tokens — the
			engine runs longer prompts as 512-token passes —, MLA contexts
			4K/32K/128K) for each thread budget, verify every candidate against
			the reference before timing it (at the timed shape, or a smaller
			one with the same panels, chunks and context splits:
			--list-workloads shows both), and write
			ktune-profile-<fingerprint>.json into --out. An interrupted run
			resumes where it stopped. The engine loads the profile from there or
			from $KTUNE_PROFILE. Every flag and the output folder (writable) are
			checked before anything is measured.
		`) + exitCodes,
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return isa.Apply()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(tune)
			}
			return runTune(tune)
		},
	}
	isa.Register(cmd)
	tune.register(cmd)
	cmd.AddCommand(NewCmdDetect(f, nil), NewCmdVariants(f, nil), NewCmdRoofline(f, nil), NewCmdVersion(f))
	return cmd
}

// exitCodes is the help's paragraph on exit codes.
const exitCodes = `
Exit status: 0 success; 2 a usage error or a bad input (a flag, an
argument, an unwritable output folder, a bad config or capture);
1 another failure (a measurement, an interrupted run).`
