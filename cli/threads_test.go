package cli

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestThreadList(t *testing.T) {
	defer func(f func() int) { usableCPUs = f }(usableCPUs)
	usableCPUs = func() int { return 2 }
	for _, tc := range []struct {
		in      string
		want    []int
		warn    bool
		errPart string
	}{
		{"", []int{1, 2}, false, ""}, // the default
		{"1", []int{1}, false, ""},
		{"2,1,2", []int{1, 2}, false, ""},
		{"1-2", []int{1, 2}, false, ""},
		{"1000", []int{2}, true, ""},                // one count above: clamped, warned
		{"100000000", []int{2}, true, ""},           // no allocation by the count
		{"9223372036854775807", []int{2}, true, ""}, // no loop to the largest int
		{"5,5", []int{2}, true, ""},
		{"1,9223372036854775807", nil, false, "above the 2 usable CPUs"},
		{"1,2,64", nil, false, "64 above the 2 usable CPUs"},
		{"4,8", nil, false, "4,8 above the 2 usable CPUs"},
		{"1-1000000", nil, false, "1-1000000 goes past the 2 usable CPUs"},
		{"0", nil, false, "bad thread count"},
		{"-1", nil, false, "bad thread count"},
		{"2-1", nil, false, "bad thread count"},
		{"abc", nil, false, "bad thread count"},
		{",", nil, false, "an empty thread count"},
		{"1,,2", nil, false, `an empty thread count in "1,,2"`},
		{"1,2,", nil, false, "an empty thread count"},
	} {
		var w bytes.Buffer
		got, err := ThreadList(&w, "--threads", tc.in, []int{1, 2})
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) || ExitCode(err) != 2 {
				t.Errorf("%q: err %v (exit %d), want %q with exit 2", tc.in, err, ExitCode(err), tc.errPart)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if warned := strings.Contains(w.String(), "warning"); warned != tc.warn {
			t.Errorf("%q: warning %q, want one: %v", tc.in, w.String(), tc.warn)
		}
	}
}

func TestThreadCount(t *testing.T) {
	defer func(f func() int) { usableCPUs = f }(usableCPUs)
	usableCPUs = func() int { return 3 }
	for _, tc := range []struct{ in, want int }{{0, 3}, {1, 1}, {3, 3}, {4, 3}, {1 << 40, 3}, {math.MaxInt, 3}} {
		var w bytes.Buffer
		if got, err := ThreadCount(&w, "-t", tc.in); got != tc.want || err != nil {
			t.Errorf("%d: %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if warned := w.Len() > 0; warned != (tc.in > 3) {
			t.Errorf("%d: warning %q", tc.in, w.String())
		}
	}
	if _, err := ThreadCount(io.Discard, "-t", -5); ExitCode(err) != 2 {
		t.Errorf("-t -5: %v (exit %d), want a usage error", err, ExitCode(err))
	}
}
