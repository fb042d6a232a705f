package profile

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineLinksNoTuner: the engine and this package reach the profile
// without linking the tuner, the roofline measurements or the plotting
// library (a binary embedding the engine stays small).
func TestEngineLinksNoTuner(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies")
	}
	for _, pkg := range []string{"github.com/ktune/ktune/internal/profile", "github.com/ktune/ktune/model"} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range []string{"github.com/ktune/ktune/tuner", "github.com/ktune/ktune/roofline", "gonum.org/v1/plot"} {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}
