#!/usr/bin/env python3
"""ops.sh's table: results dir (llama_r<R>_t<T>.txt from test-backend-ops perf, ours_r<R>.txt from
go test -bench) -> markdown rows, medians and ranges over rounds, speedup = llama.cpp / ours.
Standard library only. A row missing on either side is named on stderr and the exit status is 1."""
import collections
import glob
import os
import re
import statistics as st
import sys

if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
    sys.exit("usage: ops_table.py RESULTS_DIR")
D = sys.argv[1]
L = collections.defaultdict(list)  # (op, params, threads) -> µs per run
O = collections.defaultdict(list)  # benchmark name -> µs per op
for f in glob.glob(os.path.join(D, 'llama_r*_t*.txt')):
    th=int(re.search(r'_t(\d)',f).group(1))
    for line in open(f):
        m=re.match(r'\s+(\w+)\((.*)\):\s+\d+ runs -\s+([\d.]+) us/run',line)
        if m: L[(m.group(1),m.group(2),th)].append(float(m.group(3)))
for f in glob.glob(os.path.join(D, 'ours_r*.txt')):
    for line in open(f):
        m=re.match(r'(Benchmark\S+)-\d+\s+\d+\s+([\d.]+) ns/op',line)
        if m: O[m.group(1)].append(float(m.group(2))/1e3)
THREADS = sorted({k[2] for k in L})
if not THREADS:
    sys.exit(f"ops_table.py: {D}: no test-backend-ops results (llama_r*_t*.txt)")


def lk(op, pat, th):
    ks = [k for k in L if k[0] == op and re.search(pat, k[1]) and k[2] == th]
    return L[ks[0]] if len(ks) == 1 else None


def ok(pat, th):
    ks = [k for k in O if re.search(pat, k) and k.endswith('threads=%d' % th)]
    return O[ks[0]] if len(ks) == 1 else None
rows=[
 ("KDA decode 1 token","GATED_DELTA_NET",r"n_seq_tokens=1,n_seqs=1,",r"op=decode/dtype=f32/variant=avx512/b=1/h=32/dk=128/dv=128/threads"),
 ("KDA decode 8 sequences","GATED_DELTA_NET",r"n_seq_tokens=1,n_seqs=8,",r"op=decode/dtype=f32/variant=avx512/b=8/h=32/dk=128/dv=128/threads"),
 ("KDA prefill 512","GATED_DELTA_NET",r"n_seq_tokens=512,",r"op=prefill/dtype=f32/variant=avx512_chunk/b=1/t=512/"),
 ("KDA prefill 4096","GATED_DELTA_NET",r"n_seq_tokens=4096,",r"op=prefill/dtype=f32/variant=avx512_chunk/b=1/t=4096/"),
 ("GEMV 4096x2304 q8 (cache)","MUL_MAT",r"type_a=q8_0,.*n=1,",r"op=gemv/dtype=q8/variant=avx512_vnni/m=1/n=4096/k=2304/mem=cache/"),
 ("GEMV 4096x2304 q4 (cache)","MUL_MAT",r"type_a=q4_0,.*n=1,",r"op=gemv/dtype=q4/variant=avx512_vnni/m=1/n=4096/k=2304/mem=cache/"),
 ("GEMM m=512 4096x2304 q8","MUL_MAT",r"type_a=q8_0,.*n=512,",r"op=gemm/dtype=q8/variant=avx512_vnni/m=512/n=4096/k=2304/mem=cache/"),
 ("GEMM m=512 4096x2304 q4","MUL_MAT",r"type_a=q4_0,.*n=512,",r"op=gemm/dtype=q4/variant=avx512_vnni/m=512/n=4096/k=2304/mem=cache/"),
 ("MLA decode 32K bf16 cache (llama bf16)","FLASH_ATTN_EXT",r"kv=32768.*type_K=bf16",r"BenchmarkMLACache/.*c=32768/.*cache=bf16/"),
 ("MLA decode 32K bf16 cache (llama f16)","FLASH_ATTN_EXT",r"kv=32768.*type_K=f16",r"BenchmarkMLACache/.*c=32768/.*cache=bf16/"),
]
for dt,gt in (("q8","q8_0"),("q4","q4_0")):
    for n in (1,8,64,512):
        rows.append((f"MoE {dt} gate/up 1024x2304, {n} tok","MUL_MAT_ID",rf"type_a={gt},.*b=1,m=1024,n={n},k=2304",rf"dtype={dt}/n={n}/e=256/k=8/m=1024/c=2304/"))
        rows.append((f"MoE {dt} down 2304x1024, {n} tok","MUL_MAT_ID",rf"type_a={gt},.*b=0,m=2304,n={n},k=1024",rf"dtype={dt}/n={n}/e=256/k=8/m=2304/c=1024/"))


def f(v):
    return f"{st.median(v):.0f} ({min(v):.0f}–{max(v):.0f})"


missing = 0
print("| op | threads | ktune µs | llama.cpp µs | speedup |\n|---|---:|---:|---:|---:|")
for name, op, lp, op_ in rows:
    for th in THREADS:
        a, b = ok(op_, th), lk(op, lp, th)
        if not a or not b:
            print(f"ops_table.py: {name}, {th} threads: no {'ktune' if not a else 'llama.cpp'} result", file=sys.stderr)
            missing += 1
            continue
        print(f"| {name} | {th} | {f(a)} | {f(b)} | {st.median(b) / st.median(a):.2f} |")
sys.exit(1 if missing else 0)
