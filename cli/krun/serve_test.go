package krun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/cli/clitest"
	"github.com/ktune/ktune/internal/golden"
)

// TestServeFlags: the flags' defaults and values reach the options.
func TestServeFlags(t *testing.T) {
	var got *ServeOptions
	capture := func(o *ServeOptions) error { got = o; return nil }
	cmd := NewCmdServe(&cli.Factory{Out: io.Discard, Err: io.Discard}, capture)
	cmd.SetArgs([]string{"m.kt"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Host != "127.0.0.1" || got.Port != 8080 || got.Parallel != 4 || got.Ctx != 0 || got.mem != 1<<30 || got.CacheDType != "bf16" {
		t.Errorf("defaults: %+v", got)
	}
	cmd = NewCmdServe(&cli.Factory{Out: io.Discard, Err: io.Discard}, capture)
	cmd.SetArgs([]string{"m.kt", "--host", "0.0.0.0", "--port", "9000", "--parallel", "8", "--ctx", "2048", "--api-key", "k",
		"--cache-mem", "512MiB", "-t", "3", "--dtype", "q8", "--cache-dtype", "q8", "--alias", "kimi"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Host != "0.0.0.0" || got.Port != 9000 || got.Parallel != 8 || got.Ctx != 2048 || got.APIKey != "k" || got.mem != 512<<20 ||
		got.Threads != 3 || got.DType != "q8" || !got.set["dtype"] || got.CacheDType != "q8" || got.Alias != "kimi" {
		t.Errorf("flags: %+v", got)
	}
	cmd = NewCmdServe(&cli.Factory{Out: io.Discard, Err: io.Discard}, capture)
	cmd.SetArgs([]string{"m.kt", "--host", "[::1]"})
	if err := cmd.Execute(); err != nil || got.Host != "::1" {
		t.Errorf("--host [::1]: %q, %v; want ::1", got.Host, err)
	}
	for _, c := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"1024", 1024}, {"2KiB", 2048}, {"1.5GiB", 3 << 29}, {"3m", 3 << 20}, {"1 GB", 1 << 30}} {
		if n, err := parseBytes(c.in); err != nil || n != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, n, err, c.want)
		}
	}
}

// TestServeProbes: bad flags and bad models fail at once with exit code 2
// and one error line, binding nothing (--port 0 where a listen could
// happen) and leaving no file.
func TestServeProbes(t *testing.T) {
	tiny := tinyDir(t)
	ckpt := func(t testing.TB, dir string) { copyTiny(t, tiny, dir, "m") }
	busy, err := net.Listen("tcp", "127.0.0.1:0") // a port another server holds
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	srv := func(args ...string) []string { return append([]string{"serve", "{dir}/m", "--port", "0"}, args...) }
	probes := []clitest.Probe{
		{Name: "serve/no-model", Args: []string{"serve"}, Code: 2, Err: "accepts 1 arg"},
		{Name: "serve/unknown-flag", Setup: ckpt, Args: srv("--frobnicate"), Code: 2, Err: "unknown flag"},
		{Name: "serve/port-negative", Setup: ckpt, Args: srv("--port", "-1"), Code: 2, Err: "--port -1"},
		{Name: "serve/port-too-big", Setup: ckpt, Args: srv("--port", "70000"), Code: 2, Err: "--port 70000"},
		{Name: "serve/port-not-a-number", Setup: ckpt, Args: srv("--port", "http"), Code: 2, Err: "--port"},
		{Name: "serve/host-empty", Setup: ckpt, Args: srv("--host", ""), Code: 2, Err: "--host"},
		{Name: "serve/port-in-use", Setup: ckpt, Args: srv("--port", busyPort), Code: 2, Err: "--port " + busyPort + ": 127.0.0.1:" + busyPort + " is in use"},
		{Name: "serve/host-not-here", Setup: ckpt, Args: srv("--host", "192.0.2.1"), Code: 2, Err: "--host 192.0.2.1 is not an address of this machine"},
		{Name: "serve/parallel-0", Setup: ckpt, Args: srv("--parallel", "0"), Code: 2, Err: "--parallel 0"},
		{Name: "serve/ctx-negative", Setup: ckpt, Args: srv("--ctx", "-5"), Code: 2, Err: "--ctx -5"},
		{Name: "serve/ctx-over-model", Setup: ckpt, Args: srv("--ctx", "5000"), Code: 2, Err: "maximum length 4096"},
		{Name: "serve/queue-0", Setup: ckpt, Args: srv("--queue", "0"), Code: 2, Err: "--queue 0"},
		{Name: "serve/prefill-chunk-0", Setup: ckpt, Args: srv("--prefill-chunk", "0"), Code: 2, Err: "--prefill-chunk 0"},
		{Name: "serve/cache-mem-words", Setup: ckpt, Args: srv("--cache-mem", "lots"), Code: 2, Err: "--cache-mem"},
		{Name: "serve/cache-mem-unit", Setup: ckpt, Args: srv("--cache-mem", "3PB"), Code: 2, Err: "unknown unit"},
		{Name: "serve/cache-mem-negative", Setup: ckpt, Args: srv("--cache-mem", "-1GiB"), Code: 2, Err: "--cache-mem"},
		{Name: "serve/cache-dtype", Setup: ckpt, Args: srv("--cache-dtype", "f16"), Code: 2, Err: "--cache-dtype"},
		{Name: "serve/dtype", Setup: ckpt, Args: srv("--dtype", "q7"), Code: 2, Err: "unknown preset"},
		{Name: "serve/threads-negative", Setup: ckpt, Args: srv("-t", "-2"), Code: 2, Err: "-t"},
		{Name: "serve/missing-model", Args: []string{"serve", "{dir}/none", "--port", "0"}, Code: 2, Check: missingModel("none")},
		{Name: "serve/missing-model-kt", Args: []string{"serve", "{dir}/none.kt", "--port", "0"}, Code: 2, Check: missingModel("none.kt")},
		{Name: "serve/folder-without-config", Setup: func(t testing.TB, dir string) { os.Mkdir(filepath.Join(dir, "m"), 0o755) },
			Args: srv(), Code: 2, Err: "config.json"},
		{Name: "serve/tokenizer-missing", Setup: ckpt, Args: srv("--tokenizer", "{dir}/tok"), Code: 2, Err: "tiktoken.model"},
		{Name: "serve/truncated-weights", Setup: func(t testing.TB, dir string) {
			p := filepath.Join(copyTiny(t, tiny, dir, "m"), "model.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, Args: srv(), Code: 2, Err: "model.safetensors", Check: func(t testing.TB, dir, stdout, stderr string) {
			if strings.Contains(stdout, "finishing running requests") {
				t.Errorf("a failed load says it finishes running requests:\n%s", stdout)
			}
		}},
	}
	clitest.Run(t, Main, probes)
}

// TestServeRun: krun serve on a copy of the tiny model answers /health,
// a greedy completion of the golden prompt ids with the golden ids, and
// /metrics, then stops when its context ends.
func TestServeRun(t *testing.T) {
	g := golden.Load(t, golden.TinyModel)[0]
	t.Run("checkpoint", func(t *testing.T) {
		serveRun(t, g, copyTiny(t, g.Dir(), t.TempDir(), "tiny"), "no tokenizer")
	})
	// the same model as a GGUF file run in place (the golden folder's F32
	// one: the same greedy ids), with its placeholder vocabulary
	t.Run("gguf", func(t *testing.T) {
		f32, _ := goldenGGUF(t)
		serveRun(t, tinyModelCase(t), f32, "no tokenizer")
	})
}

// serveRun serves model (g's weights) and checks a completion's greedy ids
// against g's, /health, /metrics and /v1/models, the stop, and (unless
// empty) a warning.
func serveRun(t *testing.T, g *golden.File, dir, warning string) {
	in, gen := g.I64(t, "input_ids"), g.I64(t, "generated_ids")
	T, n := g.Dims(t, "input_ids")[1], g.Dims(t, "generated_ids")[1]

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	var out, errb bytes.Buffer
	f := &cli.Factory{Out: &out, Err: &errb}
	cmd := NewCmdServe(f, func(o *ServeOptions) error {
		o.ctx, o.ready = ctx, func(url string) { urls <- url }
		return runServe(o)
	})
	cmd.SetArgs([]string{dir, "--port", "0", "-t", "2", "--alias", "tiny"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not become ready")
	}

	get := func(path string) (int, string) {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := get("/health"); st != 200 || !strings.Contains(b, `"ok"`) {
		t.Errorf("/health: %d %s", st, b)
	}
	body, _ := json.Marshal(map[string]any{"model": "tiny", "prompt": in[:T], "max_tokens": n, "temperature": 0, "ignore_eos": true})
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Choices []struct {
			TokenIDs []int64 `json:"token_ids"`
		} `json:"choices"`
	}
	json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	if len(c.Choices) != 1 || !slices.Equal(c.Choices[0].TokenIDs, gen[:n]) {
		t.Errorf("completion: %+v; golden %v", c, gen[:n])
	}
	if st, b := get("/metrics"); st != 200 || !strings.Contains(b, `ktune_completion_tokens_total `+fmt.Sprint(n)) {
		t.Errorf("/metrics: %d\n%s", st, b)
	}
	if st, b := get("/v1/models"); st != 200 || !strings.Contains(b, `"tiny"`) {
		t.Errorf("/v1/models: %d %s", st, b)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if s := out.String(); !strings.Contains(s, "listening on "+url) || !strings.Contains(s, "stopped") {
		t.Errorf("stdout:\n%s", s)
	}
	if !strings.Contains(errb.String(), warning) {
		t.Errorf("no warning %q:\n%s", warning, errb.String())
	}
}

// TestServeStopWhileLoading: a signal during the load stops the server
// once the model is loaded, without starting it (it never says ready).
func TestServeStopWhileLoading(t *testing.T) {
	g := golden.Load(t, golden.TinyModel)[0]
	dir := copyTiny(t, g.Dir(), t.TempDir(), "tiny")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came before the load ended
	var out, errb bytes.Buffer
	cmd := NewCmdServe(&cli.Factory{Out: &out, Err: &errb}, func(o *ServeOptions) error {
		o.ctx, o.ready = ctx, func(string) { t.Error("ready after a stop") }
		return runServe(o)
	})
	cmd.SetArgs([]string{dir, "--port", "0", "-t", "1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if s := out.String(); strings.Contains(s, "ready") || !strings.Contains(s, "stopped") {
		t.Errorf("stdout:\n%s", s)
	}
}
