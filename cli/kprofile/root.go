// Package kprofile implements the kprofile command: read tuning profiles
// from any machine (show, compare), cut them down for a deployment
// (export), benchmark a profile's choices (bench), and track benchmark
// regressions (regress).
package kprofile

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/version"
	_ "github.com/ktune/ktune/kernels/all" // register every kernel family (export, bench)
)

// Main runs kprofile with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return cli.Main(NewCmdRoot(&cli.Factory{Out: stdout, Err: stderr}), args, stdout, stderr, exitCode)
}

// exitCode is cli.ExitCode, or the code a command chose (exitError).
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return cli.ExitCode(err)
}

// NewCmdRoot builds the kprofile command tree.
func NewCmdRoot(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kprofile",
		Short: "Compare ktune profiles across CPUs and gate CI on benchmarks",
		Long: cli.Doc(`
			kprofile reads the tuning profiles ktune writes, on any machine:
			it shows and compares them, runs the kernel benchmarks with a
			profile's choices, and flags benchmark regressions.

			Exit status, for every command: 0 done; 1 a problem found (a
			regression, for regress) or another failure; 2 a usage or input
			error (a bad flag or argument, an unreadable, corrupt or invalid
			file), with one error line on stderr.
		`),
		SilenceUsage: true,
		// a bad KTUNE_MAX_ISA or KTUNE_DISABLE is refused (bench runs
		// kernels under the masks)
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			var none cli.ISAFlags
			return none.Apply()
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the kprofile and Go versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(f.Out, "kprofile %s (%s)\n", version.String(), version.Go())
			return err
		},
	})
	cmd.AddCommand(NewCmdShow(f, nil), NewCmdCompare(f, nil), NewCmdExport(f, nil), NewCmdBench(f, nil), NewCmdRegress(f, nil), NewCmdServeBench(f, nil))
	return cmd
}
