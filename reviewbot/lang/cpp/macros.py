"""Macros tree-sitter-cpp cannot parse, blanked before parsing so the code around them is read.

An inference engine's C++ is full of attribute-like macros (CUDA's `__global__`/`__device__`, export
macros, `C10_HOST_DEVICE`) and kernel launches (`kernel<<<grid, block>>>(...)`). tree-sitter reads none
of them as C++ and wraps the declaration that holds one in an ERROR node, so the function's derivations
are lost. Each such token is replaced by spaces of the same length (newlines kept), so every other
byte, line and column stays where it was: node positions, evidence lines and diff lines still agree.

Beyond the listed names, a few shapes no C++ parser reads as written are rewritten in place, each
recognised exactly: a conditional group inside an expression keeps its first branch (`static auto ths
=` / `#ifdef LEGACY` / ... / `#endif` / `.def(...)`); a `/* comment */` or blanks after the backslash of
a `#define`'s continuation line; an upper-case name between a call's `)` and its `;` (a chain macro); a
name between two string literals (`"%" PRId64 "\n"`); a statement macro alone on its line.

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

from reviewbot.lang.cpp.rewrites import closing_paren, rewrite, skip_literal

__all__ = ["ATTRIBUTE_MACROS", "CALL_MACROS", "WRAPPER_MACROS", "blank_macros", "declared", "extra_macros"]

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
    "GGML_RESTRICT",
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
    "LLAMA_COMMON_ATTRIBUTE_FORMAT",
)


# Macros that wrap a whole declaration and add a message: `DEPRECATED(int f(int x), "use g")`. The name,
# its parenthesis and the trailing `, "message")` go; the declaration inside is read as written.
WRAPPER_MACROS: tuple[str, ...] = ("DEPRECATED", "GGML_DEPRECATED", "LLAMA_DEPRECATED")


def _alternation(names: tuple[str, ...]) -> bytes:
    return b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))


_WORDS = re.compile(rb"(?<![\w])(?:" + _alternation(ATTRIBUTE_MACROS) + rb")(?![\w])")
_CALLS = re.compile(rb"(?<![\w])(?:" + _alternation(CALL_MACROS) + rb")\s*\(")
# A CUDA launch configuration: `<<<grid, block[, shared[, stream]]>>>`, on one or a few lines.
_LAUNCH = re.compile(rb"<<<[^;{}]*?>>>")
_WRAPPERS = re.compile(rb"(?<![\w])(?:" + _alternation(WRAPPER_MACROS) + rb")\s*\(")
# Any export macro by its suffix (`MLC_LLM_DLL static Tokenizer FromPath(...)`, `FOO_API int f();`): an
# upper-case name ending in _DLL/_API/_EXPORT/_IMPORT/_PUBLIC followed by a declaration's next word.
_EXPORT_SUFFIX = re.compile(
    rb"(?<![\w#])[A-Z][A-Z0-9_]*_(?:DLL|API|EXPORTS?|IMPORT|PUBLIC)(?![\w])(?=[ \t]+[A-Za-z_])"
)
_QUICK = re.compile(
    rb"_DLL|_API|_EXPORT|_IMPORT|_PUBLIC|__|<<<|C10_|TORCH_API|CUB_|CUTLASS_|LLAMA_|GGML_|TVM_DLL|MLC_API|DEPRECATED|\"C\"|\n[ \t]*[A-Z][A-Z0-9_]{2,}[ \t]*\n"
    rb"|\)[ \t]*[A-Z][A-Z0-9_]{2,}[ \t]*;|#[ \t]*define[^\n]*\\\n|\"[ \t]+[A-Z][A-Za-z0-9_]{2,}[ \t]+\""
)
# A preprocessor directive, with its continuation lines: a macro's own `#define LLAMA_API ...` must stay
# a definition (blanking its name leaves `#define  __declspec(...)`, an error that swallows the file).
_DIRECTIVE = re.compile(rb"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*")
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.DOTALL)
# A C header's `extern "C" {` and its `}`, each inside its own `#ifdef __cplusplus`: tree-sitter cannot
# pair braces across two conditional blocks and reads the whole header as one ERROR; without them the
# declarations between are read as at file scope, which is what a C++ compiler sees of them.
_EXTERN_C = re.compile(
    rb'#[ \t]*ifdef[ \t]+__cplusplus[ \t]*\n\s*(?:extern[ \t]+"C"[ \t]*\{|\})[ \t]*\n\s*#[ \t]*endif'
)


# A statement-like macro written alone on its line with no semicolon, after a statement or a brace
# (`CHECK_ARG` in an argument parser expands to `if (++i >= argc) { ... }`): not C++ as written, and
# tree-sitter wraps it and the next statement in an ERROR. An upper-case name alone on a line in that
# place is nothing else in C++ (a constant would end an expression, need a `;` or be an enumerator with
# a `,`); the next line must start a statement, so a lone enumerator before `};` is left alone.
_STATEMENT_MACRO = re.compile(
    rb"(?m)(?<=[;{}])[ \t]*(?://[^\n]*)?\n[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*(?=\n(?:[ \t]*(?://[^\n]*)?\n)*[ \t]*[A-Za-z_#])"
)


# A name between two string literals (`"%" PRId64 "\n"`): a macro that expands to a literal, concatenated.
# Blanks on both sides: `"CUDA_HOME"` is a literal's own text, never blanked.
_LITERAL_MACRO = re.compile(rb'(?<=")[ \t]+([A-Z][A-Za-z0-9_]{2,})[ \t]+(?=")')
_FORMAT_MACRO = re.compile(rb"^(?:PRI|SCN)[diouxXb]\w*$")
# An upper-case name between a call's `)` and the `;` (`.def(init<>()) REGISTER_PROPERTYS;`, `void f()
# OVERRIDE;`): two expressions side by side are no C++, so it is a macro (a method chain, an attribute).
_TRAILING_MACRO = re.compile(rb"(?<=\))[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*(?=;)")


def _closes_call(source: bytes, close: int) -> bool:
    """The `)` at `close` ends a call's arguments (its `(` follows a name, a `>` or a `)`), not a cast."""
    depth, i = 0, close
    while i >= 0:
        ch = source[i]
        if ch == 0x29:  # )
            depth += 1
        elif ch == 0x28:  # (
            depth -= 1
            if depth == 0:
                j = i - 1
                while j >= 0 and source[j] in b" \t":
                    j -= 1
                return j >= 0 and (chr(source[j]).isalnum() or source[j] in b"_>)")
        elif ch in b";{}":
            return False
        i -= 1
    return False


def _last_top_comma(source: bytes, open_paren: int, close: int) -> int | None:
    """The last comma at the top level of the parenthesis (before a wrapper macro's message), string
    and character literals skipped (a message may hold commas)."""
    depth, last, i = 0, None, open_paren
    while i < close:
        ch = source[i]
        if ch in b"\"'":
            i = skip_literal(source, i, close)
            continue
        if ch in b"([{":
            depth += 1
        elif ch in b")]}":
            depth -= 1
        elif ch == 0x2C and depth == 1:  # ,
            last = i
        i += 1
    return last


# A line continuation with blanks after the backslash (`DEF_PROPERTY(qk_norm, qk_norm_) \    `): compilers
# accept it (GCC warns), tree-sitter ends the macro there. The blanks move before the backslash.
_LOOSE_CONTINUATION = re.compile(rb"\\([ \t]+)(?=\r?\n)")


def blank_macros(source: bytes, extra: tuple[str, ...] = ()) -> bytes:
    """`source` with the known macros (and `extra` attribute-like names) replaced by spaces."""
    source = rewrite(source)
    if b"#" in source:
        source = _LOOSE_CONTINUATION.sub(lambda m: m.group(1) + b"\\", source)
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
    for m in _EXPORT_SUFFIX.finditer(source):
        blank(m.start(), m.end())
    for m in _LAUNCH.finditer(source):
        blank(m.start(), m.end())
    for m in _CALLS.finditer(source):
        close = closing_paren(source, m.end() - 1)
        if close is not None:  # an unbalanced call is left as written
            blank(m.start(), close + 1)
    for m in _WRAPPERS.finditer(source):
        close = closing_paren(source, m.end() - 1)
        comma = _last_top_comma(source, m.end() - 1, close) if close is not None else None
        if close is not None and comma is not None:
            blank(m.start(), m.end())
            blank(comma, close + 1)
    for m in _EXTERN_C.finditer(source):
        blank(m.start(), m.end())
    for m in _STATEMENT_MACRO.finditer(source):
        blank(m.start(1), m.end(1))
    for m in _TRAILING_MACRO.finditer(source):
        if _closes_call(source, m.start() - 1):  # `(int) SIZE_MAX;` is a cast of a value: kept
            blank(m.start(1), m.end(1))
    for m in _LITERAL_MACRO.finditer(source):
        # only a known format macro or one the file defines: `" NONE "` may be a literal's own text
        name = m.group(1)
        if _FORMAT_MACRO.match(name) or re.search(rb"(?m)^[ \t]*#[ \t]*define[ \t]+" + name + rb"\b", source):
            blank(m.start(1), m.end(1))
    for m in _DIRECTIVE.finditer(source):
        out[m.start() : m.end()] = source[m.start() : m.end()]  # directives as written (see _DIRECTIVE)
        # ...but a `/* comment */` on a continuation line of a `#define` ends tree-sitter's reading of the
        # macro's body there, and the rest of the definition (and what follows) becomes one ERROR
        for c in _BLOCK_COMMENT.finditer(source, m.start(), m.end()):
            blank(c.start(), c.end())
    return bytes(out)
