// Package cli holds what the command-line programs share: the factory of
// writers each command writes to, table rendering, and the ISA mask flags.
// Each program's commands live in a subpackage (ktune, kprofile, krun),
// built as cobra commands with an options struct and NewCmdX(f, runF), so
// flag parsing is testable without running anything.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/MakeNowJust/heredoc"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ktune/ktune/internal/atomicfile"
	"github.com/ktune/ktune/internal/cpu"
)

// Factory carries the writers commands print to.
type Factory struct {
	Out io.Writer
	Err io.Writer
	// Profile is the tuning profile the command was told to use (krun
	// --profile: a path, or "off"); "" leaves it to KTUNE_PROFILE, else
	// this machine's.
	Profile string
}

// Doc trims a heredoc help text.
func Doc(s string) string { return heredoc.Doc(s) }

// Table renders rows with a header as a text table ("text") or Markdown ("md").
func Table(w io.Writer, format string, header []string, rows [][]string) error {
	var opts []tablewriter.Option
	switch format {
	case "md", "markdown":
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	case "text", "":
	default:
		return fmt.Errorf("unknown table format %q (text or md)", format)
	}
	opts = append(opts, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t := tablewriter.NewTable(w, opts...)
	t.Header(toAny(header)...)
	for _, r := range rows {
		if err := t.Append(toAny(r)...); err != nil {
			return err
		}
	}
	return t.Render()
}

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, x := range s {
		a[i] = x
	}
	return a
}

// ISAFlags are the masking flags every program takes; Apply hands them to
// package cpu before any kernel is chosen.
type ISAFlags struct {
	MaxISA  string
	Disable string
}

// Register adds --max-isa and --disable-isa to a command's persistent flags.
func (f *ISAFlags) Register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.MaxISA, "max-isa", "", "cap CPU features at an ISA level ("+strings.Join(cpu.LevelNames(), ", ")+"); as KTUNE_MAX_ISA")
	cmd.PersistentFlags().StringVar(&f.Disable, "disable-isa", "", "comma-separated CPU features to disable, spelled as in /proc/cpuinfo (e.g. avx512f,amx_tile); as KTUNE_DISABLE")
}

// Apply masks the CPU features; a bad flag or a bad KTUNE_MAX_ISA or
// KTUNE_DISABLE is a usage error (the user believes the mask applies).
func (f *ISAFlags) Apply() error {
	if errs := cpu.MaskErrors(); len(errs) > 0 {
		for i, e := range errs {
			errs[i] = strings.TrimSuffix(e, "; ignored")
		}
		return Usagef("%s", strings.Join(errs, "; "))
	}
	if f.MaxISA == "" && f.Disable == "" {
		return nil
	}
	if err := cpu.SetMask(f.MaxISA, f.Disable); err != nil {
		return &UsageError{err}
	}
	return nil
}

// HumanBytes formats a byte count with binary units; negative is "unknown".
func HumanBytes(b int64) string {
	if b < 0 {
		return "unknown"
	}
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// UsageError is bad input from the user (a flag, an argument, a file);
// the programs exit with code 2 on it, 1 on other failures.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef makes a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// OneLine is err's message on one line (a list of problems joined by
// "; "), as the one error line a command prints.
func OneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// ExitCode is 0 for nil, 2 for a UsageError or an output path that is
// not a file (atomicfile.NotFileError), 128 + the signal for Interrupted,
// 1 otherwise.
func ExitCode(err error) int {
	var u *UsageError
	var nf *atomicfile.NotFileError
	var in *Interrupted
	switch {
	case err == nil:
		return 0
	case errors.As(err, &in):
		return atomicfile.SignalExitCode(in.Signal)
	case errors.As(err, &u), errors.As(err, &nf):
		return 2
	}
	return 1
}

// Main runs the command tree root with args and returns the exit code:
// 0 done, else the error printed on one line to stderr and code(err)
// (ExitCode when code is nil); an unknown command is a usage error (2),
// printed with cobra's suggestion and where the commands are listed.
func Main(root *cobra.Command, args []string, stdout, stderr io.Writer, code func(error) int) int {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	FlagErrors(root)
	root.SilenceErrors = true // printed here, on one line
	err := root.Execute()
	if err == nil {
		return 0
	}
	if code == nil {
		code = ExitCode
	}
	msg, c := OneLine(err), code(err)
	if strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra's suggestions come on lines of their own
		c = 2
		msg = strings.Join(strings.Fields(strings.Replace(err.Error(), "\n\nDid you mean this?", "; did you mean", 1)), " ")
		msg += " (" + root.Name() + " --help lists the commands)"
	}
	fmt.Fprintln(stderr, "Error:", msg)
	return c
}

// FlagErrors makes cobra's flag parsing and argument errors (an unknown
// flag, a bad value, a missing or extra argument) UsageErrors (exit 2),
// for cmd and every command below it.
func FlagErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{err} })
	var wrap func(c *cobra.Command)
	wrap = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(c *cobra.Command, a []string) error {
				if err := args(c, a); err != nil {
					return &UsageError{err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			wrap(sub)
		}
	}
	wrap(cmd)
}

// Interrupted is a command stopped by SIGINT or SIGTERM: it exits with
// 128 + the signal's number, as a shell reports it (130, 143), like krun
// convert.
type Interrupted struct {
	Signal os.Signal
	Err    error
}

func (e *Interrupted) Error() string { return e.Err.Error() }
func (e *Interrupted) Unwrap() error { return e.Err }

// SignalContext is a context cancelled by SIGINT or SIGTERM, its stop
// function, and interrupted, which wraps err as the Interrupted error of
// the signal that cancelled it (err itself where none did).
func SignalContext(parent context.Context) (ctx context.Context, stop func(), interrupted func(err error) error) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	var got atomic.Value
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			got.Store(s)
			cancel()
		case <-done:
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
	interrupted = func(err error) error {
		if s, ok := got.Load().(os.Signal); ok {
			return &Interrupted{Signal: s, Err: err}
		}
		return err
	}
	return ctx, stop, interrupted
}
