package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// NewProgress returns a progress reporter: a bar when w is a terminal,
// one plain line per 10% otherwise.
func NewProgress(w io.Writer) func(phase string, done, total int, what string) {
	f, isFile := w.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	var bar *progressbar.ProgressBar
	var barPhase string
	lastPct := map[string]int{}
	return func(phase string, done, total int, what string) {
		if tty {
			if bar == nil || barPhase != phase {
				if bar != nil {
					bar.Finish()
				}
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(phase),
					progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30))
				barPhase = phase
			}
			bar.Describe(phase + ": " + what)
			bar.Set(done)
			if done == total {
				bar.Finish()
			}
			return
		}
		pct := 100 * done / max(total, 1)
		if pct/10 != lastPct[phase]/10 || done == total || done == 1 {
			fmt.Fprintf(w, "%s: %d/%d %s\n", phase, done, total, what)
		}
		lastPct[phase] = pct
	}
}
