package kprofile

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/profile"
)

// TestBenchSkipsBadEntries: bench does not run an entry the engine's
// validation refuses (a budget of 0 or 10⁶ threads), with a note each.
func TestBenchSkipsBadEntries(t *testing.T) {
	var p profile.Profile
	if err := json.Unmarshal([]byte(probeProfile(t, func(p *profile.Profile) {
		p.Entries[0].Threads = 0
		p.Entries[1].Threads = 1e6
	})), &p); err != nil {
		t.Fatal(err)
	}
	cases, notes, err := benchCases(&p, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "thread budget 0") || !strings.Contains(joined, "thread budget 1000000") {
		t.Errorf("notes %q", notes)
	}
	for _, c := range cases {
		if strings.Contains(c.name, "threads=0") || strings.Contains(c.name, "threads=1000000") {
			t.Errorf("bad entry benchmarked: %s", c.name)
		}
	}
	// --ops naming nothing is a usage error (exit 2)
	if _, _, err := benchCases(&p, nil, "nosuch"); cli.ExitCode(err) != 2 {
		t.Errorf("--ops nosuch: %v (exit %d)", err, cli.ExitCode(err))
	}
}
