package krun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/internal/profile"
	"github.com/ktune/ktune/model"
	"github.com/ktune/ktune/model/serve"
	"time"
)

// ServeOptions are serve's flags.
type ServeOptions struct {
	*cli.Factory
	Model        string
	Host         string
	Port         int
	Parallel     int
	Ctx          int
	APIKey       string
	Alias        string
	Queue        int
	Grace        time.Duration // on SIGTERM, the running requests' time to finish
	DrainDelay   time.Duration // on SIGTERM, the least time /ready answers 503 before the port closes
	PrefillChunk int
	Threads      int
	CacheMem     string
	DType        string
	CacheDType   string
	CacheSpill   string
	Tokenizer    string
	GGUFRepack   string
	NoVerify     bool
	Load         string

	set   map[string]bool  // flags given on the command line
	ctx   context.Context  // tests: ends the server (default: SIGINT or SIGTERM)
	ready func(url string) // tests: called once the model is loaded
	mem   int64            // --cache-mem, parsed
}

// NewCmdServe builds `krun serve`.
func NewCmdServe(f *cli.Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "serve MODEL",
		Short: "Serve the OpenAI API (chat and completions) over HTTP",
		Long: cli.Doc(`
			Serve MODEL — a .kt model file, a GGUF file, or a Hugging Face
			checkpoint folder converted on the fly into --dtype's formats — over
			the OpenAI HTTP API, for chat UIs, editor plugins and scripts:
			POST /v1/chat/completions and /v1/completions (with "stream": true,
			server-sent events), GET /v1/models, GET /health (liveness: 503
			"loading" until the model is loaded, then 200 "ok", "draining" while
			draining), GET /ready (readiness for a balancer or Kubernetes: 200
			only while requests are admitted) and GET /metrics (Prometheus:
			counters, gauges of waiting and running requests and state-cache
			use, histograms of time to first token, inter-token latency, queue
			time and request duration).

			Requests are batched continuously: up to --parallel sequences decode
			together, one token each per step; a new prompt is prefilled
			--prefill-chunk tokens per step between the others' tokens; more
			requests wait in a queue of --queue, and beyond it get 503. A prompt
			and its completion hold at most --ctx tokens (default the model's
			maximum length, at most 4096; the memory check budgets --parallel
			sequences of --ctx tokens).

			A prefix cache keeps the model's state at the end of each prompt (and
			of each finished conversation) within --cache-mem bytes, so that a
			chat's next turn prefills only its new tokens; usage reports them as
			prompt_tokens_details.cached_tokens.

			The tokenizer (tiktoken.model, tokenizer_config.json) is read from
			--tokenizer, else from a GGUF file or MODEL's folder; without one the
			server takes prompts as token ids only (/v1/completions with "prompt":
			[1, 2, 3]) and answers with token_ids. Extensions to the OpenAI
			request: top_k, min_p, repetition_penalty, ignore_eos,
			return_token_ids.

			The server listens on 127.0.0.1 unless --host says otherwise; with
			--api-key (default $KRUN_API_KEY) every request but /health and
			/ready must carry "Authorization: Bearer KEY".
			SIGINT or SIGTERM drain it: /ready answers 503 at once and new
			requests get 503 with Retry-After (a balancer sends them elsewhere),
			the requests already taken run to their end for up to --grace, the
			rest are cancelled (a stream ends with an error event), then, no
			sooner than --drain-delay after the signal, it exits; a second
			signal ends it at once.
		`) + exitCodes,
		Example: "  krun serve kimi-q4.kt --parallel 4\n" +
			"  krun serve ./tiny --port 0 --ctx 2048\n" +
			"  curl -s localhost:8080/v1/chat/completions -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}'",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Model = args[0]
			opts.set = map[string]bool{"dtype": cmd.Flags().Changed("dtype")}
			if err := opts.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runServe(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Host, "host", "127.0.0.1", "address to listen on (0.0.0.0: every interface)")
	fl.IntVar(&opts.Port, "port", 8080, "port to listen on (0: any free port, printed)")
	fl.IntVar(&opts.Parallel, "parallel", 4, "most sequences decoding at once")
	fl.IntVar(&opts.Ctx, "ctx", 0, "most tokens of a sequence, prompt and completion (default the model's maximum length, at most 4096)")
	fl.StringVar(&opts.APIKey, "api-key", os.Getenv("KRUN_API_KEY"), "require this key (Authorization: Bearer KEY); default $KRUN_API_KEY")
	fl.StringVar(&opts.Alias, "alias", "", "model id in the API (default MODEL's base name)")
	fl.IntVar(&opts.Queue, "queue", 64, "most requests waiting for a place; more get 503")
	fl.DurationVar(&opts.Grace, "grace", 20*time.Second, "on SIGTERM, how long the requests already taken may run before they are cancelled")
	fl.DurationVar(&opts.DrainDelay, "drain-delay", 0, "on SIGTERM, the least time to keep answering /ready and new requests with 503 before the port closes (behind a balancer: its health-check interval; on Kubernetes: a few seconds)")
	fl.IntVar(&opts.PrefillChunk, "prefill-chunk", 256, "most prompt tokens prefilled per step, between decode steps")
	fl.IntVarP(&opts.Threads, "threads", "t", 0, "threads (default the usable CPUs, see ktune detect; more are clamped to them)")
	fl.StringVar(&opts.CacheMem, "cache-mem", "1GiB", "prefix cache memory (bytes, or with KiB, MiB, GiB; 0: no prefix cache)")
	fl.StringVar(&opts.DType, "dtype", "f32", "formats for a checkpoint folder: "+strings.Join(PresetNames(), ", ")+" (a .kt file keeps its own; a GGUF file its own unless given)")
	fl.StringVar(&opts.CacheDType, "cache-dtype", "bf16", cacheDTypeUsage)
	fl.StringVar(&opts.CacheSpill, "cache-spill", "", "keep the MLA caches in files in `DIR` (mapped; for very long contexts)")
	fl.StringVar(&opts.Tokenizer, "tokenizer", "", "tokenizer folder (default a GGUF file's own, or MODEL's folder)")
	fl.StringVar(&opts.GGUFRepack, "gguf-repack", "fast", ggufRepackUsage)
	fl.BoolVar(&opts.NoVerify, "no-verify", false, "skip a model file's checks, which read the whole file: a .kt file's tensor checksums and scale checks, a GGUF file's scale scan (made once per file and remembered); a corrupt file then fails later, or gives NaN logits")
	fl.StringVar(&opts.Load, "load", "auto", loadUsage)
	return cmd
}

// check refuses bad flags before anything is read or opened.
func (o *ServeOptions) check() error {
	if strings.HasPrefix(o.Host, "[") && strings.HasSuffix(o.Host, "]") {
		o.Host = o.Host[1 : len(o.Host)-1] // an IPv6 address as in a URL: [::1]
	}
	switch {
	case o.Port < 0 || o.Port > 65535:
		return cli.Usagef("serve: --port %d; want 0..65535", o.Port)
	case strings.TrimSpace(o.Host) == "":
		return cli.Usagef("serve: --host is empty")
	case o.Grace <= 0:
		return cli.Usagef("serve: --grace %s; want a positive duration", o.Grace)
	case o.DrainDelay < 0:
		return cli.Usagef("serve: --drain-delay %s; want 0 or more", o.DrainDelay)
	case o.Parallel < 1 || o.Parallel > 256:
		return cli.Usagef("serve: --parallel %d; want 1..256", o.Parallel)
	case o.Ctx < 0:
		return cli.Usagef("serve: --ctx %d; want 0 (the model's maximum length) or more", o.Ctx)
	case o.Queue < 1:
		return cli.Usagef("serve: --queue %d; want at least 1", o.Queue)
	case o.PrefillChunk < 1:
		return cli.Usagef("serve: --prefill-chunk %d; want at least 1", o.PrefillChunk)
	}
	mem, err := parseBytes(o.CacheMem)
	if err != nil {
		return cli.Usagef("serve: --cache-mem: %v", err)
	}
	o.mem = mem
	if _, err := cacheDType(o.CacheDType); err != nil {
		return err
	}
	if _, err := loadMode(o.Load); err != nil {
		return err
	}
	if _, err := presetOptions(o.DType); err != nil {
		return cli.Usagef("serve: --dtype: %v", err)
	}
	if _, err := ggufRepack(o.GGUFRepack); err != nil {
		return err
	}
	return nil
}

// parseBytes reads a size: a number of bytes, or with a unit B, KiB, MiB,
// GiB, TiB (K, M, G, T and KB, MB, GB, TB are read as binary units too).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+') })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (like 512MiB, 2GiB or 0)", s)
	}
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20,
		"G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40, "TIB": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (B, KiB, MiB, GiB, TiB)", s, unit)
	}
	n := v * float64(int64(1)<<sh)
	if n >= 1<<62 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(n), nil
}

func runServe(o *ServeOptions) error {
	threads, err := cli.ThreadCount(o.Err, "-t", o.Threads)
	if err != nil {
		return err
	}
	cdt, _ := cacheDType(o.CacheDType)
	repack, _ := ggufRepack(o.GGUFRepack)

	// ---- the model's config and tokenizer, read before listening
	cfg, err := peekConfig(o.Model)
	if err != nil {
		return err
	}
	var warnings []string // printed once the model is loaded (a failed load prints one line)
	tok, tokDir, err := loadTokenizer(o.Model, o.Tokenizer)
	if err != nil {
		if o.Tokenizer != "" {
			return cli.Usagef("serve: %v", err)
		}
		warnings = append(warnings, fmt.Sprintf("no tokenizer (%v): prompts must be token ids (give --tokenizer DIR)", err))
		tok = nil
	}
	limitDir := tokDir
	if limitDir == "" {
		limitDir = o.Model
		if file, err := isModelFile(o.Model); err == nil && file {
			limitDir = filepath.Dir(o.Model)
		}
	}
	ctxLen := o.Ctx
	limit, from := maxLength(cfg, limitDir)
	switch {
	case ctxLen == 0 && limit > 0:
		ctxLen = min(limit, 4096)
	case ctxLen == 0:
		ctxLen = 4096
	case limit > 0 && ctxLen > limit:
		return cli.Usagef("serve: --ctx %d is longer than the model's maximum length %d (%s)", ctxLen, limit, from)
	}

	// ---- listen at once, so /health answers "loading" during the load
	ln, err := net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.Port)))
	if err != nil {
		return listenError(o.Host, o.Port, err)
	}
	chooser := installProfile(o.Factory)
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(o.Out, "krun serve: listening on %s (loading %s)\n", url, o.Model)
	if ip := net.ParseIP(strings.Trim(o.Host, "[]")); (ip == nil || !ip.IsLoopback()) && o.Host != "localhost" && o.APIKey == "" {
		warnings = append(warnings, fmt.Sprintf("listening on %s without --api-key: anyone who can reach it can use it", o.Host))
	}
	base := o.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, stopSignals := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	go func() { <-ctx.Done(); stopSignals() }() // a second signal ends the process at once
	alias := o.Alias
	if alias == "" {
		alias = modelName(o.Model)
	}
	mem := o.mem
	if mem == 0 {
		mem = -1 // no prefix cache
	}
	s := serve.New(serve.Options{ModelName: alias, Parallel: o.Parallel, Queue: o.Queue, Ctx: ctxLen,
		PrefillChunk: o.PrefillChunk, CacheMem: mem, APIKey: o.APIKey, Grace: o.Grace, DrainDelay: o.DrainDelay, Log: o.Out})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	// ---- load, then serve until a signal
	preset := o.DType
	if isGGUF(o.Model) && !o.set["dtype"] {
		preset = "" // the file's own types
	}
	loaded := make(chan struct{})
	go func() { // a signal during the load: say why nothing stops yet
		select {
		case <-ctx.Done():
			select {
			case <-loaded:
			default:
				fmt.Fprintln(o.Err, "krun serve: stopping once the model is loaded (a second signal ends it at once)")
			}
		case <-loaded:
		}
	}()
	load, _ := loadMode(o.Load)
	m, err := openModel(o.Model, preset, model.LoadOptions{
		Conversion: model.Conversion{GGUFRepack: repack},
		Runtime:    model.Runtime{Threads: threads, Chooser: chooser},
		Memory:     model.Memory{CacheSpillDir: o.CacheSpill, CacheDType: cdt, MaxSeqs: o.Parallel, MaxTokens: ctxLen},
		Files:      model.Files{NoVerify: o.NoVerify, Weights: load},
	})
	close(loaded)
	if err != nil {
		stopSignals()
		<-served
		return err
	}
	defer m.Close()
	if ctx.Err() != nil { // stopped while loading: never ready
		err = <-served
		fmt.Fprintln(o.Out, "krun serve: stopped")
		return err
	}
	defer s.Close()
	for _, w := range warnings {
		fmt.Fprintln(o.Err, "krun serve: warning:", w)
	}
	profile.UsePlacement(m.Options().Threads)
	if err := s.Start(m, tok); err != nil {
		return err
	}
	if o.ready != nil {
		o.ready(url)
	}
	err = <-served
	fmt.Fprintln(o.Out, "krun serve: stopped")
	return err
}

// listenError explains why --host and --port cannot be listened on (a
// usage error, exit 2: they are flags this machine refuses).
func listenError(host string, port int, err error) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return cli.Usagef("serve: --port %d: %s is in use (another server listens there); give another --port, or --port 0 for any free one", port, addr)
	case errors.Is(err, syscall.EACCES):
		return cli.Usagef("serve: --port %d: permission denied on %s (ports below 1024 need privileges)", port, addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return cli.Usagef("serve: --host %s is not an address of this machine (127.0.0.1: this machine only; 0.0.0.0: every interface)", host)
	case errors.As(err, &dns):
		return cli.Usagef("serve: --host %s: no such host (give an IP address or a name of this machine)", host)
	}
	return cli.Usagef("serve: --host %s --port %d: %v", host, port, err)
}
