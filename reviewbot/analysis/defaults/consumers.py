"""Whether a default reaches numerics or persistent data, by the words of the code that consumes it (pure):
a default that changes a dtype, a kernel or what is written to disk is a P1 for default-changed."""

from __future__ import annotations

import re

__all__ = ["consumer_words", "reaches_numerics"]

# Words that say a value changes numerics (types, precision, kernels that compute differently) or
# writes persistent data (files, engines, exports): a default reaching them is P1.
_NUMERIC_WORDS = frozenset(
    {"dtype", "precision", "fp8", "fp16", "bf16", "fp32", "half", "int8", "int4", "quant", "quantization",
     "quantize", "trt", "tensorrt", "onnx", "scale", "scaling", "eps", "epsilon", "rounding", "logn", "kernel",
     "attention_backend", "mha", "mla", "fmha"}
)  # fmt: skip
_PERSISTENT_WORDS = frozenset(
    {"save", "dump", "export", "persist", "serialize", "checkpoint", "mkdir", "makedirs", "onnx", "engine_dir",
     "cache_dir", "backup", "retention"}
)  # fmt: skip
_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def consumer_words(texts: list[str]) -> set[str]:
    """Lower-case words of identifiers (`VITEngine` -> vit, engine; `use_fp8_kv` -> use, fp8, kv)."""
    words: set[str] = set()
    for t in texts:
        for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", t):
            words.add(ident.lower())
            for part in ident.split("_"):
                words.update(w.lower() for w in _SPLIT.findall(part))
                if part:
                    words.add(part.lower())
    return words


def reaches_numerics(texts: list[str]) -> str:
    """The first word (sorted) of `texts` that says numerics or persistent data; "" for none."""
    words = consumer_words(texts)
    hits = sorted(words & (_NUMERIC_WORDS | _PERSISTENT_WORDS))
    return hits[0] if hits else ""
