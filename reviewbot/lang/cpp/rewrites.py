"""Shapes of real C++ that tree-sitter-cpp does not read as written, rewritten in place before parsing.

Each rewrite keeps every newline (and, but for a dropped conditional branch, every byte's column), so
node positions, evidence lines and diff lines still agree with the file. Each is recognised exactly and
only replaces what no analysis reads (a directive, a keyword, an instantiation); see `macros` for the
macro names themselves. Found on real sources that a review had to call INCOMPLETE:

- a conditional group inside an expression, or splitting an `if` / `else if` chain (an option parser's
  `#ifdef SSL` / `else if (arg == "--ssl-key-file")` / `#endif`): the group is read as one build sees it;
- an explicit instantiation `template class Runner<half>;` (the grammar asks for a declarator);
- `typename T::Args(...)` in an expression (the grammar knows `typename` only in declarations);
- an explicit conversion call `s.operator std::string()`, `ref.operator->()`;
- a declaration macro invoked alone on its line with no `;` (`INSTANTIATE_LAUNCHERS(half, 256)`);
- a declaring macro statement in a class body (`TVM_FFI_DECLARE_OBJECT_INFO("mlc.Config", Node, Object);`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["closing_paren", "rewrite", "skip_literal"]

# A conditional group written inside an expression (`static auto ths =` / `#ifdef LEGACY` / `f("a")` /
# `#else` / `f("b", "c")` / `#endif` / `.def(...)`): tree-sitter cannot read directives there and wraps
# the whole file in one ERROR. The line before it ends an unfinished expression, or the line after it
# continues one. A group that splits an `else if` chain (its first line or the line after its `#endif`
# starts with `else` or `} else`) is the same problem in a statement: tree-sitter loses the `if` the
# `else` belongs to, and every later arm of the chain becomes an ERROR.
_COND_OPEN = re.compile(rb"^[ \t]*#[ \t]*if(?:n?def)?\b")
_COND_ALT = re.compile(rb"^[ \t]*#[ \t]*(?:else|elif)\b")
_COND_END = re.compile(rb"^[ \t]*#[ \t]*endif\b")
_UNFINISHED = re.compile(rb"(?:[=(,?]|&&|\|\||\breturn)[ \t]*$")  # checked with any `//` comment cut off
_LINE_COMMENT = re.compile(rb'//[^"\n]*$')
_CONTINUED = re.compile(rb"^[ \t]*(?:\.(?!\.)|->|\)|,|\?|&&|\|\|)")
_ELSE_ARM = re.compile(rb"^[ \t]*\}?[ \t]*else\b")


def _significant(lines: list[bytes], start: int, step: int) -> bytes:
    """The first line from `start` (going by `step`) that is neither blank nor a `//` comment."""
    i = start
    while 0 <= i < len(lines):
        stripped = lines[i].strip()
        if stripped and not stripped.startswith(b"//"):
            return lines[i]
        i += step
    return b""


def _conditionals(source: bytes) -> list[tuple[int, int, int]]:
    """(open, first alternative or -1, end) line indexes of each conditional group without nested
    groups that sits inside an expression (and has an `#else`/`#elif`) or splits an `else if` chain."""
    lines = source.split(b"\n")
    found: list[tuple[int, int, int]] = []
    i = 0
    while i < len(lines):
        if not _COND_OPEN.match(lines[i]):
            i += 1
            continue
        alt, j = -1, i + 1
        while j < len(lines) and not _COND_END.match(lines[j]) and not _COND_OPEN.match(lines[j]):
            if alt < 0 and _COND_ALT.match(lines[j]):
                alt = j
            j += 1
        if j < len(lines) and _COND_END.match(lines[j]):
            before, after = _significant(lines, i - 1, -1), _significant(lines, j + 1, 1)
            in_expression = _UNFINISHED.search(_LINE_COMMENT.sub(b"", before).rstrip()) or _CONTINUED.match(
                after
            )
            if (
                (in_expression and alt > 0)
                or _ELSE_ARM.match(_significant(lines, i + 1, 1))
                or _ELSE_ARM.match(after)
            ):
                found.append((i, alt, j))
        i = j if j > i else i + 1
    return found


# A cheap look before the line-by-line scan (it runs on every C++ file of the index): an `#if` right
# after a line that ends unfinished or right before an `else`, or an `#endif` right before a line that
# continues an expression or starts an `else`.
_MAYBE_CONDITIONAL = re.compile(
    rb"(?m)(?:[=(,?]|&&|\|\||\breturn)[ \t]*(?://[^\n]*)?\n(?:[ \t]*\n)*[ \t]*#[ \t]*if"
    rb"|#[ \t]*endif[^\n]*\n(?:[ \t]*\n)*[ \t]*(?:\.|->|\)|,|\?|&&|\|\||\}?[ \t]*else\b)"
    rb"|#[ \t]*if[^\n]*\n(?:[ \t]*\n)*[ \t]*\}?[ \t]*else\b"
)


def _keep_first_branch(source: bytes) -> bytes:
    """`source` with each such conditional group reduced to its first branch: its directives and the
    other branches blanked (lines kept), so the code reads as one build sees it."""
    if _MAYBE_CONDITIONAL.search(source) is None:
        return source
    groups = _conditionals(source)
    if not groups:
        return source
    lines = source.split(b"\n")
    for open_, alt, end in groups:
        for k in (open_, *(range(alt, end + 1) if alt > 0 else (end,))):
            lines[k] = b" " * len(lines[k])
    return b"\n".join(lines)


# `template class Runner<__nv_bfloat16>;` (or `extern template struct ...;`): an explicit instantiation
# declares nothing a review reads, and tree-sitter-cpp asks it for a declarator (a MISSING node).
_INSTANTIATION = re.compile(rb"(?m)^[ \t]*(?:extern[ \t]+)?template[ \t]+(?:class|struct)[ \t]+[^;{}()=]*;")
# `typename T::Args(...)` / `{typename T::Args{...}}` in an expression: without the keyword it is the
# same call, which tree-sitter reads. Only after `=`, `(`, `,`, `{` or `return` and before a qualified
# name that is called, so template parameters (`<typename T, typename U>`) and declarations stay.
_EXPRESSION_TYPENAME = re.compile(
    rb"(?:[=(,{]|\breturn)\s*(typename)[ \t]+[A-Za-z_][\w:]*(?:<[^<>;{}]*>)?::\w+[ \t]*[({]"
)
# `s.operator std::string()`: an explicit conversion call; `s ()` (a call of `s`) reads the same names.
# Likewise `ref.operator->()`, TVM's way to get the object a reference holds.
_CONVERSION_CALL = re.compile(
    rb"(?:\.|->)operator(?:[ \t]+[A-Za-z_][\w:]*(?:<[^<>;{}()]*>)?[ \t]*[&*]?|[ \t]*->)(?=[ \t]*\(\))"
)
# A declaration macro invoked alone on its line with no `;` (`INSTANTIATE_MMHA_LAUNCHERS(half, 256)` at
# namespace scope): two declarators side by side are no C++, so it is a macro that expands to whole
# declarations. After a `;`, `{`, `}`, a directive or the file's start, and before a line that starts a
# statement (not gtest's `TEST(A, B)` then its `{` body, not a check macro's `<< "message"`).
_DECLARATION_MACRO = re.compile(rb"(?m)^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*\(")
# A declaring macro invoked as a statement in a class body (`TVM_FFI_DECLARE_OBJECT_INFO("mlc.Config",
# ConfigNode, Object);`, `TVM_MODULE_VTABLE_ENTRY("reload", &Impl::Reload);`): a call is no member
# declaration, and tree-sitter wraps the class in an ERROR. Only names made of DECLARE / DEFINE / VTABLE /
# REGISTER words, alone on their line with their `;`: a check or a log macro in a body stays.
_DECLARING_CALL = re.compile(
    rb"(?m)^[ \t]*((?:[A-Z][A-Z0-9]*_)*(?:DECLARE|DEFINE|VTABLE|REGISTER)(?:_[A-Z0-9]+)*)[ \t]*\("
)
_ENDS_STATEMENT = re.compile(rb"(?:[;{}]|^[ \t]*#.*)$")
_STARTS_STATEMENT = re.compile(rb"(?:[A-Za-z_#}~]|$)")


def _previous_line(source: bytes, start: int) -> bytes:
    """The nearest line before `start` that is neither blank nor a `//` comment (with a `//` cut);
    read backwards line by line, so a file full of macro calls stays linear."""
    end = source.rfind(b"\n", 0, start)
    while end >= 0:
        begin = source.rfind(b"\n", 0, end) + 1
        line = source[begin:end]
        stripped = line.strip()
        if stripped and not stripped.startswith(b"//"):
            return line if stripped.startswith(b"#") else _LINE_COMMENT.sub(b"", line).rstrip()
        end = begin - 1
    return b""


def _next_line(source: bytes, eol: int) -> bytes:
    """The nearest line after the newline at `eol` that is neither blank nor a `//` comment, stripped."""
    begin = eol + 1
    while begin < len(source):
        end = source.find(b"\n", begin)
        end = len(source) if end < 0 else end
        stripped = source[begin:end].strip()
        if stripped and not stripped.startswith(b"//"):
            return stripped
        begin = end + 1
    return b""


def _alone(pattern: re.Pattern[bytes], source: bytes) -> Iterator[tuple[re.Match[bytes], int, int, bytes]]:
    """Each match of `pattern` (ending in a call's `(`) whose parenthesis closes: the match, the index of
    its `)`, the end of that line and the rest of the line after the `)` (a `//` comment cut, stripped)."""
    for m in pattern.finditer(source):
        close = closing_paren(source, m.end() - 1, b";{}")
        if close is None:
            continue
        eol = source.find(b"\n", close)
        eol = len(source) if eol < 0 else eol
        yield m, close, eol, _LINE_COMMENT.sub(b"", source[close + 1 : eol]).strip()


def _declaration_macros(source: bytes) -> list[tuple[int, int]]:
    """(start, end) byte ranges of each declaration macro invocation (see `_DECLARATION_MACRO`)."""
    found: list[tuple[int, int]] = []
    for m, close, eol, rest in _alone(_DECLARATION_MACRO, source):
        if rest:
            continue  # `FOO(x) {`, `FOO(x);`, `FOO(x) + 1`: not alone on its line
        if not _STARTS_STATEMENT.match(_next_line(source, eol)):
            continue  # `{` (a body), `<< "message"`, `.def(...)`: the invocation goes on
        before = _previous_line(source, m.start())
        if before.endswith(b"\\") or (before and not _ENDS_STATEMENT.search(before)):
            continue  # inside a `#define`'s continuation lines, or after an unfinished line
        found.append((m.start(1), close + 1))
    return found


def _declaring_calls(source: bytes) -> list[tuple[int, int]]:
    """(start, end) byte ranges of each declaring macro statement (see `_DECLARING_CALL`), `;` included."""
    return [
        (m.start(1), source.index(b";", close) + 1)
        for m, close, _, rest in _alone(_DECLARING_CALL, source)
        if rest == b";"
    ]


def skip_literal(source: bytes, i: int, end: int) -> int:
    """The index after the string or character literal that opens at `i` (a backslash escapes)."""
    quote = source[i]
    i += 1
    while i < end and source[i] != quote:
        i += 2 if source[i] == 0x5C else 1
    return i + 1


def closing_paren(source: bytes, open_paren: int, stop: bytes = b"") -> int | None:
    """The index of the `)` that closes the `(` at `open_paren`, string and character literals skipped
    (`DEPRECATED(f(), "use g() :)")`); None when it is not closed, or when a byte of `stop` comes first
    (`;{}` for a declaration macro's arguments: a statement or a block inside is not one)."""
    depth, i = 0, open_paren
    while i < len(source):
        ch = source[i]
        if ch in b"\"'":
            i = skip_literal(source, i, len(source))
            continue
        if ch == 0x28:  # (
            depth += 1
        elif ch == 0x29:  # )
            depth -= 1
            if depth == 0:
                return i
        elif ch in stop:
            return None
        i += 1
    return None


def rewrite(source: bytes) -> bytes:
    """`source` with the shapes above rewritten; unchanged (the same object) when none occurs."""
    if b"#" in source:
        source = _keep_first_branch(source)
    spans: list[tuple[int, int]] = []
    if b"template" in source:
        spans += [(m.start(), m.end()) for m in _INSTANTIATION.finditer(source)]
    if b"typename" in source:
        spans += [(m.start(1), m.end(1)) for m in _EXPRESSION_TYPENAME.finditer(source)]
    if b"operator" in source:
        spans += [(m.start(), m.end()) for m in _CONVERSION_CALL.finditer(source)]
    spans += _declaration_macros(source)
    if any(word in source for word in (b"DECLARE", b"DEFINE", b"VTABLE", b"REGISTER")):
        spans += _declaring_calls(source)
    if not spans:
        return source
    out = bytearray(source)
    for start, end in spans:
        for i in range(start, end):
            if out[i] != 0x0A:  # keep newlines: line numbers must not move
                out[i] = 0x20
    return bytes(out)
