package ktune

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/version"
)

// NewCmdVersion builds `ktune version`.
func NewCmdVersion(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the ktune and Go versions",
		Long:  "Print the ktune and Go versions.\n" + exitCodes,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(f.Out, "ktune %s (%s)\n", version.String(), version.Go())
			return err
		},
	}
}
