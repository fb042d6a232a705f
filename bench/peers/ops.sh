#!/usr/bin/env bash
# ops.sh — ktune's kernels vs llama.cpp's test-backend-ops on Kimi Linear's single ops.
#
# Usage:
#   LLAMA_CPP=/path/to/llama.cpp bench/peers/ops.sh [-t LIST] [-R N] WORK_DIR
#
# LLAMA_CPP is a llama.cpp checkout patched by patch_test_backend_ops.py (Kimi shapes, run
# when KIMI_OPS is set; GGML_N_THREADS sets the threads) and built with the target
# test-backend-ops (build/bin/; LLAMA_BUILD names another build folder).
# Steps: `go test -c` of kernels/{kda,gemm,mla,moe} into WORK_DIR/bin; R rounds, in each
# `test-backend-ops perf -b CPU` on GATED_DELTA_NET, MUL_MAT (4096×2304, q8_0 and q4_0, n = 1
# and 512), MUL_MAT_ID and FLASH_ATTN_EXT at each thread count, and ours (go benchmarks, every
# thread count in one run), the order swapped on even rounds; raw output in
# WORK_DIR/results.new, which replaces results/ and table.md only when every run and the table
# succeeded; ops_table.py prints the table (medians and ranges over the rounds, speedup =
# llama.cpp µs ÷ ours).
#
# Options: -t LIST  thread counts [1,2] (each also in ours' benchmark names: 1 or 2)
#          -R N     rounds [2]
# Environment: LLAMA_CPP (required), LLAMA_BUILD [build], TABLE_PYTHON [python3].
# Flags, paths and the binary are checked before anything is made: a bad one is one line, exit 2.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "ops.sh: $*" >&2; exit 2; }

T=1,2 ROUNDS=2
while getopts "t:R:h" opt; do
  case $opt in t) T=$OPTARG ;; R) ROUNDS=$OPTARG ;; h) usage 0 ;; *) usage ;; esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
[[ $T =~ ^[12](,[12])*$ ]] || die "-t '$T': want thread counts 1 and/or 2 (ours benchmark those)"
[[ $ROUNDS =~ ^[1-9][0-9]{0,3}$ ]] || die "-R '$ROUNDS': want a whole number ≥ 1"
[ -n "${LLAMA_CPP:-}" ] || die "set LLAMA_CPP to a built llama.cpp directory"
[ -d "$LLAMA_CPP" ] || die "LLAMA_CPP=$LLAMA_CPP: not a directory"
TBO=$LLAMA_CPP/${LLAMA_BUILD:-build}/bin/test-backend-ops
[ -x "$TBO" ] || die "missing $TBO (patch with patch_test_backend_ops.py, then build the target test-backend-ops)"
grep -q KIMI_OPS "$TBO" || die "$TBO: not built from a patched test-backend-ops.cpp (run patch_test_backend_ops.py, rebuild)"
[ ! -e "$1" ] || [ -d "$1" ] || die "WORK_DIR $1: exists and is not a directory"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
mkdir -p "$1"; WORK=$(cd "$1" && pwd)
log() { printf '[ops %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
fail() { echo "ops.sh: $1 failed (exit $2); the last lines of $3:" >&2; tail -20 "$3" >&2; exit 1; }

log "go test -c kernels/{kda,gemm,mla,moe} -> $WORK/bin"
for p in kda gemm mla moe; do
  (cd "$REPO" && go test -c -o "$WORK/bin/$p.test" "./kernels/$p")
done

RES=$WORK/results.new
rm -rf "$RES"; mkdir -p "$RES"
{ echo "date: $(date -Is)"; grep -m1 'model name' /proc/cpuinfo || true
  echo "llama.cpp: $(git -C "$LLAMA_CPP" rev-parse HEAD 2>/dev/null || echo '?')"
  echo "ktune: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?')"
  echo "args: -t $T -R $ROUNDS"; } >"$RES/meta.txt"

llama() {  # round
  local th f
  IFS=, read -r -a ths <<<"$T"
  for th in "${ths[@]}"; do
    f=$RES/llama_r$1_t$th.txt
    log "round $1: test-backend-ops, $th threads"
    { KIMI_OPS=1 GGML_N_THREADS=$th "$TBO" perf -b CPU -o GATED_DELTA_NET &&
      KIMI_OPS=1 GGML_N_THREADS=$th "$TBO" perf -b CPU -o MUL_MAT -p 'type_a=(q8_0|q4_0),type_b=f32,m=4096,n=(1|512),k=2304,' &&
      KIMI_OPS=1 GGML_N_THREADS=$th "$TBO" perf -b CPU -o MUL_MAT_ID &&
      KIMI_OPS=1 GGML_N_THREADS=$th "$TBO" perf -b CPU -o FLASH_ATTN_EXT; } >"$f" 2>&1 || fail "test-backend-ops ($th threads)" $? "$f"
  done
}
ours() {  # round
  local f=$RES/ours_r$1.txt
  log "round $1: go benchmarks"
  : >"$f"
  run() { (cd "$REPO/kernels/$1" && shift && "$@") >>"$f" 2>&1 || fail "go benchmarks ($1)" $? "$f"; }
  run kda "$WORK/bin/kda.test" -test.run '^$' -test.bench 'BenchmarkKDA/op=/dtype=f32/variant=(avx512$|avx512_chunk$)/'
  run gemm env KTUNE_BENCH_VARIANTS=avx512_vnni "$WORK/bin/gemm.test" -test.run '^$' \
    -test.bench 'BenchmarkGEMM/op=(gemv|gemm)/dtype=(q8|q4)$/variant=avx512_vnni$/m=(1|512)$/n=4096/k=2304/mem=cache/'
  run mla "$WORK/bin/mla.test" -test.run '^$' -test.bench 'BenchmarkMLACache/op=decode/dtype=f32/variant=avx512_bf16$/'
  run moe "$WORK/bin/moe.test" -test.run '^$' -test.bench 'BenchmarkMoEMatmulID/'
}
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then llama $r; ours $r; else ours $r; llama $r; fi
done
"${TABLE_PYTHON:-python3}" "$HERE/ops_table.py" "$RES" >"$RES/table.md" || fail "ops_table.py" $? "$RES/table.md"
rm -rf "$WORK/results"; mv "$RES" "$WORK/results"; cp "$WORK/results/table.md" "$WORK/table.md"
cat "$WORK/table.md"
