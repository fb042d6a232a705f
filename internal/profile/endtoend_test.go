package profile

import (
	"strings"
	"testing"
)

// TestJudge pins the end-to-end verdict: a row is a loss (or a gain) only
// where every round moved past the margin; one loss makes the profile a
// loss whatever else gained.
func TestJudge(t *testing.T) {
	row := func(q ...float64) EndToEndRow {
		return EndToEndRow{Test: "pp64", Threads: 1, With: 1, Without: 1, Ratios: q}
	}
	for _, c := range []struct {
		name string
		rows []EndToEndRow
		want string
	}{
		{"equal", []EndToEndRow{row(1, 1.01, 0.99)}, VerdictNone},
		{"slower every round", []EndToEndRow{row(0.9, 0.95, 0.96)}, VerdictLoss},
		{"slower but one round", []EndToEndRow{row(0.9, 0.9, 0.98)}, VerdictNone},
		{"faster every round", []EndToEndRow{row(1.1, 1.05, 1.04)}, VerdictGain},
		{"faster but one round", []EndToEndRow{row(1.1, 1.1, 1.02)}, VerdictNone},
		{"a gain and a loss", []EndToEndRow{row(1.2, 1.2, 1.2), row(0.5, 0.5, 0.5)}, VerdictLoss},
	} {
		e := &EndToEnd{Rounds: 3, Rows: c.rows}
		e.Judge()
		if e.Verdict != c.want {
			t.Errorf("%s: %q, want %q", c.name, e.Verdict, c.want)
		}
		if err := e.check(); err != nil {
			t.Errorf("%s: check: %v", c.name, err)
		}
	}
	e := &EndToEnd{Rounds: 3, Rows: []EndToEndRow{row(1, 1, 0)}, Verdict: VerdictNone}
	if err := e.check(); err == nil || !strings.Contains(err.Error(), "ratio 0") {
		t.Errorf("a zero ratio: %v", err)
	}
	e = &EndToEnd{Rounds: 2, Rows: []EndToEndRow{row(1, 1, 1)}, Verdict: VerdictNone}
	if err := e.check(); err == nil {
		t.Error("3 ratios for 2 rounds passed")
	}
}
