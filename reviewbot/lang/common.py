"""Text helpers shared by the C++ and Python front ends: canonical expressions, comments, log calls.

Everything here works on plain strings and line lists so both front ends spell things the same
way; the tree-sitter specific parts live in `walk/walker.py` and the language modules.
"""

from __future__ import annotations

import re
from functools import lru_cache

from reviewbot.lang.predicate import outside_strings

__all__ = [
    "canonical_expr",
    "last_component",
    "callee_parts",
    "is_log_callee",
    "comment_above",
    "mentions_field",
    "is_path",
    "bare_names",
    "has_word",
]

_NON_WORD_SPACE = re.compile(r"(?<!\w) | (?!\w)")
_RECEIVER = re.compile(r"(?<![\w.])(?:self|this)\.")
_LITERAL_WORD = re.compile(r"\b(?:true|false|nullptr|NULL)\b")
_LITERALS = {"true": "True", "false": "False", "nullptr": "None", "NULL": "None"}
_TEMPLATE_ARGS = re.compile(r"<[^<>()]*>")
_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@lru_cache(maxsize=1 << 14)
def canonical_expr(text: str) -> str:
    """Language-neutral spelling of an expression.

    A space survives only between two word characters (`not x`, `a if c else b`), `::`/`->`
    become `.`, `self.`/`this.` receivers go, and C++ literals take Python spelling. For a plain
    operand the result equals `predicate.canonical_operand`, so targets, values and atoms agree.
    """
    # Each rewrite is skipped when the text cannot contain what it rewrites: most expressions are
    # plain names and paths, and the walkers canonicalise every operand, target and value.
    return outside_strings(text, _canonical_code)


def _canonical_code(text: str) -> str:
    if "\\\n" in text or "\\\r\n" in text:
        text = text.replace("\\\r\n", " ").replace("\\\n", " ")  # line continuations
    t = " ".join(text.split())
    t = t.replace("(*this).", "").replace("::", ".").replace("->", ".")
    if " " in t:
        t = _NON_WORD_SPACE.sub("", t)
    if "self." in t or "this." in t:
        t = _RECEIVER.sub("", t)
    if any(word in t for word in _LITERALS):
        t = _LITERAL_WORD.sub(lambda m: _LITERALS[m.group(0)], t)
    return t


def has_word(text: str, word: str) -> bool:
    r"""`word` occurs in `text` with no word character on either side (what `(?<!\w)WORD(?!\w)` finds;
    a word character is what str.isalnum accepts, or `_`), found by `str.find`: compiling a pattern
    per name cost seconds on changes with thousands of names."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        before = text[at - 1] if at > 0 else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        at = text.find(word, at + 1)
    return False


def last_component(path: str) -> str:
    """`config.rope_config.style` -> `style` (canonical paths only)."""
    return path.rsplit(".", 1)[-1]


def is_path(text: str) -> bool:
    """True for a dotted name such as `cfg.attn.flag` (canonical spelling)."""
    return _PATH.fullmatch(text) is not None


def callee_parts(callee: str) -> tuple[str, ...]:
    """Name components of a callee: `self.kv_cache_write_op.forward` -> (`kv_cache_write_op`, `forward`)."""
    t = _TEMPLATE_ARGS.sub("", canonical_expr(callee))
    parts = [p for p in t.split(".") if p and p not in ("self", "this")]
    return tuple(p for p in parts if p.replace("_", "a").isalnum())


_LOG_NAMES = frozenset({"log", "LOG", "printf", "fprintf", "print", "puts", "warn", "warning"})
_LOG_RECEIVERS = frozenset({"logger", "logging", "log", "_logger", "LOGGER", "_LOGGER", "warnings"})
# Log macros: `LOG_WARN`, `RTP_LLM_LOG_INFO`, `GGML_LOG_WARN`, and a component's own level macros in
# capitals (llama.cpp server's `SRV_WRN` / `SLT_DBG`, dev-scan sample 13: a logged fallback read as unlogged).
_LOG_MACRO = re.compile(
    r"(?:RTP_LLM_LOG|FT_LOG|LOG_|VLOG|DLOG)\w*|\w+_LOG(?:_\w+)?"
    r"|[A-Z][A-Z0-9]*_(?:WRN|WARN|WARNING|INF|INFO|DBG|DEBUG|TRACE)"
)


# A project's own log helpers are named after the verb with a qualifier: Megatron's `warn_rank_0` /
# `print_rank_0` / `log_single_rank`, `warning_once`. `log_` alone also starts maths (`log_softmax`,
# `log_prob`), so a `log_` helper counts only with a qualifier of who or how often it logs.
_LOG_VERB_PREFIX = re.compile(r"(?:warn|warning|print)_\w+")
_LOG_QUALIFIED = re.compile(
    r"log_(?:rank|single|once|main|dist|info|warn|warning|debug|message|msg|all|on)(?:_\w+)?"
)


def is_log_callee(callee: str) -> bool:
    """Calls that leave a trace in the logs: LOG(...), RTP_LLM_LOG_INFO, printf, print, logger.x,
    a project's own `warn_rank_0(...)` / `print_rank_0(...)` / `log_single_rank(...)`."""
    parts = callee_parts(callee)
    if not parts:
        return False
    last = parts[-1]
    if last in _LOG_NAMES or _LOG_MACRO.fullmatch(last):
        return True
    if _LOG_VERB_PREFIX.fullmatch(last) or _LOG_QUALIFIED.fullmatch(last):
        return True
    return len(parts) > 1 and any(p in _LOG_RECEIVERS for p in parts[:-1])


@lru_cache(maxsize=4096)
def _field_pattern(field: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9])")


def mentions_field(text: str, field: str) -> bool:
    """`field` starts an identifier in `text` (`x.f` or `x.f_set` for `f`, not `use_f`)."""
    if not field or field not in text:
        return False
    return _field_pattern(field).search(text) is not None


def _strip_block_line(line: str) -> str:
    s = line.strip()
    if s.startswith("/*"):
        s = s[2:].lstrip("*")
    if s.endswith("*/"):
        s = s[:-2]
    s = s.strip()
    if s.startswith("*"):
        s = s[1:]
    return s.strip()


def comment_above(lines: list[str], line: int, python: bool) -> tuple[str, int | None]:
    """Comment lines directly above 1-based `line` (no blank line between), markers removed.

    Returns the joined text and the line number of the comment's first line (None if none).
    """
    collected: list[str] = []
    first: int | None = None
    i = line - 2
    while i >= 0:
        s = lines[i].strip()
        if python:
            if not s.startswith("#") or s.startswith("#!"):
                break
            collected.append(s[1:].strip())
            first = i + 1
            i -= 1
            continue
        if s.startswith("//"):
            collected.append(s[2:].lstrip("/!").strip())
            first = i + 1
            i -= 1
            continue
        if s.endswith("*/"):
            j = i
            while j >= 0 and "/*" not in lines[j]:
                j -= 1
            if j < 0 or not lines[j].strip().startswith("/*"):
                break
            collected.extend(_strip_block_line(lines[k]) for k in range(i, j - 1, -1))
            first = j + 1
            i = j - 1
            continue
        break
    collected.reverse()
    while collected and not collected[0]:
        collected.pop(0)
    while collected and not collected[-1]:
        collected.pop()
    return "\n".join(collected), first


# A name not reached through a member access, and not itself an object whose member is read or called.
_BARE = re.compile(r"(?<![\w.>:])[A-Za-z_]\w*(?!\w|\s*[.(]|\s*::)")
_STRINGS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_NOT_NAMES = frozenset(
    {"if", "else", "and", "or", "not", "in", "is", "None", "True", "False", "lambda", "for", "self", "this",
     "true", "false", "nullptr", "NULL", "new", "sizeof", "static_cast", "const", "auto"}
)  # fmt: skip


def bare_names(text: str) -> tuple[str, ...]:
    """Values an expression reads by name, as written: `x + self.y * cfg.z + f(w)` -> (`x`, `w`); not
    members, not objects whose members are read (`cfg`), not callees (`f`).

    A local and a field of the same name differ only in how they are written (`inter_size` and
    `self.inter_size`); canonical text has lost that, this keeps it."""
    found = _BARE.findall(_STRINGS.sub('""', text.replace("->", ".")))
    return tuple(dict.fromkeys(n for n in found if n not in _NOT_NAMES))
