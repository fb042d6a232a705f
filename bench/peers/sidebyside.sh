#!/usr/bin/env bash
# sidebyside.sh — krun vs llama.cpp on the same Hugging Face Kimi Linear checkpoint.
#
# Usage:
#   LLAMA_CPP=/path/to/llama.cpp bench/peers/sidebyside.sh [options] HF_DIR WORK_DIR
#
# LLAMA_CPP is a llama.cpp checkout with Kimi Linear support, built with at least the targets
# llama-bench and llama-quantize (build/bin/). HF_DIR is a Kimi Linear HF folder (e.g. from
# make_kimi_checkpoint.py; a missing tokenizer is fine). WORK_DIR receives the converted models
# (reused if already there: delete them to reconvert), raw results and the table.
#
# Steps:
#  1. krun: $KRUN if set, else `go build ./cmd/krun` from this repository into WORK_DIR/krun.
#  2. llama.cpp: convert_kimi_gguf.py (wrapper around convert_hf_to_gguf.py: torch-1.13 float8
#     aliases, no `transformers`, placeholder vocabulary) -> WORK_DIR/model-f16.gguf, then
#     llama-quantize to Q8_0 / Q4_0 / Q4_K_M as the pairs need.
#  3. krun convert with presets q8 / q4-all / q4-mix / q4 / q4k-m -> WORK_DIR/model-<preset>.kt.
#  4. R rounds; in each, for every pair, `krun bench` and `llama-bench` one after the other
#     (order swapped on even rounds), same -p/-n/-t/-d/-r, JSON output -> WORK_DIR/results/.
#  5. sidebyside_table.py: markdown table (medians and ranges over all samples of all rounds,
#     ratio krun/llama.cpp) -> stdout and WORK_DIR/table.md. A run writes WORK_DIR/results.new
#     and replaces results/ and table.md only when every run and the table succeeded.
# Flags, paths and LLAMA_CPP are checked before anything is made: a bad one is one line, exit 2.
#
# Pairs:  q8 ~ Q8_0,  q4-all ~ Q4_0,  q4-mix ~ Q4_K_M (comparable bytes per token),
#         q4 ~ Q4_K_M (q4 keeps attention and lm_head q8: more bytes, less error),
#         q4k-m ~ Q4_K_M (the same allocation in the K formats, Q4_K's rule: the same bytes)
#
# Options (defaults in brackets):
#   -p LIST     prompt lengths [64]            -n LIST   generated tokens [16]
#   -t LIST     thread counts [1,2]            -d LIST   context depths [0]
#   -r N        repetitions per tool run [3]   -R N      rounds [3]
#   -P PAIRS    comma-separated krun presets to pair: q8,q4-all,q4-mix,q4,q4k-m [the first four]
#   -c          convert only (no benchmarks)   -b        benchmarks only (models must exist)
# Environment:
#   LLAMA_CPP (required), LLAMA_BUILD [build] (its build folder: build-noamx for a build
#   without AMX, see README), KRUN (krun binary), PYTHON [/usr/bin/python3: needs numpy + torch],
#   QUANT_THREADS [2] (llama-quantize and krun convert threads),
#   KRUN_ARGS / LLAMA_ARGS: extra flags for krun bench / llama-bench (e.g. LLAMA_ARGS="-fa 1"),
#   TABLE_PYTHON [python3]: any Python 3 (the table needs the standard library only).
# Run on a quiet machine; both tools pin nothing themselves.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "sidebyside.sh: $*" >&2; exit 2; }  # a bad flag or argument: one line, exit 2

P=64 N=16 T=1,2 D=0 REPS=3 ROUNDS=3 PAIRS=q8,q4-all,q4-mix,q4 DO_CONVERT=1 DO_BENCH=1
while getopts "p:n:t:d:r:R:P:cbh" opt; do
  case $opt in
    p) P=$OPTARG ;; n) N=$OPTARG ;; t) T=$OPTARG ;; d) D=$OPTARG ;;
    r) REPS=$OPTARG ;; R) ROUNDS=$OPTARG ;; P) PAIRS=$OPTARG ;;
    c) DO_BENCH=0 ;; b) DO_CONVERT=0 ;; h) usage 0 ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
# every flag and path checked before anything is made or deleted
count() { [[ $2 =~ ^[1-9][0-9]{0,5}$ ]] || die "$1 '$2': want a whole number ≥ 1"; }
list() { [[ $2 =~ ^[0-9]{1,6}(,[0-9]{1,6})*$ ]] || die "$1 '$2': want a comma-separated list of whole numbers"; }
list -p "$P"; list -n "$N"; list -t "$T"; list -d "$D"; count -r "$REPS"; count -R "$ROUNDS"
[[ ,$T, != *,0,* ]] || die "-t '$T': a thread count of 0"
[ -n "$PAIRS" ] || die "-P '': name at least one preset"
[ -d "$1" ] || die "HF_DIR $1: not a directory"
[ -n "${LLAMA_CPP:-}" ] || die "set LLAMA_CPP to a built llama.cpp directory"
[ -d "$LLAMA_CPP" ] || die "LLAMA_CPP=$LLAMA_CPP: not a directory"
[ ! -e "$2" ] || [ -d "$2" ] || die "WORK_DIR $2: exists and is not a directory"
HF=$(cd "$1" && pwd)
LLAMA_CPP=$(cd "$LLAMA_CPP" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
QUANT_THREADS=${QUANT_THREADS:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LBENCH=$LLAMA_CPP/${LLAMA_BUILD:-build}/bin/llama-bench
LQUANT=$LLAMA_CPP/${LLAMA_BUILD:-build}/bin/llama-quantize
llama_type() {  # krun preset -> llama.cpp quant type of its pair
  case $1 in q8) echo Q8_0 ;; q4-all) echo Q4_0 ;; q4-mix | q4 | q4k-m) echo Q4_K_M ;;
    *) die "-P: unknown preset '$1' (want q8, q4-all, q4-mix, q4, q4k-m)" ;; esac
}
IFS=, read -r -a PRESETS <<<"$PAIRS"
for pr in "${PRESETS[@]}"; do llama_type "$pr" >/dev/null; done
needbin() { [ -x "$1" ] || die "missing $1 (build llama.cpp first; LLAMA_BUILD names its build folder)"; }
[ "$DO_BENCH" = 1 ] && needbin "$LBENCH"
if [ "$DO_CONVERT" = 1 ]; then  # llama-quantize only where a GGUF is still to be made
  for pr in "${PRESETS[@]}"; do [ -s "$2/model-$(llama_type "$pr").gguf" ] || needbin "$LQUANT"; done
fi
mkdir -p "$2"; WORK=$(cd "$2" && pwd)

log() { printf '[sidebyside %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
stepfail() {  # what log: one line naming the step and its exit status, then the log's tail; exit 1
  local rc=$?
  echo "sidebyside.sh: $1 failed (exit $rc); the last lines of $2:" >&2
  tail -20 "$2" >&2
  exit 1
}

# 1. krun
if [ -z "${KRUN:-}" ]; then
  KRUN=$WORK/krun
  log "go build ./cmd/krun -> $KRUN"
  (cd "$REPO" && go build -o "$KRUN" ./cmd/krun)
fi

# 2-3. conversions (skipped when the output exists)
if [ "$DO_CONVERT" = 1 ]; then
  F16=$WORK/model-f16.gguf
  need_f16=0
  for pr in "${PRESETS[@]}"; do [ -s "$WORK/model-$(llama_type "$pr").gguf" ] || need_f16=1; done
  if [ "$need_f16" = 1 ] && [ ! -s "$F16" ]; then
    log "convert_hf_to_gguf (f16) -> $F16"
    "$PYTHON" "$HERE/convert_kimi_gguf.py" "$LLAMA_CPP" "$HF" --outtype f16 --outfile "$F16.tmp" \
      >"$WORK/convert-gguf.log" 2>&1 || stepfail "convert_kimi_gguf.py" "$WORK/convert-gguf.log"
    mv "$F16.tmp" "$F16"
  fi
  for pr in "${PRESETS[@]}"; do
    ty=$(llama_type "$pr"); g=$WORK/model-$ty.gguf
    if [ ! -s "$g" ]; then
      log "llama-quantize $ty -> $g"
      "$LQUANT" "$F16" "$g.tmp" "$ty" "$QUANT_THREADS" >"$WORK/quantize-$ty.log" 2>&1 \
        || stepfail "llama-quantize $ty" "$WORK/quantize-$ty.log"
      mv "$g.tmp" "$g"
    fi
    k=$WORK/model-$pr.kt
    if [ ! -s "$k" ]; then
      log "krun convert --preset $pr -> $k"
      "$KRUN" convert "$HF" -o "$k" --preset "$pr" --threads "$QUANT_THREADS" >"$WORK/convert-kt-$pr.log" 2>&1 \
        || stepfail "krun convert --preset $pr" "$WORK/convert-kt-$pr.log"
    fi
  done
fi
[ "$DO_BENCH" = 1 ] || exit 0

# 4. alternating rounds, into results.new: the last complete results stay until this run succeeds
RES=$WORK/results.new
rm -rf "$RES"; mkdir -p "$RES"
{
  echo "date: $(date -Is)"; echo "host: $(uname -a)"
  grep -m1 'model name' /proc/cpuinfo || true
  echo "llama.cpp: $(git -C "$LLAMA_CPP" rev-parse HEAD 2>/dev/null || echo '?')"
  echo "krun: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo "?") (repo $REPO)"
  echo "args: -p $P -n $N -t $T -d $D -r $REPS -R $ROUNDS -P $PAIRS KRUN_ARGS='${KRUN_ARGS:-}' LLAMA_ARGS='${LLAMA_ARGS:-}'"
} >"$RES/meta.txt"

run_krun() {  # round preset
  log "round $1: krun bench $2"
  # shellcheck disable=SC2086
  "$KRUN" bench "$WORK/model-$2.kt" -p "$P" -n "$N" -t "$T" -d "$D" -r "$REPS" -o json ${KRUN_ARGS:-} \
    >"$RES/r$1_$2~$(llama_type "$2")_krun.json" 2>>"$RES/krun.stderr" \
    || fail "krun bench" "$2" "$RES/krun.stderr"
}
run_llama() {
  local ty; ty=$(llama_type "$2")
  log "round $1: llama-bench $ty"
  # shellcheck disable=SC2086
  "$LBENCH" -m "$WORK/model-$ty.gguf" -p "$P" -n "$N" -t "$T" -d "$D" -r "$REPS" -o json ${LLAMA_ARGS:-} \
    >"$RES/r$1_$2~${ty}_llama.json" 2>>"$RES/llama.stderr" \
    || fail llama-bench "$ty" "$RES/llama.stderr"
}
fail() {  # tool model stderr-file: one line naming the run, its last error lines, exit 1
  local rc=$?
  echo "sidebyside.sh: $1 on model-$2 failed (exit $rc); the last lines of $3:" >&2
  tail -5 "$3" >&2
  exit 1
}
for ((round = 1; round <= ROUNDS; round++)); do
  for pr in "${PRESETS[@]}"; do
    if ((round % 2)); then run_krun "$round" "$pr"; run_llama "$round" "$pr"
    else run_llama "$round" "$pr"; run_krun "$round" "$pr"; fi
  done
done

# 5. table; then the new results replace the old
"${TABLE_PYTHON:-python3}" "$HERE/sidebyside_table.py" "$RES" >"$WORK/table.md.tmp" \
  || { echo "sidebyside.sh: sidebyside_table.py failed on $RES" >&2; exit 1; }
rm -rf "$WORK/results"; mv "$RES" "$WORK/results"; mv "$WORK/table.md.tmp" "$WORK/table.md"
cat "$WORK/table.md"
