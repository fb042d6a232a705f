#!/usr/bin/python3
"""Run llama.cpp's convert_hf_to_gguf.py on a random (tokenizer-less) Kimi Linear checkpoint.

Usage: /usr/bin/python3 convert_kimi_gguf.py LLAMA_CPP_DIR HF_DIR [converter args...]
  e.g. convert_kimi_gguf.py /work/peers/llama.cpp /work/peers/kimi2 --outtype f16 --outfile kimi2-f16.gguf

Works with Debian's python3-torch 1.13 + python3-numpy and no `transformers`, without editing
llama.cpp. Before importing the converter it:
  1. aliases torch dtypes that torch 1.13 lacks (float8_e4m3fn, float8_e5m2) to torch.uint8; the
     converter only names them in lookup tables (a BF16 checkpoint has no F8 tensors);
  2. installs a stub `transformers` module: AutoConfig.from_pretrained raises, so the converter
     falls back to reading config.json; AutoTokenizer also raises (never reached, see 3);
  3. replaces KimiLinearModel.set_vocab with a placeholder vocabulary of vocab_size tokens
     (tokenizer model "gpt2", pre-tokenizer "kimi-k2", tokens <t0>..<tN-1>, all NORMAL, no merges;
     llama.cpp's loader skips BPE merges for "kimi-k2"), plus bos/eos ids from config.json;
  4. installs a silent `tqdm` stub if tqdm is missing (the GGUF writer's progress bar).
The placeholder vocabulary is only good for benchmarks on token ids, not for real text.
"""
import os
import runpy
import sys
import types

if len(sys.argv) < 3:
    sys.exit(__doc__)
llama_dir = os.path.abspath(sys.argv[1])
conv = os.path.join(llama_dir, "convert_hf_to_gguf.py")

import torch  # noqa: E402

for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
    if not hasattr(torch, _name):
        setattr(torch, _name, torch.uint8)

if "transformers" not in sys.modules:
    try:
        import transformers  # noqa: F401
    except ImportError:
        _tf = types.ModuleType("transformers")

        class _NoTransformers:
            @classmethod
            def from_pretrained(cls, *a, **k):
                raise RuntimeError("transformers is not installed (stub from convert_kimi_gguf.py)")

        _tf.AutoConfig = _NoTransformers
        _tf.AutoTokenizer = _NoTransformers
        sys.modules["transformers"] = _tf

try:
    import tqdm  # noqa: F401  (gguf_writer's progress bar)
except ImportError:
    _tq = types.ModuleType("tqdm")

    class _NoBar:
        def __init__(self, *a, **k):
            self.desc = k.get("desc", "")

        def update(self, *a, **k):
            pass

        def reset(self, *a, **k):
            pass

        def set_description(self, *a, **k):
            pass

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    _tq.tqdm = _NoBar
    sys.modules["tqdm"] = _tq

sys.path.insert(0, llama_dir)
sys.path.insert(1, os.path.join(llama_dir, "gguf-py"))
import gguf  # noqa: E402
from conversion import kimi_linear  # noqa: E402


def _placeholder_vocab(self):
    n = int(self.hparams["vocab_size"])
    w = self.gguf_writer
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("kimi-k2")
    w.add_token_list([f"<t{i}>" for i in range(n)])
    w.add_token_types([gguf.TokenType.NORMAL] * n)
    # no merges: add_token_merges([]) would write nothing anyway; llama.cpp skips merges for kimi-k2
    for key, add in (("bos_token_id", w.add_bos_token_id), ("eos_token_id", w.add_eos_token_id)):
        tid = self.hparams.get(key)
        if isinstance(tid, int) and 0 <= tid < n:
            add(tid)


kimi_linear.KimiLinearModel.set_vocab = _placeholder_vocab

sys.argv = [conv] + sys.argv[2:]
runpy.run_path(conv, run_name="__main__")
