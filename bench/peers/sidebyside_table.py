#!/usr/bin/env python3
"""Markdown table of krun vs llama.cpp from sidebyside.sh's raw results (stdlib only).

Usage: python3 sidebyside_table.py RESULTS_DIR

RESULTS_DIR holds one JSON file per run, named r<ROUND>_<PAIR>_<TOOL>.json, where PAIR is
"<krun preset>~<llama.cpp type>" (e.g. q8~Q8_0) and TOOL is "krun" or "llama":
  krun bench -o json   -> {"cpu": ..., "results": [{"threads", "n_prompt", "n_gen", "n_depth",
                           "samples_ts": [...], "avg_ts", ...}, ...]}
  llama-bench -o json  -> [{"n_threads", "n_prompt", "n_gen", "n_depth", "samples_ts": [...],
                           "avg_ts", ...}, ...]
Rows are matched on (pair, threads, test), test = pp<P> / tg<N> / pp<P>+tg<N>, plus @d<D> for a
context depth. Every timed sample of every round is pooled; the table shows the median and the
range (min-max) of those samples, and ratio = krun median / llama.cpp median (>1: krun faster).
"""
import json
import os
import re
import statistics
import sys

PRESET_ORDER = ["q8", "q4-all", "q4"]  # table order of the pairs
NAME = re.compile(r"^r(\d+)_(.+)_(krun|llama)\.json$")


def load_rows(path):
    """The list of result objects in a file, tolerating log lines before or after the JSON."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    dec = json.JSONDecoder()
    for i, c in enumerate(text):
        if c not in "[{":
            continue
        try:
            obj, _ = dec.raw_decode(text, i)
        except ValueError:
            continue
        if isinstance(obj, dict):
            obj = obj.get("results", obj.get("rows", []))
        if isinstance(obj, list) and all(isinstance(r, dict) for r in obj):
            return obj
    return []


def test_name(r):
    p, n, d = int(r.get("n_prompt", 0) or 0), int(r.get("n_gen", 0) or 0), int(r.get("n_depth", 0) or 0)
    name = "+".join(x for x in ((f"pp{p}" if p else ""), (f"tg{n}" if n else "")) if x) or "?"
    return name + (f"@d{d}" if d else "")


def samples(r):
    s = r.get("samples_ts")
    if isinstance(s, list) and s:
        return [float(x) for x in s]
    if r.get("avg_ts") is not None:
        return [float(r["avg_ts"])]
    return []


def fmt(xs):
    if not xs:
        return "–"
    m = statistics.median(xs)
    if len(xs) == 1:
        return f"{m:.2f}"
    return f"{m:.2f} ({min(xs):.2f}–{max(xs):.2f})"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rdir = sys.argv[1]
    data = {}      # (pair, threads, test) -> {"krun": [...], "llama": [...]}
    order = []     # first-seen order of keys
    pairs = []
    rounds = set()
    for fn in sorted(os.listdir(rdir)):
        m = NAME.match(fn)
        if not m:
            continue
        rnd, pair, tool = int(m.group(1)), m.group(2), m.group(3)
        rounds.add(rnd)
        if pair not in pairs:
            pairs.append(pair)
        rows = load_rows(os.path.join(rdir, fn))
        if not rows:
            print(f"warning: no results parsed from {fn}", file=sys.stderr)
        for r in rows:
            thr = r.get("threads", r.get("n_threads"))
            key = (pair, int(thr) if thr is not None else 0, test_name(r))
            if key not in data:
                data[key] = {"krun": [], "llama": []}
                order.append(key)
            data[key][tool].extend(samples(r))
    if not data:
        sys.exit(f"no results in {rdir}")

    def sort_key(k):
        pair, thr, test = k
        preset = pair.split("~", 1)[0]
        rank = PRESET_ORDER.index(preset) if preset in PRESET_ORDER else len(PRESET_ORDER)
        return (rank, pairs.index(pair), thr, 0 if test.startswith("pp") else 1, order.index(k))

    print(f"rounds: {len(rounds)}; medians and ranges over all timed samples of all rounds; "
          "ratio = krun / llama.cpp (>1: krun faster)\n")
    print("| weights | threads | test | krun t/s (median, range) | llama.cpp t/s (median, range) | ratio |")
    print("|---|---:|---|---:|---:|---:|")
    for key in sorted(order, key=sort_key):
        pair, thr, test = key
        k, l = data[key]["krun"], data[key]["llama"]
        ratio = f"{statistics.median(k) / statistics.median(l):.2f}" if k and l and statistics.median(l) > 0 else "–"
        weights = " vs ".join(pair.split("~", 1))
        print(f"| {weights} | {thr} | {test} | {fmt(k)} | {fmt(l)} | {ratio} |")


if __name__ == "__main__":
    main()
