//go:build !unix

package cpu

import "errors"

func mkfifo(p string) error { return errors.New("no FIFOs on this OS") }
