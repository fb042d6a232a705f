package quant

import "testing"

// serialSweep skips a long single-goroutine numeric sweep under the race
// detector in -short mode: CI's race stage looks for data races, these
// tests start no goroutines, and the test stage runs them in full.
func serialSweep(t *testing.T) {
	t.Helper()
	if raceOn && testing.Short() {
		t.Skip("single-goroutine numeric sweep, nothing for the race detector (the test stage runs it)")
	}
}
