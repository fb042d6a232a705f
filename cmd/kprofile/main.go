// Command kprofile compares ktune profiles and tracks benchmark regressions.
package main

import (
	"os"

	"github.com/ktune/ktune/cli/kprofile"
)

func main() { os.Exit(kprofile.Main(os.Args[1:], os.Stdout, os.Stderr)) }
