package reports

import (
	"bytes"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestServePlot(t *testing.T) {
	nan := math.NaN()
	series := []ServeSeries{
		{Name: "krun", Clients: []int{1, 2, 4, 8}, AggTokPerSec: []float64{10, 19, 35, nan}, TTFTP99: []float64{200, 260, 400, nan}},
		{Name: "llama-server", Clients: []int{1, 2, 4, 8}, AggTokPerSec: []float64{12, 20, 30, 38}, TTFTP99: []float64{150, 300, 700, 1500}},
		{Name: "all failed", Clients: []int{1}, AggTokPerSec: []float64{nan}, TTFTP99: []float64{nan}},
	}
	dir := t.TempDir()
	for _, name := range []string{"serve.svg", "serve.png", "serve.pdf"} {
		p := filepath.Join(dir, name)
		if err := WriteServePlot(p, "prompt 512, gen 128", series); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		if name == "serve.svg" {
			if err := xml.Unmarshal(b, new(struct{})); err != nil {
				t.Errorf("SVG does not parse: %v", err)
			}
			for _, want := range []string{"krun", "llama-server", "TTFT p99 (ms)", "output tokens/s", "concurrent clients"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("SVG lacks %q", want)
				}
			}
		}
	}
	for _, bad := range [][]ServeSeries{nil, {{Name: "x", Clients: []int{1, 2}, AggTokPerSec: []float64{1}, TTFTP99: []float64{1, 2}}},
		{{Name: "x", Clients: []int{0}, AggTokPerSec: []float64{1}, TTFTP99: []float64{1}}}} {
		if _, _, err := ServePlots("", bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if err := WriteServePlot(filepath.Join(dir, "noext"), "", series); err == nil {
		t.Error("a path without an extension: no error")
	}
	if err := WriteServePlot(filepath.Join(dir, "x.bmp"), "", series); err == nil {
		t.Error("an unknown format: no error")
	}
}
