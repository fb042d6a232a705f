package pool

import (
	"runtime"
	"testing"

	"github.com/ktune/ktune/internal/cpu"
)

func TestMemPolicies(t *testing.T) {
	one := []cpu.Node{{ID: 0, CPUs: []int{0, 1}}}
	two := []cpu.Node{{ID: 0, CPUs: []int{0, 1}}, {ID: 1, CPUs: []int{2, 3}}}
	if ps := MemPolicies(one); len(ps) != 0 {
		t.Errorf("one node: %v, want nothing to tune", ps)
	}
	if ps := MemPolicies(two); len(ps) != 3 || ps[0] != MemLocal {
		t.Errorf("two nodes: %v", ps)
	}
	for _, p := range MemPolicies(two) {
		q, err := ParseMemPolicy(p.String())
		if err != nil || q != p {
			t.Errorf("%v: round trip %v %v", p, q, err)
		}
	}
	if _, err := ParseMemPolicy("spread"); err == nil {
		t.Error("bad policy name accepted")
	}
	// on one node SetMemPolicy is a no-op; the real call on the machine's
	// own node 0 must succeed for local (and be restored)
	if err := SetMemPolicy(MemInterleave, one); err != nil {
		t.Error(err)
	}
	if runtime.GOOS == "linux" {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		node0 := []cpu.Node{{ID: 0}, {ID: 0}}
		for _, p := range []MemPolicy{MemBind, MemInterleave, MemLocal} {
			if err := SetMemPolicy(p, node0); err != nil {
				t.Errorf("%v on node 0: %v", p, err)
			}
		}
	}
}
