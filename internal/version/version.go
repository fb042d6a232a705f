// Package version reports which ktune build is running: the module version
// when built from a tagged module, else the VCS revision (with "+dirty"
// for a modified tree), else "devel".
package version

import (
	"runtime"
	"runtime/debug"
	"sync"
)

var (
	once sync.Once
	ver  string
)

// String returns the ktune version.
func String() string {
	once.Do(func() {
		ver = "devel"
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			ver = v
			return
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			ver = "devel-" + rev + dirty
		}
	})
	return ver
}

// Go returns the Go version the binary was built with.
func Go() string { return runtime.Version() }
