"""C++ command-line parsers and their help texts (pure): which field an option sets and which default its
help text states.

- A *parse branch* is the code a hand-written parser runs for one option: `if (arg == "-b" || arg ==
  "--batch-size") { ... params.n_batch = std::stoi(argv[i]); }`, `strcmp(argv[i], "--x") == 0`, or an
  argument table entry `{"-b", "--batch-size"}` followed by its handler. It sets one field either
  *directly* (the argument's text, converted: `argv[i]`, `std::stoi(value)`) or through a *word map*
  (`if (strcmp(argv[i], "json") == 0) params.log_json = true; else if (... "text" ...) ... = false;`).
  A branch that sets several fields, or none, is left out: which default its help means is not known.
- A *help default* is a usage line that names long flags and states a default: a literal
  (`"log output format: json or text (default: json)"`) or a `%` placeholder whose format argument is
  a literal (`"Type for data exchange (default: %s)", "f32"`), in `printf(...)`, `fprintf(stderr, ...)`
  or an options table entry `options.push_back({group, flags, help, args...})`. A placeholder filled
  from the parameters (`params.n_batch`) follows the value and is no help default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Branch", "HelpDefault", "branches", "help_defaults", "split_items", "long_flags"]

_FLAG = r"--?[A-Za-z][\w-]*"
_COND = re.compile(r"==\s*\"(" + _FLAG + r")\"|strcmp\s*\([^,()]+,\s*\"(" + _FLAG + r")\"\s*\)")
_TABLE = re.compile(r"\{\s*(\"" + _FLAG + r"\"(?:\s*,\s*\"" + _FLAG + r"\")*)\s*\}")
_ASSIGN = re.compile(r"\b(?:\w+(?:\.|->))+(\w+)\s*=(?!=)\s*([^;]+);")
# A word the argument is compared with: `strcmp(argv[i], "json") == 0`, `value == "json"`.
_WORD = re.compile(
    r"strcmp\s*\(\s*[^,()]+,\s*\"([^\"\n-][^\"\n]*)\"\s*\)\s*==\s*0|[\w\]\)]\s*==\s*(?:std::string\s*\(\s*)?"
    r"\"([^\"\n-][^\"\n]*)\""
)
_DIRECT = re.compile(r"\bargv\s*\[|\bvalue\b")
_LONG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
_LITERAL = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"")
_LITERALS = re.compile(r"^\s*(?:\"(?:[^\"\\\n]|\\.)*\"\s*)+$")
_PLACEHOLDER = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|L|z|j|t)?[diouxXeEfFgGcs]")
# `default: X`, `default = X`, `default is X`, `(default X)`; not "the default template".
_DEFAULT_AT = re.compile(r"(?i)\bdefault(?:\s+value)?(?:\s*[:=]\s*|\s+is\s+)|\(\s*default\s+")
_ARG_LITERAL = re.compile(r"^(?:[-+]?\d+(?:\.\d+)?[fFuUlL]*|\"[^\"\n]*\"|true|false)$")
_SPAN = 30  # lines a branch may run


@dataclass(frozen=True)
class Branch:
    flags: tuple[str, ...]
    field: str
    direct: bool  # the field takes the argument's text (converted)
    words: tuple[tuple[str, str], ...]  # word map: (argument word, value assigned), in source order
    line: int  # 1-based line of the condition


@dataclass(frozen=True)
class HelpDefault:
    flags: tuple[str, ...]  # the long flags the usage line names
    stated: str  # the default it states, as written (without quotes)
    from_arg: bool  # a literal format argument states it (`"(default: %s)", "f32"`), not the text
    line: int  # 1-based line of the text that states it
    text: str  # that line, stripped


def long_flags(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_LONG.findall(text)))


def _code(line: str) -> str:
    """The line without a trailing `//` comment (not inside a string literal)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and line.startswith("//", i):
            return line[:i]
    return line


def _condition_flags(line: str) -> tuple[str, ...]:
    code = _code(line)
    found = [a or b for a, b in _COND.findall(code)]
    for m in _TABLE.finditer(code):
        found += _LITERAL.findall(m.group(1))
    return tuple(dict.fromkeys(f for f in found if f.startswith("--")))


def _branch(flags: tuple[str, ...], body: list[str], line: int) -> Branch | None:
    """The field the branch sets and how, from its lines (the condition's first)."""
    fields: dict[str, bool] = {}
    words: list[tuple[str, str]] = []
    pending: str | None = None
    for raw in body:
        code = _code(raw)
        m = _WORD.search(code)
        if m is not None:
            pending = m.group(1) or m.group(2)
        for a in _ASSIGN.finditer(code):
            field, value = a.group(1), a.group(2).strip()
            direct = _DIRECT.search(value) is not None
            fields[field] = fields.get(field, False) or direct
            if pending is not None and not direct and _ARG_LITERAL.match(value):
                words.append((pending, value))
                pending = None
        if fields and re.search(r"\breturn\s+true\s*;", code):
            break
    if len(fields) != 1:
        return None
    ((field, direct),) = fields.items()
    if not direct and not words:
        return None
    return Branch(flags, field, direct, tuple(words), line)


def branches(text: str) -> list[Branch]:
    """The parse branches of a C++ source (see the module doc)."""
    lines = text.split("\n")
    starts = [(i, f) for i, line in enumerate(lines) if (f := _condition_flags(line))]
    out: list[Branch] = []
    for k, (i, flags) in enumerate(starts):
        end = min(starts[k + 1][0] if k + 1 < len(starts) else len(lines), i + _SPAN)
        b = _branch(flags, lines[i:end], i + 1)
        if b is not None:
            out.append(b)
    return out


def split_items(text: str, start: int) -> list[str]:
    """The comma-separated items of the argument list that opens at `text[start]` (a `(` or `{`), up to
    its closing bracket; string literals and nested brackets are kept whole."""
    items: list[str] = []
    depth, cur, i = 0, "", start + 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            m = _LITERAL.match(text, i)
            token = m.group(0) if m else ch
            cur += token
            i += len(token)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
            i += 1
            continue
        cur += ch
        i += 1
    if cur.strip():
        items.append(cur.strip())
    return items


def _statements(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) 0-based line ranges of statements that end with `;` within six lines."""
    out: list[tuple[int, int]] = []
    first: int | None = None
    for i, line in enumerate(lines):
        code = _code(line).rstrip()
        if first is not None and not code.strip() and line.strip():
            continue  # a comment line inside the statement
        if first is None:
            first = i
        if code.endswith((";", "{", "}")) or not code.strip() or i - first >= 6:
            if code.endswith(";"):
                out.append((first, i))
            first = None
    return out


def _stated(help_: str, args: list[str]) -> tuple[str, bool] | None:
    """The default the help text states and whether a format argument states it: the word after
    `default`, or the literal format argument of a placeholder there; None for a placeholder filled
    from a variable, or no stated default."""
    m = _DEFAULT_AT.search(help_)
    if m is None:
        return None
    place = _PLACEHOLDER.match(help_, m.end())
    if place is None:
        word = re.match(r"[`'\"]?([-+]?[\w.]+)", help_[m.end() :])
        return (word.group(1).rstrip("."), False) if word else None
    index = len(_PLACEHOLDER.findall(help_[: m.end()].replace("%%", "")))
    if index >= len(args) or not _ARG_LITERAL.match(args[index]):
        return None
    return args[index].strip('"'), True


def _help(lines: list[str], first: int, last: int) -> HelpDefault | None:
    stmt = "\n".join(_code(line) for line in lines[first : last + 1])
    if "default" not in stmt.lower():
        return None
    opening = re.search(r"\b(?:f?printf|push_back|emplace_back)\s*\(\s*\{?", stmt)
    if opening is None:
        return None
    bracket = opening.end() - 1
    items = split_items(stmt, bracket)
    texts = ["".join(_LITERAL.findall(it)) if _LITERALS.match(it) else None for it in items]
    at = next((k for k, t in enumerate(texts) if t is not None and "default" in t.lower()), None)
    owner = next((k for k, t in enumerate(texts) if t is not None and _LONG.search(t)), None)
    if at is None or owner is None or owner > at:
        return None
    help_, flag_text = texts[at] or "", texts[owner] or ""
    if owner == at:  # printf("  -b N, --batch-size N  text (default: %d)"): the flags lead the text
        flag_text = re.split(r"(?<=\S)\s{2,}(?=\S)", flag_text.strip(), maxsplit=1)[0]
    flags = long_flags(flag_text)
    stated = _stated(help_, items[at + 1 :])
    if not flags or stated is None or stated[0].startswith("%"):
        return None
    k = next((j for j in range(first, last + 1) if "default" in _code(lines[j]).lower()), first)
    return HelpDefault(flags, stated[0], stated[1], k + 1, lines[k].strip())


def help_defaults(text: str) -> list[HelpDefault]:
    """The usage lines of a C++ source that state a default without reading it (see the module doc)."""
    lines = text.split("\n")
    out: list[HelpDefault] = []
    for first, last in _statements(lines):
        h = _help(lines, first, last)
        if h is not None:
            out.append(h)
    return out
