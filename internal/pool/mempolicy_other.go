//go:build !linux

package pool

import "fmt"

func setMemPolicy(mode int, mask uint64) error {
	return fmt.Errorf("memory policies need Linux")
}
