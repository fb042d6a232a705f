#!/usr/bin/env python3
"""Adds Kimi Linear's single-op perf cases to a llama.cpp checkout's tests/test-backend-ops.cpp.

Usage: python3 patch_test_backend_ops.py LLAMA_CPP_DIR

Idempotent (a patched file is left as it is). After it, rebuild the target test-backend-ops.
With the environment variable KIMI_OPS set, `test-backend-ops perf` runs only these cases:
  GATED_DELTA_NET, KDA mode, 32 heads x 128: 1 token x 1 and 8 sequences, 512 and 4096 tokens;
  MUL_MAT 4096x2304, 1024x2304, 2304x4096, 2304x1024 at n = 1, 8, 64, 512 (q8_0, q4_0, bf16, f32);
  MUL_MAT_ID 256 experts, top 8: 1024x2304 with the activation shared by a token's experts
    (gate/up) and 2304x1024 with one row per token and expert (down), q8_0 and q4_0, n = 1, 8, 64, 512;
  FLASH_ATTN_EXT as MLA's absorbed decode: K 576, V 512, 32 query heads on one KV head, one
    query, kv 4096 and 32768, with a mask, f16 and bf16.
GGML_N_THREADS=N sets the CPU backend's threads (the tool's default is every hardware thread).
"""
import pathlib
import sys

MARK = "KIMI_OPS"

CASES = """
    if (getenv("KIMI_OPS")) { // Kimi Linear shapes only (ktune bench/peers/patch_test_backend_ops.py)
        for (int64_t ns : {1, 8}) {
            test_cases.emplace_back(new test_gated_delta_net(GGML_TYPE_F32, 32, 128, 1, ns, 1, false, true, 1));
        }
        for (int64_t nt : {512, 4096}) {
            test_cases.emplace_back(new test_gated_delta_net(GGML_TYPE_F32, 32, 128, nt, 1, 1, false, true, 1));
        }
        for (ggml_type ta : {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_BF16, GGML_TYPE_F32}) {
            for (auto nk : std::vector<std::pair<int64_t, int64_t>>{{4096, 2304}, {1024, 2304}, {2304, 4096}, {2304, 1024}}) {
                for (int64_t n : {1, 8, 64, 512}) {
                    test_cases.emplace_back(new test_mul_mat(ta, GGML_TYPE_F32, nk.first, n, nk.second, {1, 1}, {1, 1}));
                }
            }
        }
        for (ggml_type ta : {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0}) {
            for (int64_t n : {1, 8, 64, 512}) {
                test_cases.emplace_back(new test_mul_mat_id(ta, GGML_TYPE_F32, 256, 8, true, 1024, n, 2304));
                test_cases.emplace_back(new test_mul_mat_id(ta, GGML_TYPE_F32, 256, 8, false, 2304, n, 1024));
            }
        }
        for (ggml_type tk : {GGML_TYPE_F16, GGML_TYPE_BF16}) {
            for (int64_t kv : {4096, 32768}) {
                test_cases.emplace_back(new test_flash_attn_ext(576, 512, 1, {32, 1}, kv, 1, true, false, 0.0f, 0.0f,
                                                                GGML_PREC_F32, tk, tk));
            }
        }
        return test_cases;
    }
"""

PERF = "static std::vector<std::unique_ptr<test_case>> make_test_cases_perf() {\n    std::vector<std::unique_ptr<test_case>> test_cases;\n"
THREADS_OLD = "ggml_backend_set_n_threads_fn(backend.get(), N_THREADS);"
THREADS_NEW = 'ggml_backend_set_n_threads_fn(backend.get(), getenv("GGML_N_THREADS") ? atoi(getenv("GGML_N_THREADS")) : N_THREADS);'


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: patch_test_backend_ops.py LLAMA_CPP_DIR", file=sys.stderr)
        return 2
    path = pathlib.Path(sys.argv[1]) / "tests" / "test-backend-ops.cpp"
    try:
        src = path.read_text()
    except OSError as e:
        print(f"patch_test_backend_ops: {path}: {e.strerror}", file=sys.stderr)
        return 2
    if MARK in src:
        print(f"{path}: already patched")
        return 0
    for what, anchor in (("make_test_cases_perf", PERF), ("the backend's thread count", THREADS_OLD)):
        if src.count(anchor) != 1:
            print(f"patch_test_backend_ops: {path}: {what} not found as expected (another llama.cpp version?)", file=sys.stderr)
            return 2
    src = src.replace(PERF, PERF + CASES).replace(THREADS_OLD, THREADS_NEW)
    tmp = path.with_suffix(".cpp.tmp")
    tmp.write_text(src)
    tmp.replace(path)
    print(f"{path}: patched; rebuild the target test-backend-ops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
