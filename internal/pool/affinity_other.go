//go:build !linux

package pool

import "github.com/ktune/ktune/internal/cpu"

// pinThread is a no-op where ktune does not support affinity.
func pinThread(c int) error { return nil }

func cpuOrders() (compact, spread []int) { return nil, nil }

// Orders: see the Linux version; without affinity there is nothing to order.
func Orders(nodes []cpu.Node, physical int, ok func(int) bool) (compact, spread []int) {
	return nil, nil
}
