package kprofile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ktune/ktune/cli"
	"github.com/ktune/ktune/reports"
	"github.com/ktune/ktune/reports/loadgen"
)

// ServeBenchOptions are the arguments of kprofile serve-bench.
type ServeBenchOptions struct {
	URLs     []string // servers' base URLs
	Names    []string // a label per URL (filled in: host:port)
	Clients  []int    // concurrency levels, ascending
	Prompt   int      // prompt tokens
	Gen      int      // tokens generated per request
	Requests int      // per client per level
	Rounds   int
	Model    string // "" each server's first /v1/models id
	APIKey   string
	Timeout  time.Duration // per request
	Plot     string        // "" none
	Format   string        // text, md, tsv, json
	Seed     uint64
	IDs      loadgen.IDRange // the prompts' token ids
	Warmup   bool
}

// NewCmdServeBench builds `kprofile serve-bench --url URL [--url URL ...]`.
func NewCmdServeBench(f *cli.Factory, runF func(*ServeBenchOptions) error) *cobra.Command {
	o := &ServeBenchOptions{}
	var clients, ids string
	cmd := &cobra.Command{
		Use:   "serve-bench --url URL [--url URL ...]",
		Short: "Benchmark OpenAI-compatible servers under concurrent clients",
		Long: cli.Doc(`
			serve-bench measures one or more OpenAI-compatible completion
			servers (krun serve, llama.cpp's llama-server, vLLM, ...) under
			concurrent clients. At each level of --clients, that many clients
			start together and each streams --requests greedy completions back
			to back from POST /v1/completions: a prompt of --prompt token ids
			(drawn from --ids, by default 100..1099, in every real model's
			vocabulary; a small test model needs its own range; different for every
			request, so that no prefix cache serves one for free, and the same
			for every server and run), --gen tokens generated (ignore_eos, so
			that every server generates them all), temperature 0.

			Per server and level it reports: requests ok/failed; the aggregate
			output tokens/s (all successful requests' completion tokens over
			the level's wall time); the median per-stream decode rate (tokens
			after a request's first over the time from its first content chunk
			to its last); the time to first token (from the POST) and the
			inter-token latency (each gap between content chunks over the
			tokens the later one carries), p50 and p99 by nearest rank, in ms.
			A figure with no sample shows as "-" (null in JSON, empty in TSV).
			A failed request (an HTTP error, an error event, a broken, short or
			timed-out stream) gives no figures; the first messages go to stderr.

			Several --url are measured alternately: each level on each server
			in turn (the order reversed every other step: A B, B A, ...), round
			after round (--rounds), so that machine noise hits them alike. Both
			may run on the machine measured: only one is driven at a time (the
			other idles, holding its memory). With several rounds each figure is the
			median over rounds, with the range in parentheses; each round has
			its own prompts. With exactly two servers a second table gives, per
			level, the first server's aggregate tokens/s and TTFT p99 over the
			second's (the median of the rounds' ratios).

			Every server is checked (GET /v1/models) and sent a warm-up request
			(uncounted; --warmup=false skips it) before the first measurement:
			a server that cannot be reached, or whose warm-up is refused (an
			HTTP 4xx: a wrong --api-key, --model or URL, a prompt too long for
			its context), stops the command there.

			-o text or md prints tables, tsv one line per server and level
			(medians, then _min and _max columns; the ratios as a second block
			after a blank line), json everything including each round's rows.
			--plot writes one figure, aggregate tokens/s above TTFT p99 against
			the number of clients, a line per server; its format follows the
			extension (.svg, .png, .pdf).

			Exit status: 0 measured, every request succeeded; 1 some requests
			failed (the tables are printed) or another failure; 2 a usage or
			input error (a bad flag, a server that cannot be reached or refuses
			the warm-up), with one error line; 130 interrupted.
		`),
		Example: cli.Doc(`
			$ krun serve --port 8080 ... &  llama-server --port 8081 ... &
			$ kprofile serve-bench --url http://127.0.0.1:8080 --name krun --url http://127.0.0.1:8081 --name llama-server -c 1,2,4,8,16 --prompt 512 --gen 128
			$ kprofile serve-bench --url http://127.0.0.1:8080 -c 1-16*2 --rounds 3 -o md --plot serve.svg
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(clients, ids, cmd.Flags().Changed("api-key")); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runServeBench(f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.URLs, "url", nil, "a server's base URL, e.g. http://127.0.0.1:8080 (repeat to compare servers)")
	fl.StringArrayVar(&o.Names, "name", nil, "a label per --url, in order (default host:port)")
	fl.StringVarP(&clients, "clients", "c", "1,2,4,8,16", "concurrency levels: a comma list, ranges a-b, a-b*k (geometric) or a-b+k")
	fl.IntVar(&o.Prompt, "prompt", 512, "prompt tokens per request")
	fl.IntVar(&o.Gen, "gen", 128, "tokens generated per request")
	fl.IntVar(&o.Requests, "requests", 2, "requests per client at each level, back to back")
	fl.IntVar(&o.Rounds, "rounds", 1, "repeat the whole alternation; figures are medians over rounds")
	fl.StringVar(&o.Model, "model", "", `the requests' "model" (default: each server's first /v1/models id)`)
	fl.StringVar(&o.APIKey, "api-key", "", "bearer token for the servers (default $KRUN_API_KEY)")
	fl.DurationVar(&o.Timeout, "timeout", loadgen.DefaultTimeout, "limit on each request; one past it failed")
	fl.StringVar(&o.Plot, "plot", "", "write aggregate tokens/s and TTFT p99 against clients to this .svg, .png or .pdf file")
	fl.StringVarP(&o.Format, "output", "o", "text", "output format: text, md, tsv or json")
	fl.Uint64Var(&o.Seed, "seed", 1, "picks the prompts (round r uses seed+r)")
	fl.BoolVar(&o.Warmup, "warmup", true, "send each server one uncounted request first")
	fl.StringVar(&ids, "ids", fmt.Sprintf("%d-%d", loadgen.DefaultIDs.Lo, loadgen.DefaultIDs.Hi), "the prompts' token ids, LOW-HIGH (a model with a small vocabulary needs a range inside it)")
	return cmd
}

// plotFormats are the --plot extensions gonum writes.
var plotFormats = []string{"svg", "png", "pdf", "eps", "jpg", "jpeg", "tif", "tiff"}

// check validates the flags (usage errors) and fills in the defaults.
func (o *ServeBenchOptions) check(clients, ids string, keyGiven bool) error {
	if len(o.URLs) == 0 {
		return cli.Usagef("--url: give at least one server (e.g. --url http://127.0.0.1:8080)")
	}
	if len(o.Names) > 0 && len(o.Names) != len(o.URLs) {
		return cli.Usagef("--name: %d names for %d --url; give one per --url, in the same order, or none", len(o.Names), len(o.URLs))
	}
	var hosts []string
	for _, s := range o.URLs {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return cli.Usagef("--url %q: want a base URL such as http://127.0.0.1:8080", s)
		}
		hosts = append(hosts, u.Host)
	}
	if len(o.Names) == 0 {
		seen := map[string]int{}
		for _, h := range hosts {
			seen[h]++
			name := h
			if seen[h] > 1 {
				name = fmt.Sprintf("%s#%d", h, seen[h])
			}
			o.Names = append(o.Names, name)
		}
	}
	for i, n := range o.Names {
		if strings.TrimSpace(n) == "" {
			return cli.Usagef("--name: an empty name (for --url %s)", o.URLs[i])
		}
		if slices.Index(o.Names, n) != i {
			return cli.Usagef("--name %q: given twice; the names label the table's rows", n)
		}
	}
	var err error
	if o.Clients, err = parseClients(clients); err != nil {
		return err
	}
	lo, hi, ok := strings.Cut(ids, "-")
	o.IDs.Lo, err = strconv.Atoi(strings.TrimSpace(lo))
	if err == nil {
		o.IDs.Hi, err = strconv.Atoi(strings.TrimSpace(hi))
	}
	if !ok || err != nil || o.IDs.Lo < 0 || o.IDs.Hi < o.IDs.Lo {
		return cli.Usagef("--ids %q: want LOW-HIGH token ids, 0 <= LOW <= HIGH, e.g. 100-1099", ids)
	}
	for _, v := range []struct {
		flag string
		n    int
	}{{"--prompt", o.Prompt}, {"--gen", o.Gen}, {"--requests", o.Requests}, {"--rounds", o.Rounds}} {
		if v.n < 1 {
			return cli.Usagef("%s %d: must be at least 1", v.flag, v.n)
		}
	}
	if o.Timeout <= 0 {
		return cli.Usagef("--timeout %v: must be positive", o.Timeout)
	}
	switch o.Format {
	case "text", "md", "markdown", "tsv", "json":
	default:
		return cli.Usagef("-o %q: want text, md, tsv or json", o.Format)
	}
	if o.Plot != "" {
		ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(o.Plot)), ".")
		if !slices.Contains(plotFormats, ext) {
			return cli.Usagef("--plot %s: the extension names the format: .svg, .png or .pdf", o.Plot)
		}
		if err := checkOutput("--plot", o.Plot); err != nil {
			return err
		}
	}
	if !keyGiven {
		o.APIKey = os.Getenv("KRUN_API_KEY")
	}
	return nil
}

// maxClients bounds a concurrency level.
const maxClients = 4096

// parseClients reads a --clients list: "1,2,4", ranges "1-8" (every
// count), "1-16*2" (×2 from 1 up to 16) and "4-16+4"; sorted, without
// duplicates.
func parseClients(s string) ([]int, error) {
	bad := func(part string) error {
		return cli.Usagef("--clients: bad level %q (want e.g. 1,2,4,8,16, 1-8 or 1-16*2; each 1 to %d)", part, maxClients)
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, rest, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 1 || a > maxClients {
			return nil, bad(part)
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		hi, step, op := rest, "1", byte('+')
		if i := strings.IndexAny(rest, "*+"); i >= 0 {
			hi, step, op = rest[:i], rest[i+1:], rest[i]
		}
		b, err1 := strconv.Atoi(strings.TrimSpace(hi))
		k, err2 := strconv.Atoi(strings.TrimSpace(step))
		if err1 != nil || err2 != nil || b < a || b > maxClients || (op == '*' && k < 2) || (op == '+' && k < 1) {
			return nil, bad(part)
		}
		for n := a; n <= b; {
			out = append(out, n)
			if op == '*' {
				n *= k
			} else {
				n += k
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// serveMetric is a column of figures a loadgen.Row gives.
type serveMetric struct {
	head, key string
	get       func(loadgen.Row) float64
}

var serveMetrics = []serveMetric{
	{"agg tok/s", "agg_tok_s", func(r loadgen.Row) float64 { return r.AggTokPerSec }},
	{"per-stream tok/s", "stream_tok_s", func(r loadgen.Row) float64 { return r.StreamTokPerSec }},
	{"TTFT p50 ms", "ttft_p50_ms", func(r loadgen.Row) float64 { return r.TTFTP50 }},
	{"TTFT p99 ms", "ttft_p99_ms", func(r loadgen.Row) float64 { return r.TTFTP99 }},
	{"ITL p50 ms", "itl_p50_ms", func(r loadgen.Row) float64 { return r.ITLP50 }},
	{"ITL p99 ms", "itl_p99_ms", func(r loadgen.Row) float64 { return r.ITLP99 }},
}

// Indexes of serveMetrics the ratios and the plot use.
const (
	metricAgg     = 0
	metricTTFTP99 = 3
)

// spread is a figure over rounds: the median and the range of the values
// that are not NaN (all NaN when there are none).
type spread struct{ Median, Min, Max float64 }

func spreadOf(xs []float64) spread {
	s := spread{loadgen.Median(xs), math.NaN(), math.NaN()}
	for _, x := range xs {
		if !math.IsNaN(x) {
			if !(x >= s.Min) {
				s.Min = x
			}
			if !(x <= s.Max) {
				s.Max = x
			}
		}
	}
	return s
}

// serveServer is one --url.
type serveServer struct {
	name, url, model string
	client           *http.Client
}

// options are loadgen's options for one level of sv.
func (sv *serveServer) options(o *ServeBenchOptions, clients int, seed uint64) loadgen.Options {
	return loadgen.Options{URL: sv.url, Model: sv.model, Clients: []int{clients}, PromptTokens: o.Prompt, MaxTokens: o.Gen,
		Requests: o.Requests, Timeout: o.Timeout, APIKey: o.APIKey, Seed: seed, IDs: o.IDs, HTTPClient: sv.client}
}

// serveLevel is one server at one level: a Row per round.
type serveLevel struct {
	server, clients int
	rows            []loadgen.Row
}

func (l *serveLevel) counts() (ok, failed int, errs []string) {
	for _, r := range l.rows {
		ok += r.OK
		failed += r.Failed
		for _, e := range r.Errors {
			if len(errs) < loadgen.MaxErrors && !slices.Contains(errs, e) {
				errs = append(errs, e)
			}
		}
	}
	return ok, failed, errs
}

func (l *serveLevel) spread(m int) spread {
	var xs []float64
	for _, r := range l.rows {
		xs = append(xs, serveMetrics[m].get(r))
	}
	return spreadOf(xs)
}

// ratio is, per level, the first server's figure over the second's: the
// spread of the rounds' ratios.
func ratio(a, b *serveLevel, m int) spread {
	var xs []float64
	for i := range min(len(a.rows), len(b.rows)) {
		x, y := serveMetrics[m].get(a.rows[i]), serveMetrics[m].get(b.rows[i])
		if y != 0 && !math.IsNaN(x) && !math.IsNaN(y) {
			xs = append(xs, x/y)
		}
	}
	return spreadOf(xs)
}

func runServeBench(f *cli.Factory, o *ServeBenchOptions) error {
	ctx, stop, interrupted := cli.SignalContext(context.Background())
	defer stop()
	servers, err := probeServers(ctx, f.Err, o)
	if err != nil {
		return interrupted(err)
	}
	levels := make([][]*serveLevel, len(servers)) // [server][level]
	for s := range servers {
		for _, n := range o.Clients {
			levels[s] = append(levels[s], &serveLevel{server: s, clients: n})
		}
	}
	if o.Warmup {
		for _, sv := range servers {
			if err := loadgen.Warmup(ctx, sv.options(o, 1, o.Seed)); err != nil {
				if ctx.Err() != nil {
					return interrupted(ctx.Err())
				}
				var se *loadgen.StatusError
				if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && se.Code != http.StatusRequestTimeout && se.Code != http.StatusTooManyRequests {
					return cli.Usagef("--url %s (%s): %v", sv.url, sv.name, err)
				}
				return fmt.Errorf("--url %s (%s): %w", sv.url, sv.name, err)
			}
		}
	}
	fmt.Fprintf(f.Err, "serve-bench: %d server(s) × %d levels × %d round(s); prompt %d tokens, gen %d, %d request(s) per client\n",
		len(servers), len(o.Clients), o.Rounds, o.Prompt, o.Gen, o.Requests)
	step := 0
	for round := range o.Rounds {
		for li, n := range o.Clients {
			order := make([]int, len(servers))
			for i := range order {
				order[i] = i
			}
			if step%2 == 1 {
				slices.Reverse(order)
			}
			step++
			for _, s := range order {
				sv := servers[s]
				rows, err := loadgen.Run(ctx, sv.options(o, n, o.Seed+uint64(round)))
				if err != nil {
					return interrupted(fmt.Errorf("--url %s (%s): %w", sv.url, sv.name, err))
				}
				r := rows[0]
				levels[s][li].rows = append(levels[s][li].rows, r)
				fmt.Fprintf(f.Err, "round %d/%d, %d clients, %s: %s tok/s, TTFT p99 %s ms, %d ok",
					round+1, o.Rounds, n, sv.name, fmtFig(r.AggTokPerSec), fmtFig(r.TTFTP99), r.OK)
				if r.Failed > 0 {
					fmt.Fprintf(f.Err, ", %d failed: %s", r.Failed, strings.Join(r.Errors, "; "))
				}
				fmt.Fprintln(f.Err)
			}
		}
	}
	if err := writeServeBench(f.Out, o, servers, levels); err != nil {
		return err
	}
	if o.Plot != "" {
		var series []reports.ServeSeries
		for s, sv := range servers {
			ss := reports.ServeSeries{Name: sv.name, Clients: o.Clients}
			for _, l := range levels[s] {
				ss.AggTokPerSec = append(ss.AggTokPerSec, l.spread(metricAgg).Median)
				ss.TTFTP99 = append(ss.TTFTP99, l.spread(metricTTFTP99).Median)
			}
			series = append(series, ss)
		}
		title := fmt.Sprintf("prompt %d, gen %d", o.Prompt, o.Gen)
		if err := reports.WriteServePlot(o.Plot, title, series); err != nil {
			return err
		}
		fmt.Fprintf(f.Err, "wrote %s\n", o.Plot)
	}
	total, failed := 0, 0
	for s := range levels {
		for _, l := range levels[s] {
			ok, bad, _ := l.counts()
			total += ok + bad
			failed += bad
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d requests failed (their first errors are above)", failed, total)
	}
	return nil
}

// probeServers checks that every server answers before anything is
// measured, and finds each one's model id when --model is not given.
func probeServers(ctx context.Context, w io.Writer, o *ServeBenchOptions) ([]*serveServer, error) {
	var out []*serveServer
	for i, u := range o.URLs {
		sv := &serveServer{name: o.Names[i], url: u, client: loadgen.NewHTTPClient(slices.Max(o.Clients))}
		model, err := loadgen.Probe(ctx, loadgen.Options{URL: u, APIKey: o.APIKey, HTTPClient: sv.client}, min(o.Timeout, 10*time.Second))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, cli.Usagef("--url %s: cannot reach the server: %v", u, err)
		}
		sv.model = o.Model
		if sv.model == "" {
			sv.model = model
		}
		shown := sv.model
		if shown == "" {
			shown = `(none listed; "model" left out)`
		}
		fmt.Fprintf(w, "serve-bench: %s = %s, model %s\n", sv.name, u, shown)
		out = append(out, sv)
	}
	return out, nil
}

// fmtFig formats a figure for a table: "-" for NaN, three or so
// significant digits.
func fmtFig(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtSpread is a table cell: the median, and the range when there are
// several rounds.
func fmtSpread(s spread, rounds int) string {
	if rounds < 2 || math.IsNaN(s.Median) {
		return fmtFig(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtFig(s.Median), fmtFig(s.Min), fmtFig(s.Max))
}

// tsvNum is a TSV cell: empty for NaN.
func tsvNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// jsonNum is a figure in JSON: null for NaN.
type jsonNum float64

func (v jsonNum) MarshalJSON() ([]byte, error) {
	if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(v), 'g', -1, 64)), nil
}

type jsonSpread struct {
	Median jsonNum `json:"median"`
	Min    jsonNum `json:"min"`
	Max    jsonNum `json:"max"`
}

func toJSON(s spread) jsonSpread {
	return jsonSpread{jsonNum(s.Median), jsonNum(s.Min), jsonNum(s.Max)}
}

// writeServeBench prints the tables in o.Format.
func writeServeBench(w io.Writer, o *ServeBenchOptions, servers []*serveServer, levels [][]*serveLevel) error {
	two := len(servers) == 2
	ratioHead := func() (string, string) {
		return fmt.Sprintf("agg tok/s %s/%s", servers[0].name, servers[1].name), fmt.Sprintf("TTFT p99 %s/%s", servers[0].name, servers[1].name)
	}
	fmtRatio := func(s spread) string {
		if math.IsNaN(s.Median) {
			return "-"
		}
		if o.Rounds < 2 {
			return fmt.Sprintf("%.3f", s.Median)
		}
		return fmt.Sprintf("%.3f (%.3f–%.3f)", s.Median, s.Min, s.Max)
	}
	switch o.Format {
	case "json":
		type jl struct {
			Server  string                `json:"server"`
			Clients int                   `json:"clients"`
			OK      int                   `json:"ok"`
			Failed  int                   `json:"failed"`
			Figures map[string]jsonSpread `json:"figures"`
			Errors  []string              `json:"errors,omitempty"`
		}
		type jr struct {
			Clients int                   `json:"clients"`
			Ratios  map[string]jsonSpread `json:"ratios"`
		}
		type jrun struct {
			Server  string             `json:"server"`
			Round   int                `json:"round"`
			Clients int                `json:"clients"`
			OK      int                `json:"ok"`
			Failed  int                `json:"failed"`
			Tokens  int                `json:"tokens"`
			WallS   jsonNum            `json:"wall_s"`
			Figures map[string]jsonNum `json:"figures"`
			Errors  []string           `json:"errors,omitempty"`
		}
		type js struct {
			Name  string `json:"name"`
			URL   string `json:"url"`
			Model string `json:"model"`
		}
		doc := struct {
			PromptTokens int    `json:"prompt_tokens"`
			GenTokens    int    `json:"gen_tokens"`
			Requests     int    `json:"requests_per_client"`
			Rounds       int    `json:"rounds"`
			Seed         uint64 `json:"seed"`
			Servers      []js   `json:"servers"`
			Levels       []jl   `json:"levels"`
			Ratios       []jr   `json:"ratios,omitempty"`
			Runs         []jrun `json:"runs"`
		}{PromptTokens: o.Prompt, GenTokens: o.Gen, Requests: o.Requests, Rounds: o.Rounds, Seed: o.Seed}
		for s, sv := range servers {
			doc.Servers = append(doc.Servers, js{sv.name, sv.url, sv.model})
			for _, l := range levels[s] {
				ok, failed, errs := l.counts()
				x := jl{Server: sv.name, Clients: l.clients, OK: ok, Failed: failed, Figures: map[string]jsonSpread{}, Errors: errs}
				for m, sm := range serveMetrics {
					x.Figures[sm.key] = toJSON(l.spread(m))
				}
				doc.Levels = append(doc.Levels, x)
				for round, r := range l.rows {
					run := jrun{Server: sv.name, Round: round + 1, Clients: r.Clients, OK: r.OK, Failed: r.Failed, Tokens: r.Tokens,
						WallS: jsonNum(r.Wall.Seconds()), Figures: map[string]jsonNum{}, Errors: r.Errors}
					for _, sm := range serveMetrics {
						run.Figures[sm.key] = jsonNum(sm.get(r))
					}
					doc.Runs = append(doc.Runs, run)
				}
			}
		}
		if two {
			for li, n := range o.Clients {
				doc.Ratios = append(doc.Ratios, jr{n, map[string]jsonSpread{
					serveMetrics[metricAgg].key:     toJSON(ratio(levels[0][li], levels[1][li], metricAgg)),
					serveMetrics[metricTTFTP99].key: toJSON(ratio(levels[0][li], levels[1][li], metricTTFTP99)),
				}})
			}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err

	case "tsv":
		head := []string{"server", "clients", "rounds", "ok", "failed"}
		for _, sm := range serveMetrics {
			head = append(head, sm.key, sm.key+"_min", sm.key+"_max")
		}
		lines := [][]string{head}
		for s, sv := range servers {
			for _, l := range levels[s] {
				ok, failed, _ := l.counts()
				row := []string{sv.name, strconv.Itoa(l.clients), strconv.Itoa(len(l.rows)), strconv.Itoa(ok), strconv.Itoa(failed)}
				for m := range serveMetrics {
					sp := l.spread(m)
					row = append(row, tsvNum(sp.Median), tsvNum(sp.Min), tsvNum(sp.Max))
				}
				lines = append(lines, row)
			}
		}
		if two {
			lines = append(lines, nil, []string{"clients",
				"agg_tok_s_ratio", "agg_tok_s_ratio_min", "agg_tok_s_ratio_max",
				"ttft_p99_ms_ratio", "ttft_p99_ms_ratio_min", "ttft_p99_ms_ratio_max"})
			for li, n := range o.Clients {
				a, t := ratio(levels[0][li], levels[1][li], metricAgg), ratio(levels[0][li], levels[1][li], metricTTFTP99)
				lines = append(lines, []string{strconv.Itoa(n), tsvNum(a.Median), tsvNum(a.Min), tsvNum(a.Max), tsvNum(t.Median), tsvNum(t.Min), tsvNum(t.Max)})
			}
		}
		for _, l := range lines {
			if _, err := fmt.Fprintln(w, strings.Join(l, "\t")); err != nil {
				return err
			}
		}
		return nil
	}

	// text, md
	note := ""
	if o.Rounds > 1 {
		note = fmt.Sprintf(", medians of %d rounds (range)", o.Rounds)
	}
	fmt.Fprintf(w, "prompt %d tokens, gen %d, %d request(s) per client%s\n\n", o.Prompt, o.Gen, o.Requests, note)
	head := []string{"server", "clients", "ok/failed"}
	for _, sm := range serveMetrics {
		head = append(head, sm.head)
	}
	var rows [][]string
	for li := range o.Clients {
		for s, sv := range servers {
			l := levels[s][li]
			ok, failed, _ := l.counts()
			row := []string{sv.name, strconv.Itoa(l.clients), fmt.Sprintf("%d/%d", ok, failed)}
			for m := range serveMetrics {
				row = append(row, fmtSpread(l.spread(m), o.Rounds))
			}
			rows = append(rows, row)
		}
	}
	if err := cli.Table(w, o.Format, head, rows); err != nil {
		return err
	}
	if !two {
		return nil
	}
	ha, ht := ratioHead()
	rows = nil
	for li, n := range o.Clients {
		rows = append(rows, []string{strconv.Itoa(n),
			fmtRatio(ratio(levels[0][li], levels[1][li], metricAgg)), fmtRatio(ratio(levels[0][li], levels[1][li], metricTTFTP99))})
	}
	fmt.Fprintln(w)
	return cli.Table(w, o.Format, []string{"clients", ha, ht}, rows)
}
