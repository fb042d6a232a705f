package pool

import (
	"fmt"

	"github.com/ktune/ktune/internal/cpu"
)

// MemPolicy is a NUMA memory policy for the pages a process touches next.
type MemPolicy int

const (
	// MemLocal allocates on the node of the touching thread (the default).
	MemLocal MemPolicy = iota
	// MemInterleave spreads pages round-robin over the nodes.
	MemInterleave
	// MemBind allocates only on the first node.
	MemBind
)

var memPolicyNames = []string{"local", "interleave", "bind"}

func (p MemPolicy) String() string {
	if int(p) < len(memPolicyNames) {
		return memPolicyNames[p]
	}
	return fmt.Sprintf("mempolicy(%d)", int(p))
}

// ParseMemPolicy reads a policy name.
func ParseMemPolicy(s string) (MemPolicy, error) {
	for i, n := range memPolicyNames {
		if n == s {
			return MemPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown memory policy %q (local, interleave, bind)", s)
}

// MemPolicies lists the policies worth comparing on a topology: none on
// one node (there is nothing to choose), else local, interleave and bind.
func MemPolicies(nodes []cpu.Node) []MemPolicy {
	if len(nodes) < 2 {
		return nil
	}
	return []MemPolicy{MemLocal, MemInterleave, MemBind}
}

// SetMemPolicy applies p for the calling thread's future allocations over
// nodes (set_mempolicy on Linux; an error elsewhere). Callers lock the OS
// thread around the allocations it should govern.
func SetMemPolicy(p MemPolicy, nodes []cpu.Node) error {
	if len(nodes) < 2 {
		return nil
	}
	var mask uint64
	for _, n := range nodes {
		if n.ID < 64 {
			mask |= 1 << n.ID
		}
	}
	switch p {
	case MemLocal:
		return setMemPolicy(mpolDefault, 0)
	case MemInterleave:
		return setMemPolicy(mpolInterleave, mask)
	case MemBind:
		return setMemPolicy(mpolBind, 1<<nodes[0].ID)
	}
	return fmt.Errorf("pool: unknown memory policy %d", p)
}

// Linux's MPOL_* modes.
const (
	mpolDefault    = 0
	mpolBind       = 2
	mpolInterleave = 3
)
