package moe

import (
	"testing"

	"github.com/ktune/ktune/internal/kernel"
)

// TestProblemReshape: a reshaped block problem holds the same block
// (shared) at another token count, with activations and an output of its
// own; another expert count or width is refused.
func TestProblemReshape(t *testing.T) {
	s := kernel.MakeShape(blockKeys, 2, 8, 2, 64, 32)
	p, err := newProblem(s, kernel.Q4, 3)
	if err != nil {
		t.Fatal(err)
	}
	bp := p.(*problem)
	to := s.With("n", 5)
	q, ok := bp.Reshape(to, 9)
	if !ok {
		t.Fatal("reshape to another n refused")
	}
	c := q.(*problem)
	if c.b != bp.b || c.Shape().String() != to.String() || c.n != 5 || len(c.x) != 5*64 || len(c.y) != 5*64 {
		t.Errorf("reshaped: shape %s, n %d, %d x, %d y, block shared %v", c.Shape(), c.n, len(c.x), len(c.y), c.b == bp.b)
	}
	for _, bad := range []kernel.Shape{s.With("e", 16), s.With("c", 128), s.With("i", 64), s.With("k", 4)} {
		if _, ok := bp.Reshape(bad, 9); ok {
			t.Errorf("reshape to %s accepted", bad)
		}
	}
}
