//go:build !linux && !darwin

package model

import "errors"

// mlock is not available here.
func mlock(b []byte) error { return errors.New("mlock: not supported on this platform") }
