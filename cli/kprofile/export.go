package kprofile

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/kernel"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/tuner"
)

// ExportOptions are the arguments of kprofile export.
type ExportOptions struct {
	Profile string
	Threads int
	Config  string // model config.json ("" built-in Kimi-Linear-48B-A3B)
	Out     string // "" or "-": stdout
}

// NewCmdExport builds `kprofile export PROFILE --threads N`.
func NewCmdExport(f *cli.Factory, runF func(*ExportOptions) error) *cobra.Command {
	o := &ExportOptions{}
	cmd := &cobra.Command{
		Use:   "export PROFILE --threads N",
		Short: "Cut a profile down to what one deployment needs",
		Long: cli.Doc(`
			export writes the part of a tuning profile that a deployment of one
			model at one thread count needs, in the same schema, so the engine
			loads it through KTUNE_PROFILE like the full profile.

			It keeps the entries of the ops and weight dtypes the model uses
			(the built-in Kimi-Linear-48B-A3B, or --config config.json; a model
			without MLA layers drops the MLA entries), every shape and accuracy
			class of them, each at the thread budget the engine would pick for
			N threads: the largest budget not above N, else the smallest. The
			engine's choices at N threads are the same with the export as with
			the full profile.

			The machine, fingerprint and ceilings are copied unchanged: the
			export is still only used on the machine it was tuned for.

			The profile must pass the engine's validation (see kprofile show
			--help): one of another schema, or with any bad entry, is refused
			and nothing is written. -o may not name the input profile.

			Exit status: 0 written; 2 a usage or input error (a bad flag or
			argument, an unreadable, corrupt or invalid profile, an output
			path that cannot be written), with one error line and nothing
			written; 1 any other failure.
		`),
		Example: cli.Doc(`
			$ kprofile export ~/.config/ktune/ktune-profile-*.json --threads 16 -o deploy.json
			$ KTUNE_PROFILE=deploy.json krun ...
		`),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Profile = args[0]
			if o.Threads < 1 || o.Threads > profile.MaxThreads {
				return cli.Usagef("--threads N (1 to %d) is required", profile.MaxThreads)
			}
			if err := checkOutput("-o", o.Out, o.Profile); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runExport(f, o)
		},
	}
	cmd.Flags().IntVar(&o.Threads, "threads", 0, "the deployment's thread count")
	cmd.Flags().StringVar(&o.Config, "config", "", "the model's config.json (default: the built-in Kimi-Linear-48B-A3B)")
	cmd.Flags().StringVarP(&o.Out, "output", "o", "", "output file, written atomically (default: standard output)")
	return cmd
}

// Export returns the subset of p for a model config at a thread count.
func Export(p *profile.Profile, cfg *arch.Config, modelName string, threads int) (*profile.Profile, error) {
	type opdt struct {
		op string
		dt kernel.DType
	}
	used := map[opdt]bool{}
	for _, w := range tuner.Workloads(cfg, tuner.FullClasses, false) {
		used[opdt{w.Op, w.DType}] = true
	}
	// per (op, dtype, class, label, shape): the budget the engine's
	// lookup (profile.Profile.Choose) prefers for threads
	type group struct{ op, dt, class, label, shape string }
	pick := map[group]int{}
	for i, e := range p.Entries {
		if !used[opdt{e.Op, e.DType}] {
			continue
		}
		g := group{e.Op, string(e.DType), string(e.Class), e.Label, e.Shape.String()}
		j, ok := pick[g]
		if !ok || better(e.Threads, p.Entries[j].Threads, threads) {
			pick[g] = i
		}
	}
	if len(pick) == 0 {
		return nil, fmt.Errorf("the profile has no entries for the model's ops")
	}
	idx := make([]int, 0, len(pick))
	for _, i := range pick {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := *p
	out.Entries = make([]profile.Entry, 0, len(idx))
	out.Stats.Space, out.Stats.Measured, out.Stats.Rejected = 0, 0, 0
	for _, i := range idx {
		e := p.Entries[i]
		out.Entries = append(out.Entries, e)
		out.Stats.Space += e.Space
		out.Stats.Measured += e.Measured
		out.Stats.Rejected += len(e.Rejected)
	}
	if modelName != "" {
		out.Model = modelName
	}
	out.Sort()
	return &out, nil
}

// better reports whether budget a suits threads better than budget b: the
// largest budget not above threads, else the smallest.
func better(a, b, threads int) bool {
	switch {
	case a <= threads && b <= threads:
		return a > b
	case a <= threads:
		return true
	case b <= threads:
		return false
	}
	return a < b
}

func runExport(f *cli.Factory, o *ExportOptions) error {
	p, err := readProfile(o.Profile)
	if err != nil {
		return err
	}
	if bad := validate(o.Profile, p); len(bad) > 0 {
		more := ""
		if len(bad) > 1 {
			more = fmt.Sprintf(" (and %d more bad entries)", len(bad)-1)
		}
		return cli.Usagef("%s%s; not exported (re-run ktune)", bad[0], more)
	}
	cfg, name := arch.Kimi48B(), "Kimi-Linear-48B-A3B"
	if o.Config != "" {
		if cfg, err = arch.Load(o.Config); err != nil {
			return &cli.UsageError{Err: err}
		}
		name = o.Config
	} else if p.Model != "" {
		name = p.Model
	}
	most := 0
	for _, e := range p.Entries {
		most = max(most, e.Threads)
	}
	if most > 0 && o.Threads > most {
		fmt.Fprintf(f.Err, "warning: --threads %d: %s was tuned at %d threads at most; its %d-thread choices are exported (tune on the deployment machine for %d)\n",
			o.Threads, o.Profile, most, most, o.Threads)
	}
	x, err := Export(p, cfg, name, o.Threads)
	if err != nil {
		return cli.Usagef("%s: %v", o.Profile, err)
	}
	var buf bytes.Buffer
	if err := x.WriteJSON(&buf); err != nil {
		return err
	}
	if o.Out == "" || o.Out == "-" {
		_, err := f.Out.Write(buf.Bytes())
		return err
	}
	if err := atomicfile.WriteBytes(o.Out, buf.Bytes()); err != nil {
		return &cli.UsageError{Err: fmt.Errorf("-o %s: %w", o.Out, err)}
	}
	fmt.Fprintf(f.Err, "wrote %s: %d of %d entries (threads %d, %s)\n", o.Out, len(x.Entries), len(p.Entries), o.Threads, name)
	return nil
}
