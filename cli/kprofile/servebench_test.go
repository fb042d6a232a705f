package kprofile

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/reports/loadgen"
	"github.com/ktune/ktune/reports/loadgen/loadgentest"
)

func TestServeBenchFlags(t *testing.T) {
	t.Setenv("KRUN_API_KEY", "from-env")
	parse := func(args ...string) (*ServeBenchOptions, error) {
		var got *ServeBenchOptions
		cmd := NewCmdServeBench(&cli.Factory{}, func(o *ServeBenchOptions) error { got = o; return nil })
		cli.FlagErrors(cmd)
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		return got, cmd.Execute()
	}
	o, err := parse("--url", "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	want := ServeBenchOptions{URLs: []string{"http://127.0.0.1:8080"}, Names: []string{"127.0.0.1:8080"}, Clients: []int{1, 2, 4, 8, 16},
		Prompt: 512, Gen: 128, Requests: 2, Rounds: 1, APIKey: "from-env", Timeout: loadgen.DefaultTimeout, Format: "text", Seed: 1, Warmup: true, IDs: loadgen.DefaultIDs}
	if !equalOpts(*o, want) {
		t.Errorf("defaults: %+v\nwant %+v", *o, want)
	}
	o, err = parse("--url", "http://a:1", "--name", "krun", "--url", "http://b:2/v1", "--name", "llama", "-c", "1-16*2,3", "--prompt", "64",
		"--gen", "8", "--requests", "3", "--rounds", "2", "--model", "m", "--api-key", "", "--timeout", "30s", "--plot", filepath.Join(t.TempDir(), "p.svg"),
		"-o", "json", "--seed", "9", "--warmup=false", "--ids", "1-511")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Names, []string{"krun", "llama"}) || !slices.Equal(o.Clients, []int{1, 2, 3, 4, 8, 16}) || o.Prompt != 64 || o.Gen != 8 ||
		o.Requests != 3 || o.Rounds != 2 || o.Model != "m" || o.APIKey != "" || o.Timeout != 30*time.Second || o.Format != "json" || o.Seed != 9 || o.Warmup || o.IDs != (loadgen.IDRange{Lo: 1, Hi: 511}) {
		t.Errorf("parsed: %+v", *o)
	}
	o, _ = parse("--url", "http://h:1", "--url", "http://h:1")
	if !slices.Equal(o.Names, []string{"h:1", "h:1#2"}) {
		t.Errorf("default names of a URL given twice: %v", o.Names)
	}
	for _, tc := range []struct{ in string }{{"4-16+4"}, {" 2 , 1 "}} {
		if _, err := parse("--url", "http://h:1", "-c", tc.in); err != nil {
			t.Errorf("-c %q: %v", tc.in, err)
		}
	}
	for _, args := range [][]string{
		{}, {"--url", "localhost:8080"}, {"--url", "ftp://h"}, {"--url", "http://h:1", "--name", "a", "--name", "b"},
		{"--url", "http://h:1", "--url", "http://h:2", "--name", "a", "--name", "a"},
		{"--url", "http://h:1", "-c", "0"}, {"--url", "http://h:1", "-c", "1,,2"}, {"--url", "http://h:1", "-c", "8-2"},
		{"--url", "http://h:1", "-c", "1-8*1"}, {"--url", "http://h:1", "-c", "x"}, {"--url", "http://h:1", "-c", "99999"},
		{"--url", "http://h:1", "--prompt", "0"}, {"--url", "http://h:1", "--gen", "-1"}, {"--url", "http://h:1", "--rounds", "0"},
		{"--url", "http://h:1", "--timeout", "0s"}, {"--url", "http://h:1", "-o", "xml"}, {"--url", "http://h:1", "--plot", "x.txt"},
		{"--url", "http://h:1", "--plot", filepath.Join(t.TempDir(), "no", "x.svg")}, {"--url", "http://h:1", "extra"},
		{"--url", "http://h:1", "--ids", "5"}, {"--url", "http://h:1", "--ids", "9-2"}, {"--url", "http://h:1", "--ids", "-1-5"},
		{"--url", "http://h:1", "--ids", "a-b"},
	} {
		if _, err := parse(args...); cli.ExitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error", args, err, cli.ExitCode(err))
		}
	}
}

// TestServeBenchUnwritablePlot: a --plot folder that takes no file is
// refused before anything is measured (/proc refuses even root).
func TestServeBenchUnwritablePlot(t *testing.T) {
	if st, err := os.Stat("/proc/self"); err != nil || !st.IsDir() {
		t.Skip("no /proc")
	}
	ran := false
	cmd := NewCmdServeBench(&cli.Factory{}, func(*ServeBenchOptions) error { ran = true; return nil })
	cli.FlagErrors(cmd)
	cmd.SetArgs([]string{"--url", "http://h:1", "--plot", "/proc/x.svg"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); cli.ExitCode(err) != 2 || ran || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("--plot /proc/x.svg: %v (exit %d, ran %v); want a usage error before the run", err, cli.ExitCode(err), ran)
	}
}

func equalOpts(a, b ServeBenchOptions) bool {
	return slices.Equal(a.URLs, b.URLs) && slices.Equal(a.Names, b.Names) && slices.Equal(a.Clients, b.Clients) &&
		a.Prompt == b.Prompt && a.Gen == b.Gen && a.Requests == b.Requests && a.Rounds == b.Rounds && a.Model == b.Model &&
		a.APIKey == b.APIKey && a.Timeout == b.Timeout && a.Plot == b.Plot && a.Format == b.Format && a.Seed == b.Seed && a.Warmup == b.Warmup && a.IDs == b.IDs
}

func fakeServer(t *testing.T, s *loadgentest.Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestServeBenchRun measures two fake servers, one twice as slow per
// token, and checks the tables, the ratios, the alternation and the plot.
func TestServeBenchRun(t *testing.T) {
	fast := &loadgentest.Server{Model: "fast-model", First: 5 * time.Millisecond, Delay: 6 * time.Millisecond}
	slow := &loadgentest.Server{Model: "slow-model", First: 5 * time.Millisecond, Delay: 18 * time.Millisecond}
	a, b := fakeServer(t, fast), fakeServer(t, slow)
	dir := t.TempDir()
	plot := filepath.Join(dir, "serve.svg")
	base := []string{"serve-bench", "--url", a, "--name", "fast", "--url", b, "--name", "slow", "-c", "1,2", "--prompt", "8", "--gen", "6",
		"--requests", "1", "--api-key", "sekret"}

	out, errs, code := runKprofile(append(base, "--plot", plot, "--rounds", "2")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"server", "agg tok/s", "TTFT p99 ms", "ITL p50 ms", "fast", "slow", "2/0", "4/0",
		"agg tok/s fast/slow", "TTFT p99 fast/slow", "medians of 2 rounds"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "model fast-model") || !strings.Contains(errs, "wrote "+plot) {
		t.Errorf("stderr:\n%s", errs)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() < 1000 {
		t.Errorf("plot: %v", err)
	} else if b, _ := os.ReadFile(plot); !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("plot is not SVG")
	}
	// warm-up once per server, then rounds × levels × clients × requests
	for _, s := range []*loadgentest.Server{fast, slow} {
		rs := s.Requests()
		if len(rs) != 1+2*(1+2) {
			t.Errorf("%d requests, want 7", len(rs))
		}
		for _, r := range rs {
			if r.Auth != "Bearer sekret" || r.Model != s.Model || len(r.Prompt) != 8 || r.MaxTokens != 6 {
				t.Errorf("request %+v", r)
			}
		}
	}
	// both servers got the same prompts
	key := func(s *loadgentest.Server) []string {
		var ks []string
		for _, r := range s.Requests() {
			ks = append(ks, jsonString(r.Prompt))
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(key(fast), key(slow)) {
		t.Error("the servers got different prompts")
	}

	out, errs, code = runKprofile(append(base, "-o", "json", "--plot", filepath.Join(dir, "serve.png"))...)
	if code != 0 {
		t.Fatalf("json: exit %d\n%s%s", code, out, errs)
	}
	var doc struct {
		Levels []struct {
			Server  string
			Clients int
			OK      int
			Figures map[string]struct{ Median *float64 }
		}
		Ratios []struct {
			Clients int
			Ratios  map[string]struct{ Median *float64 }
		}
		Runs []struct{ Round int }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(doc.Levels) != 4 || len(doc.Ratios) != 2 || len(doc.Runs) != 4 {
		t.Fatalf("json: %s", out)
	}
	for _, r := range doc.Ratios {
		agg := r.Ratios["agg_tok_s"].Median
		if agg == nil || *agg < 1.3 || *agg > 5 { // planted (5+5·18)/(5+5·6) ≈ 2.7
			t.Errorf("clients %d: agg ratio fast/slow %v, want above 1", r.Clients, agg)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "serve.png")); err != nil || st.Size() < 1000 {
		t.Errorf("png plot: %v", err)
	}

	out, errs, code = runKprofile(append(base, "-o", "tsv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 1+4+1+1+2 || !strings.HasPrefix(lines[0], "server\tclients\trounds\tok\tfailed\tagg_tok_s\t") || lines[5] != "" {
		t.Errorf("tsv: exit %d\n%s%s", code, out, errs)
	}
	for _, l := range lines[1:5] {
		if n := len(strings.Split(l, "\t")); n != 5+3*len(serveMetrics) {
			t.Errorf("tsv line of %d cells: %q", n, l)
		}
	}

	out, _, code = runKprofile("serve-bench", "--url", a, "-c", "2", "--prompt", "8", "--gen", "4", "--requests", "1", "-o", "md")
	if code != 0 || !strings.Contains(out, "|") || strings.Contains(out, "fast/slow") {
		t.Errorf("md, one server: exit %d\n%s", code, out)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeBenchErrors: an unreachable server and a refused warm-up are
// usage errors naming the URL, before anything is measured; failed
// requests exit 1 after the table.
func TestServeBenchErrors(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	dead := ts.URL
	ts.Close()
	live := fakeServer(t, &loadgentest.Server{})
	plot := filepath.Join(t.TempDir(), "p.svg")
	out, errs, code := runKprofile("serve-bench", "--url", live, "--url", dead, "-c", "1", "--prompt", "4", "--gen", "2", "--plot", plot)
	if code != 2 || !strings.Contains(errs, "--url "+dead+": cannot reach the server") || strings.Count(strings.TrimSpace(errs), "\n") > 1 || out != "" {
		t.Errorf("dead server: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if _, err := os.Stat(plot); err == nil {
		t.Error("a plot was written")
	}

	refused := fakeServer(t, &loadgentest.Server{Status: http.StatusUnauthorized})
	_, errs, code = runKprofile("serve-bench", "--url", refused, "-c", "1", "--prompt", "4", "--gen", "2")
	if code != 2 || !strings.Contains(errs, refused) || !strings.Contains(errs, "HTTP 401") {
		t.Errorf("401 warm-up: exit %d\n%s", code, errs)
	}

	failing := fakeServer(t, &loadgentest.Server{CutAfter: 1})
	out, errs, code = runKprofile("serve-bench", "--url", failing, "-c", "1,2", "--prompt", "4", "--gen", "3", "--warmup=false", "--timeout", "2s")
	if code != 1 || !strings.Contains(out, "0/2") || !strings.Contains(errs, "6 of 6 requests failed") || !strings.Contains(errs, "after 1 tokens") {
		t.Errorf("failing server: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, " - ") {
		t.Errorf("a level with no success shows figures:\n%s", out)
	}
}

func TestParseClients(t *testing.T) {
	for in, want := range map[string][]int{"1,2,4,8,16": {1, 2, 4, 8, 16}, "1-16*2": {1, 2, 4, 8, 16}, "1-4": {1, 2, 3, 4},
		"4-16+4": {4, 8, 12, 16}, "3-20*3": {3, 9}, "8,1,8": {1, 8}} {
		got, err := parseClients(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
}
