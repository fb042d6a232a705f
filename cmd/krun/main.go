// Command krun converts, runs and benchmarks Kimi Linear on CPUs.
package main

import (
	"os"

	"github.com/ktune/ktune/cli/krun"
)

func main() { os.Exit(krun.Main(os.Args[1:], os.Stdout, os.Stderr)) }
