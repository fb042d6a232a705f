// Package haproxy_test runs the README's scale-out recipe: krun serve
// replicas behind HAProxy (haproxy.cfg in this folder, its ports changed),
// on the tiny golden model, while replicas are killed, drained and
// restarted.
package haproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ktune/ktune/cli/krun"
	"github.com/ktune/ktune/internal/arch"
	"github.com/ktune/ktune/internal/golden"
	"github.com/ktune/ktune/internal/testexec"
)

// TestMain runs krun instead of the tests when a test starts this binary
// as a replica.
func TestMain(m *testing.M) {
	if os.Getenv("KTUNE_FLEET_REPLICA") == "1" {
		os.Exit(krun.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// replica is one krun serve process.
type replica struct {
	name string
	port int
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error // the process's exit
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fleetScale is what TestFleet runs: the tiny golden model by default;
// KTUNE_FLEET_MODEL (a model file or folder), KTUNE_FLEET_GEN (tokens per
// request) and KTUNE_FLEET_THREADS (per replica) run it on a real model,
// with its waits (KTUNE_FLEET_WAIT, a duration) stretched to match.
// KTUNE_FLEET_MATCH=first compares only the first token with the one the
// prompt gets alone (and the count of all): a batched decode step is not
// bit-identical to a lone one (its kernels run several rows), and on a
// model whose router scores are nearly tied (random weights) that flips
// an expert and then the greedy tokens.
type fleetScale struct {
	model        string // "" the tiny golden model
	gen, threads int
	wait         time.Duration // a replica's load, a request, a phase of the run
	firstOnly    bool          // compare the first token only (KTUNE_FLEET_MATCH=first)
	vocab        int           // prompt ids are 1..vocab-1
}

func scaleFromEnv(t *testing.T) fleetScale {
	sc := fleetScale{gen: 48, threads: 1, wait: 60 * time.Second, model: os.Getenv("KTUNE_FLEET_MODEL")}
	num := func(name string, v *int) {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive number", name, s)
			}
			*v = n
		}
	}
	switch m := os.Getenv("KTUNE_FLEET_MATCH"); m {
	case "", "all":
	case "first":
		sc.firstOnly = true
	default:
		t.Fatalf("KTUNE_FLEET_MATCH=%q: want all or first", m)
	}
	num("KTUNE_FLEET_GEN", &sc.gen)
	num("KTUNE_FLEET_THREADS", &sc.threads)
	if s := os.Getenv("KTUNE_FLEET_WAIT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("KTUNE_FLEET_WAIT=%q: want a duration", s)
		}
		sc.wait = d
	}
	return sc
}

// matches reports whether a completion's ids are the ones its prompt gets
// alone (all of them, or the first and the count).
func (sc fleetScale) matches(got, alone []int32) bool {
	if sc.firstOnly {
		return len(got) == len(alone) && len(got) > 0 && got[0] == alone[0]
	}
	return slices.Equal(got, alone)
}

// start runs the replica (again) and waits for /ready.
func (r *replica) start(t *testing.T, dir string, sc fleetScale) {
	t.Helper()
	r.cmd = testexec.Self("serve", dir, "--port", strconv.Itoa(r.port), "--parallel", "4", "--threads", strconv.Itoa(sc.threads),
		"--grace", "20s", "--drain-delay", "1s")
	r.cmd.Env = append(os.Environ(), "KTUNE_FLEET_REPLICA=1")
	r.out = &lockedBuffer{}
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.done = make(chan error, 1)
	go func(c *exec.Cmd, done chan error) { done <- c.Wait() }(r.cmd, r.done)
	url := fmt.Sprintf("http://127.0.0.1:%d/ready", r.port)
	for deadline := time.Now().Add(sc.wait); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-r.done:
			t.Fatalf("replica %s exited (%v) before it was ready:\n%s", r.name, err, r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not ready after %s:\n%s", r.name, sc.wait, r.out.String())
		}
	}
}

// outcome is what one attempt of a request got.
type outcome int

const (
	ok      outcome = iota // the tokens it gets alone
	refused                // an error status with an error body: retry
	cut                    // the stream or connection ended early: retry
	wrong                  // an answer with other tokens: a defect
	hung                   // no end within the timeout: a defect
)

var outcomeNames = [...]string{"completed", "refused (error status)", "cut (stream ended early)", "WRONG tokens", "HUNG"}

// completion posts prompt through url and returns the generated ids, the
// replica that answered (X-Ktune-Replica) and the outcome.
func completion(url string, prompt []int32, n int, stream bool, timeout time.Duration) ([]int32, string, outcome, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": n, "ignore_eos": true, "temperature": 0, "stream": stream})
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", hung, err.Error()
		}
		return nil, "", cut, err.Error()
	}
	defer resp.Body.Close()
	who := resp.Header.Get("X-Ktune-Replica")
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
			if ctx.Err() != nil {
				return nil, who, hung, "timeout"
			}
			return nil, who, refused, fmt.Sprintf("%d without an error body: %q", resp.StatusCode, b)
		}
		return nil, who, refused, fmt.Sprintf("%d %s", resp.StatusCode, e.Error.Message)
	}
	type choice struct {
		TokenIDs     []int32 `json:"token_ids"`
		FinishReason *string `json:"finish_reason"`
	}
	var ids []int32
	finished := false
	if !stream {
		var r struct{ Choices []choice }
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Choices) != 1 {
			if ctx.Err() != nil {
				return nil, who, hung, "timeout"
			}
			return nil, who, cut, fmt.Sprintf("body: %v", err)
		}
		return r.Choices[0].TokenIDs, who, ok, ""
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, found := strings.CutPrefix(sc.Text(), "data: ")
		if !found {
			continue
		}
		if line == "[DONE]" {
			if !finished {
				return ids, who, wrong, "[DONE] without a finish_reason"
			}
			return ids, who, ok, ""
		}
		var ev struct {
			Choices []choice
			Error   *struct{ Message string }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			return ids, who, wrong, fmt.Sprintf("event %q: %v", line, err)
		}
		if ev.Error != nil {
			return ids, who, refused, "error event: " + ev.Error.Message
		}
		for _, c := range ev.Choices {
			ids = append(ids, c.TokenIDs...)
			finished = finished || c.FinishReason != nil
		}
	}
	if ctx.Err() != nil {
		return ids, who, hung, "timeout"
	}
	return ids, who, cut, fmt.Sprintf("stream ended without [DONE] after %d tokens (%v)", len(ids), sc.Err())
}

// haproxyStatus reads each server's status from HAProxy's CSV stats.
func haproxyStatus(statsURL string) (map[string]string, error) {
	resp, err := http.Get(statsURL + ";csv")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("# ")))).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("stats %q: %v", b, err)
	}
	col := slices.Index(rows[0], "status")
	if col < 0 {
		return nil, fmt.Errorf("stats without a status column: %q", rows[0])
	}
	st := map[string]string{}
	for _, r := range rows[1:] {
		if len(r) > col && r[0] == "krun" {
			st[r[1]] = r[col]
		}
	}
	return st, nil
}

// TestFleet: three replicas behind HAProxy with the shipped haproxy.cfg; 24
// clients send 300 completions (streamed and not), each of which must end
// with the tokens its prompt gets alone or with an error the client can
// retry (it does, up to 3 attempts), never wrong and never hung, while one
// replica is killed (SIGKILL), another is sent SIGTERM (it must drain:
// HAProxy takes it out by its /ready 503, none of its requests fails, it
// exits 0) and the killed one is restarted (HAProxy takes it back by
// itself). It needs haproxy (skipped without it unless
// KTUNE_REQUIRE_HAPROXY=1).
func TestFleet(t *testing.T) {
	hap, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("KTUNE_REQUIRE_HAPROXY") == "1" {
			t.Fatal("KTUNE_REQUIRE_HAPROXY=1 and no haproxy on PATH")
		}
		t.Skip("no haproxy on PATH (apt-get install haproxy)")
	}
	if testing.Short() {
		t.Skip("starts processes for seconds")
	}
	// ---- the tiny model, copied (or the one KTUNE_FLEET_MODEL names)
	sc := scaleFromEnv(t)
	dir := sc.model
	sc.vocab = 501 // a real model's vocabulary holds ids 1..500
	if dir == "" {
		f := golden.Load(t, golden.TinyModel)[0]
		dir = t.TempDir()
		for _, name := range []string{"config.json", "model.safetensors"} {
			b, err := os.ReadFile(filepath.Join(f.Dir(), name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := arch.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		sc.vocab = cfg.VocabSize
	}
	// ---- replicas, then HAProxy with the recipe's ports replaced
	reps := []*replica{{name: "r1"}, {name: "r2"}, {name: "r3"}}
	recipe, err := os.ReadFile("haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	conf := string(recipe)
	front, stats := freePort(t), freePort(t)
	replace := func(old, new string) {
		if !strings.Contains(conf, old) {
			t.Fatalf("haproxy.cfg has no %q", old)
		}
		conf = strings.Replace(conf, old, new, 1)
	}
	for i, r := range reps {
		r.port = freePort(t)
		replace(fmt.Sprintf("server %s 127.0.0.1:%d", r.name, 8081+i), fmt.Sprintf("server %s 127.0.0.1:%d", r.name, r.port))
	}
	replace("bind 127.0.0.1:8080", fmt.Sprintf("bind 127.0.0.1:%d", front))
	replace("bind 127.0.0.1:8404", fmt.Sprintf("bind 127.0.0.1:%d", stats))
	for _, r := range reps {
		r.start(t, dir, sc)
	}
	defer func() {
		for _, r := range reps {
			if r.cmd != nil && r.cmd.ProcessState == nil {
				r.cmd.Process.Kill()
				<-r.done
			}
		}
	}()
	cfgPath := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	hlog := &lockedBuffer{}
	hp := exec.Command(hap, "-db", "-f", cfgPath)
	hp.Stdout, hp.Stderr = hlog, hlog
	if err := hp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { hp.Process.Kill(); hp.Wait() }()
	statsURL := fmt.Sprintf("http://127.0.0.1:%d/stats", stats)
	waitStatus := func(name, want string, within time.Duration) {
		t.Helper()
		var st map[string]string
		for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
			st, err = haproxyStatus(statsURL)
			if err == nil && strings.HasPrefix(st[name], want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("HAProxy's %s is %q (%v) after %s; want %s\nHAProxy:\n%s", name, st[name], err, within, want, hlog.String())
			}
		}
	}
	for _, r := range reps {
		waitStatus(r.name, "UP", 15*time.Second)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", front)

	// ---- what each prompt gets alone, from one replica directly
	const clients, total = 24, 300
	gen := sc.gen
	prompts := make([][]int32, clients)
	want := make([][]int32, clients)
	for i := range prompts {
		for j := range 3 + i%9 {
			prompts[i] = append(prompts[i], int32(1+(i*131+j*17)%(sc.vocab-1)))
		}
		ids, _, o, msg := completion(fmt.Sprintf("http://127.0.0.1:%d", reps[2].port), prompts[i], gen, false, sc.wait)
		if o != ok || len(ids) != gen {
			t.Fatalf("prompt %d alone: %s %s (%d tokens)", i, outcomeNames[o], msg, len(ids))
		}
		want[i] = ids
	}

	// ---- the load, and the faults at fixed points of it
	var (
		next, completed atomic.Int64
		mu              sync.Mutex
		counts          [len(outcomeNames)]int
		firstTry        [len(outcomeNames)]int
		failedBy        = map[string]int{} // replica that answered a failed attempt
		refusedBy       = map[string]int{} // of those, refused at admission by a draining replica (a retryable 503)
		servedBy        = map[string]int{}
		messages        []string
		gaveUp          int
	)
	var restartedAt time.Time
	afterRestart := map[string]int{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				p := (i*7 + c) % clients
				for attempt := 0; ; attempt++ {
					ids, who, o, msg := completion(url, prompts[p], gen, i%2 == 0, sc.wait)
					if o == ok && !sc.matches(ids, want[p]) {
						o, msg = wrong, fmt.Sprintf("prompt %d via %s: %v; alone %v", p, who, ids, want[p])
					}
					mu.Lock()
					counts[o]++
					if attempt == 0 {
						firstTry[o]++
					}
					if o == ok {
						servedBy[who]++
						if !restartedAt.IsZero() {
							afterRestart[who]++
						}
					} else {
						failedBy[who]++
						if o == refused && msg == "503 the server is shutting down" { // refused at admission, not cut
							refusedBy[who]++
						}
						if len(messages) < 20 {
							messages = append(messages, fmt.Sprintf("request %d attempt %d via %q: %s: %s", i, attempt, who, outcomeNames[o], msg))
						}
					}
					mu.Unlock()
					if o == ok {
						completed.Add(1)
						break
					}
					if o == wrong || o == hung || attempt == 2 {
						mu.Lock()
						gaveUp++
						mu.Unlock()
						break
					}
					time.Sleep(100 * time.Millisecond) // as a client's retry would
				}
			}
		})
	}
	waitCompleted := func(n int64) {
		for deadline := time.Now().Add(sc.wait); completed.Load() < n && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
	}
	// r1: SIGKILL at 40 completed; restarted at once, it rejoins by
	// HAProxy's health check alone
	waitCompleted(40)
	reps[0].cmd.Process.Signal(syscall.SIGKILL)
	<-reps[0].done
	killedAt := completed.Load()
	waitStatus("r1", "DOWN", 15*time.Second)
	reps[0].start(t, dir, sc)
	waitStatus("r1", "UP", 15*time.Second)
	mu.Lock()
	restartedAt = time.Now()
	mu.Unlock()
	rejoinedAt := completed.Load()
	// r2: SIGTERM at 100 completed: it drains
	waitCompleted(100)
	termAt := time.Now()
	termedAt := completed.Load()
	reps[1].cmd.Process.Signal(syscall.SIGTERM)
	var termErr error
	select {
	case termErr = <-reps[1].done:
	case <-time.After(40 * time.Second):
		t.Errorf("r2 still runs 40 s after SIGTERM")
	}
	drained := time.Since(termAt)
	wg.Wait()

	// ---- the figures, then the checks
	t.Logf("%d requests from %d clients through HAProxy (3 replicas; r1 SIGKILL at %d completed, back at %d; r2 SIGTERM at %d): attempts %v",
		total, clients, killedAt, rejoinedAt, termedAt, counts)
	for o, n := range firstTry {
		t.Logf("  first attempts %-26s %d", outcomeNames[o], n)
	}
	t.Logf("  completed by replica %v (after r1's restart %v); failed attempts by replica %v; r2 drained in %s", servedBy, afterRestart, failedBy, drained.Round(time.Millisecond))
	for _, m := range messages {
		t.Log("  " + m)
	}
	if counts[wrong] > 0 || counts[hung] > 0 || gaveUp > 0 {
		t.Errorf("%d wrong, %d hung, %d given up after 3 attempts", counts[wrong], counts[hung], gaveUp)
	}
	if int(completed.Load()) != total {
		t.Errorf("%d of %d requests completed", completed.Load(), total)
	}
	var ee *exec.ExitError
	if termErr != nil && !(errors.As(termErr, &ee) && ee.ExitCode() == 0) {
		t.Errorf("r2 after SIGTERM: %v; want exit 0\n%s", termErr, reps[1].out.String())
	}
	if !strings.Contains(reps[1].out.String(), "draining") {
		t.Errorf("r2 did not drain:\n%s", reps[1].out.String())
	}
	// a drain cuts no request it took; a new one that reaches it in the
	// moment before HAProxy has seen its /ready 503 (HAProxy's retries of
	// a 503 go by leastconn, which favours the emptying replica) is refused
	// with a retryable 503, and the client's retry completes it: one or
	// two, where a /ready that never turns 503 leaves HAProxy sending
	// there for the whole drain (and fails the log check below)
	if cut := failedBy["r2"] - refusedBy["r2"]; cut > 0 {
		t.Errorf("%d attempts cut or failed on the draining replica r2; a drain fails none it took", cut)
	}
	if refusedBy["r2"] > 2 {
		t.Errorf("%d new requests refused by the draining replica r2; the balancer should have seen its /ready 503 after one or two", refusedBy["r2"])
	}
	hl := hlog.String()
	// HAProxy took r2 out by its readiness (a 503), before its port closed
	if !strings.Contains(hl, "server krun/r2 failed, reason: Layer7 wrong status, code: 503") {
		t.Errorf("HAProxy did not see r2's /ready 503 before it left")
	}
	// r1 rejoined and served again
	if rejoinedAt < total && afterRestart["r1"] == 0 {
		t.Errorf("r1 is UP again but served none of the %d requests left after its restart", total-rejoinedAt)
	}
	if t.Failed() {
		t.Logf("HAProxy:\n%s", hl)
	}
}
