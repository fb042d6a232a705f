// Command ktune tunes Kimi Linear's CPU kernels for this machine.
package main

import (
	"os"

	"github.com/ktune/ktune/cli/ktune"
)

func main() { os.Exit(ktune.Main(os.Args[1:], os.Stdout, os.Stderr)) }
