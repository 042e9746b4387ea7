"""Macros tree-sitter-cpp cannot parse, blanked before parsing so the code around them is read.

An inference engine's C++ is full of attribute-like macros (CUDA's `__global__`/`__device__`, export
macros, `C10_HOST_DEVICE`) and kernel launches (`kernel<<<grid, block>>>(...)`). tree-sitter reads none
of them as C++ and wraps the declaration that holds one in an ERROR node, so the function's derivations
are lost. Each such token is replaced by spaces of the same length (newlines kept), so every other
byte, line and column stays where it was: node positions, evidence lines and diff lines still agree.

The list is deliberately short and exact (whole identifiers): blanking a name that is not a macro
would change the code read. A repository names its own attribute-like macros in `.reviewbot.toml`
(`[cpp] macros`); the review declares them for its duration (`declared`), so every parse of that
review, the changed files and the repository index alike, reads them the same way, and the facts
cache keeps their facts apart (`extra_macros` is part of the key).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["ATTRIBUTE_MACROS", "CALL_MACROS", "blank_macros", "declared", "extra_macros"]

_EXTRA: ContextVar[tuple[str, ...]] = ContextVar("reviewbot_cpp_macros", default=())


def extra_macros() -> tuple[str, ...]:
    """The repository's own attribute-like macros declared for the review under way (sorted)."""
    return _EXTRA.get()


@contextmanager
def declared(names: tuple[str, ...]) -> Iterator[None]:
    """Blank `names` too in every C++ parse inside the block."""
    token = _EXTRA.set(tuple(sorted(set(names))))
    try:
        yield
    finally:
        _EXTRA.reset(token)


# Identifiers that stand alone before or inside a declaration and expand to an attribute or nothing.
ATTRIBUTE_MACROS: tuple[str, ...] = (
    # CUDA / HIP qualifiers
    "__global__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__inline__",
    "__noinline__",
    "__shared__",
    "__constant__",
    "__managed__",
    "__restrict__",
    "__restrict",
    # PyTorch / c10
    "C10_HOST_DEVICE",
    "C10_DEVICE",
    "C10_HOST",
    "C10_API",
    "C10_EXPORT",
    "C10_IMPORT",
    "C10_ALWAYS_INLINE",
    "C10_NODISCARD",
    "C10_UNUSED",
    "TORCH_API",
    # CUB / CUTLASS
    "CUB_RUNTIME_FUNCTION",
    "CUB_NS_PREFIX",
    "CUB_NS_POSTFIX",
    "CUTLASS_DEVICE",
    "CUTLASS_HOST_DEVICE",
    "CUTLASS_GLOBAL",
    # export macros of the engines' public headers
    "LLAMA_API",
    "GGML_API",
    "GGML_CALL",
    "TVM_DLL",
    "MLC_API",
)

# Macros written as a call that expands to an attribute: the name and its parenthesised arguments go.
CALL_MACROS: tuple[str, ...] = (
    "__launch_bounds__",
    "__align__",
    "__attribute__",
    "__declspec",
    "C10_LAUNCH_BOUNDS_0",
    "C10_LAUNCH_BOUNDS_1",
    "LLAMA_ATTRIBUTE_FORMAT",
    "GGML_ATTRIBUTE_FORMAT",
)


def _alternation(names: tuple[str, ...]) -> bytes:
    return b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))


_WORDS = re.compile(rb"(?<![\w])(?:" + _alternation(ATTRIBUTE_MACROS) + rb")(?![\w])")
_CALLS = re.compile(rb"(?<![\w])(?:" + _alternation(CALL_MACROS) + rb")\s*\(")
# A CUDA launch configuration: `<<<grid, block[, shared[, stream]]>>>`, on one or a few lines.
_LAUNCH = re.compile(rb"<<<[^;{}]*?>>>")
_QUICK = re.compile(rb"__|<<<|C10_|TORCH_API|CUB_|CUTLASS_|LLAMA_|GGML_|TVM_DLL|MLC_API")


def blank_macros(source: bytes, extra: tuple[str, ...] = ()) -> bytes:
    """`source` with the known macros (and `extra` attribute-like names) replaced by spaces."""
    if not extra and _QUICK.search(source) is None:
        return source  # most config sources: nothing to do, no copy
    out = bytearray(source)

    def blank(start: int, end: int) -> None:
        for i in range(start, end):
            if out[i] != 0x0A:  # keep newlines: line numbers must not move
                out[i] = 0x20

    words = (
        _WORDS
        if not extra
        else re.compile(rb"(?<![\w])(?:" + _alternation(ATTRIBUTE_MACROS + extra) + rb")(?![\w])")
    )
    for m in words.finditer(source):
        blank(m.start(), m.end())
    for m in _LAUNCH.finditer(source):
        blank(m.start(), m.end())
    for m in _CALLS.finditer(source):
        depth, i = 0, m.end() - 1
        while i < len(source):
            ch = source[i]
            if ch == 0x28:  # (
                depth += 1
            elif ch == 0x29:  # )
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth == 0:  # an unbalanced call is left as written
            blank(m.start(), i + 1)
    return bytes(out)
