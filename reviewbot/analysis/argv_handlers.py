"""Hand-written C/C++ command-line handlers that read the wrong `argv` slot (pure).

llama.cpp's family of parsers walks `argv` with an index `i` and one handler per option:

    if (arg == "-ctk" || arg == "--cache-type-k") {
        CHECK_ARG                                   // #define CHECK_ARG if (++i >= argc) { ... }
        params.cache_type_k = argv[i];
        return true;
    }

Each handler advances `i` once per value it takes and reads the value there. Two slips break every
launch that passes the option, and both compile:
- **double increment**: the value is read past a slot nobody read (`CHECK_ARG` then `argv[++i]`): the
  option takes the token after its value, or `argv[argc]` (NULL) when the value is last, and the value
  itself is skipped (ik_llama.cpp 7642ac3ec, `-ctk`/`-ctv`);
- **value no longer consumed**: a handler that took a value at the base takes none at the head (its read
  commented out, `//params.x = argv[++i];`): the value is parsed as the next option, and existing
  command lines (`-ictk q8_0`) fail on it (ik_llama.cpp 96938a109).

A handler is an `if` / `else if` on `arg == "-x"` comparisons (or `strcmp(argv[i], "-x") == 0`) and
its braced body. The walk counts, in order and outside comments: `++i`, `i++`, `i += 1`, a macro whose
`#define` in the same file advances `i`, and the reads `argv[i]`, `argv[++i]`, `argv[i++]`,
`argv[i + 1]`. Handlers with a loop, another index (`argv[j]`) or `i` changed any other way are not
judged, and so are handlers that hand `i` to a call (which may advance it). Only handlers that hold a
line the change added are reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

from reviewbot.model.change import ChangeSet

__all__ = ["ArgvKind", "ArgvSlip", "argv_slips", "changed_cpp"]

_CPP = re.compile(r"\.(?:c|cc|cpp|cxx|h|hh|hpp)$")


def changed_cpp(change: ChangeSet) -> list[tuple[str, str | None, str, frozenset[int]]]:
    """(path, base text, head text, added lines) of the change's C/C++ files with added lines."""
    return [
        (f.path, f.base_text, f.head_text, frozenset(f.added_lines))
        for f in change.files
        if _CPP.search(f.path) and f.head_text is not None and f.skipped is None and f.added_lines
    ]


class ArgvKind(str, Enum):
    DOUBLE = "double-increment"
    NOT_CONSUMED = "not-consumed"


@dataclass(frozen=True)
class ArgvSlip:
    kind: ArgvKind
    path: str
    line: int  # the read past the value (double); the commented-out read (not consumed)
    options: tuple[str, ...]  # the option strings, as written
    text: str  # that line, stripped
    handler_line: int
    base_values: int = 0  # not consumed: how many values the base handler took
    macro: str = ""  # double: the advancing macro used before the read, if any

    @property
    def field(self) -> str:
        """The member the read stores into (`params.cache_type_k = argv[++i]` -> `cache_type_k`), else
        the option's long spelling: the setting the slip breaks."""
        m = re.search(r"(?:\.|->)\s*(\w+)\s*=(?!=)[^;]*\bargv\b", self.text)
        return m.group(1) if m else self.options[-1]


_HEAD = re.compile(
    r"(?:\bif\s*\()((?:(?:\s*\|\|)?\s*(?:arg\s*==\s*\"-[^\"]*\"|\"-[^\"]*\"\s*==\s*arg"
    r"|strcmp\s*\(\s*argv\s*\[\s*i\s*\]\s*,\s*\"-[^\"]*\"\s*\)\s*==\s*0))+)\s*\)\s*\{"
)
_OPTION = re.compile(r"\"(-[^\"]*)\"")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Z_][A-Z0-9_]*)\b(?:\(\))?[ \t]+(.*)$", re.M)
_ADVANCES = re.compile(r"\+\+\s*i\b|\bi\s*\+\+|\bi\s*\+=\s*1\b")
_LOOP = re.compile(r"\b(?:for|while|do)\b")
_OTHER_INDEX = re.compile(r"\bargv\s*\[\s*(?!\+\+\s*i\b|i\s*\+\+|i\s*\]|i\s*\+\s*1\s*\])")
_OTHER_WRITE = re.compile(r"\bi\s*(?:=(?!=)|-=|\+=\s*(?!1\b))|--\s*i\b|\bi\s*--")
# `i` handed to a call (`parse_value(argc, argv, i)`), which may advance it by reference.
_HANDED = re.compile(r"[(,]\s*i\s*[,)]")


_TOKENS = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])'", re.S)


def _blank_comments(text: str, strings: bool = True) -> str:
    """`text` with comments (and, with `strings`, string and character literal contents) blanked,
    newlines and offsets kept."""

    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        if not strings:
            return s
        return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]

    return _TOKENS.sub(blank, text)


def _advancing_macros(text: str) -> set[str]:
    joined = re.sub(r"\\\n", " ", text)  # a `#define` continued over lines with `\`
    return {m.group(1) for m in _DEFINE.finditer(joined) if _ADVANCES.search(m.group(2))}


@dataclass(frozen=True)
class _Handler:
    options: tuple[str, ...]
    start: int  # offset of the `if`
    body: tuple[int, int]  # offsets of the body, inside the braces


def _handlers(text: str, code: str) -> Iterator[_Handler]:
    """The option handlers of a file: `text` as written (option strings), `code` with comments blanked."""
    for m in _HEAD.finditer(text):
        if code[m.start() : m.start() + 2] != "if":
            continue  # commented out
        opened = m.end() - 1
        depth, at = 0, opened
        while at < len(code):
            c = code[at]
            depth += 1 if c == "{" else -1 if c == "}" else 0
            if depth == 0:
                break
            at += 1
        yield _Handler(tuple(_OPTION.findall(m.group(1))), m.start(), (opened + 1, at))


_EVENT_TEMPLATE = r"argv\s*\[\s*(?:\+\+\s*i|i\s*\+\+|i\s*\+\s*1|i)\s*\]|\+\+\s*i\b|\bi\s*\+\+|\bi\s*\+=\s*1\b"


def _walk(body: str, macros: set[str]) -> tuple[list[tuple[int, int, str]], int] | None:
    """(reads as (offset, slot, macro used before it), slots advanced) of one handler body, in order;
    None when the body is not a plain walk (a loop, another index, `i` changed another way)."""
    if any(p.search(body) for p in (_LOOP, _OTHER_INDEX, _OTHER_WRITE, _HANDED)):
        return None
    names = "|".join(sorted(map(re.escape, macros), key=len, reverse=True))
    event = re.compile(_EVENT_TEMPLATE + (rf"|\b(?:{names})\b" if names else ""))
    slot, reads, last_macro = 0, [], ""
    for m in event.finditer(body):
        token = re.sub(r"\s+", "", m.group(0))
        if token.startswith("argv["):
            inner = token[5:-1]
            if inner == "++i":
                slot += 1
                reads.append((m.start(), slot, last_macro))
            elif inner == "i++":
                reads.append((m.start(), slot, last_macro))
                slot += 1
            elif inner == "i+1":
                reads.append((m.start(), slot + 1, last_macro))
            else:
                reads.append((m.start(), slot, last_macro))
        elif token in macros:
            slot += 1
            last_macro = token
        else:
            slot += 1
    return reads, slot


def _values(reads: list[tuple[int, int, str]], advanced: int) -> int:
    return max([advanced, *(s for _, s, _ in reads)])


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# A statement that is only a capitalised macro (`CHECK_ARG`, `NEXT_ARG();`): one this file does not
# define may advance `i` in a header.
_MACRO_STATEMENT = re.compile(r"(?:^|[;{}])\s*([A-Z][A-Z0-9_]{2,})\s*(?:\(\s*\))?\s*;?\s*(?=$|[\n}])", re.M)


def _by_options(text: str) -> dict[tuple[str, ...], int]:
    """How many values each handler of a revision takes (plain walks only)."""
    code = _blank_comments(text)
    macros = _advancing_macros(text)
    out: dict[tuple[str, ...], int] = {}
    for h in _handlers(text, code):
        walked = _walk(code[h.body[0] : h.body[1]], macros)
        if walked is not None:
            out[h.options] = _values(*walked)
    return out


def _commented_read(text: str, code: str, h: _Handler) -> int | None:
    """The line of a commented-out `argv` read in the handler (`//params.x = argv[++i];`): where the
    value stopped being consumed."""
    lo, hi = h.body
    comments_only = _blank_comments(text[lo:hi], strings=False)
    for m in re.finditer(r"\bargv\s*\[", text[lo:hi]):
        if comments_only[m.start()] == " ":  # blanked: inside a comment, not a string
            return _line(text, lo + m.start())
    return None


def argv_slips(
    changed: Iterable[tuple[str, str | None, str, frozenset[int]]],
) -> list[ArgvSlip]:
    """The slips of each changed C/C++ file, given as (path, base text, head text, added lines)."""
    out: list[ArgvSlip] = []
    for path, base_text, head_text, added in changed:
        code = _blank_comments(head_text)
        macros = _advancing_macros(head_text)
        before = _by_options(base_text) if base_text else {}
        lines = head_text.split("\n")
        for h in _handlers(head_text, code):
            first, last = _line(head_text, h.start), _line(head_text, h.body[1])
            if not added.intersection(range(first, last + 1)):
                continue
            walked = _walk(code[h.body[0] : h.body[1]], macros)
            if walked is None:
                continue
            reads, advanced = walked
            slots = {s for _, s, _ in reads}
            skipped = [(o, s, mac) for o, s, mac in reads if s >= 2 and (s - 1) not in slots]
            for offset, _, mac in skipped[:1]:
                at = _line(head_text, h.body[0] + offset)
                text = lines[at - 1].strip()
                out.append(ArgvSlip(ArgvKind.DOUBLE, path, at, h.options, text, first, macro=mac))
            took = before.get(h.options, 0)
            body = code[h.body[0] : h.body[1]]
            unknown = {m.group(1) for m in _MACRO_STATEMENT.finditer(body)} - macros
            gone = _commented_read(head_text, code, h)
            # only where the read was commented out (a deliberate switch from a valued option to a flag,
            # or a macro of a header that may advance `i`, is not judged)
            if took >= 1 and _values(reads, advanced) == 0 and not reads and not unknown and gone is not None:
                text = lines[gone - 1].strip()
                out.append(
                    ArgvSlip(ArgvKind.NOT_CONSUMED, path, gone, h.options, text, first, base_values=took)
                )
    return out
