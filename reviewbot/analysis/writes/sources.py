"""Who sets a field, and whether a write only fills it in when nothing set it (pure).

An override means one *source* of a value replacing another: the user through the bindings or the
command line, an operator through the environment, a config file, a model's own builder. Two writes
of the same expression, two derivations in the code, or the same command-line parser in two programs
are not two sources. And a write that runs only while the field is unset (`if x is None`, `if (!x)`,
an early `return`/`continue` when it is set, a helper whose return value checks it, a caller that
calls only then, a fallback that reads the field itself) fills in a value; it overrides nothing.

`source_of(write)` names the source of a write, `cli_write(write)` tells a command-line option's
handler (the user's own setting), `fills_in(write)` the set-only-if-unset shapes.
"""

from __future__ import annotations

import re
from enum import Enum

from reviewbot.analysis.writes.scopes import FileScopes, ScopeKind
from reviewbot.lang.clauses import ClauseKind, Clauses
from reviewbot.lang.common import has_word, mentions_field
from reviewbot.lang.facts import AssignKind, Assignment, Lang
from reviewbot.lang.follow import is_builder
from reviewbot.lang.index import RepoIndex

__all__ = ["Source", "source_of", "cli_write", "fills_in", "same_expression", "ENV"]


class Source(str, Enum):
    BINDING = "binding"  # `def_readwrite` / `def_property`: whoever holds the object in the other language
    OTHER_LANGUAGE = "other-language"  # a write from the other language, through the bindings
    BUILDER = "builder"  # a model's config builder (`_create_config`, `from_huggingface`)
    ENV = "env"  # an environment variable in the value or the guard
    CLI = "cli"  # a command-line option's handler
    CONFIG_FILE = "config-file"  # a value read from a config file (`config_json["x"]`, `hf_config.x`)
    CODE = "code"  # a derivation in the code: not an explicit setting


ENV = re.compile(r"\bos\.environ\b|\bgetenv\b|\benviron\.get\b|\bget_env\w*\(|\bstd::getenv\b")
# An environment mapping handed in (`env.get("X")`, `environ["X"]`): the environment too.
_ENV_MAPPING = re.compile(r"\b(?:env|environ|environment)\s*(?:\.get\(|\[)")
_ARGV = re.compile(r"\bargv\b")
# `arg == "--x"`, `strcmp(arg, "-x") == 0`, `arg in ("--x", "-x")`: the write runs when an option matched.
_OPTION_MATCH = re.compile(
    r"""(?:==|\bin\b|strcmp\w*\(|compare\().*["']--?[A-Za-z]|["']--?[A-Za-z][^"']*["']\s*=="""
)
_CONFIG_FILE = re.compile(
    r"\b\w*(?:json|yaml|toml|hf_config|config_dict|cfg_dict|ckpt|checkpoint)\w*\s*(?:\[|\.get\(|\.value\()",
    re.I,
)
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def _guard_text(a: Assignment) -> str:
    return " ".join(atom.text for atom in a.guard.atoms()) if a.guard is not None else ""


def cli_write(a: Assignment, scopes: FileScopes | None = None) -> bool:
    """The write is a command-line option's handler: it reads `argv`, runs when an option string
    matched, or sits in a lambda registered for an option."""
    guard = _guard_text(a)
    if _ARGV.search(a.value) or _ARGV.search(guard) or _OPTION_MATCH.search(guard):
        return True
    return scopes is not None and scopes.in_option_handler(a.line)


def source_of(w: Assignment, lang: Lang) -> Source:
    """Where the value a write sets comes from, seen from a write in language `lang`."""
    if w.kind is AssignKind.BINDING:
        return Source.BINDING
    if any(rx.search(t) for rx in (ENV, _ENV_MAPPING) for t in (w.value, _guard_text(w))):
        return Source.ENV
    if cli_write(w):
        return Source.CLI
    if is_builder(w.function or ""):
        return Source.BUILDER
    if _CONFIG_FILE.search(w.value):
        return Source.CONFIG_FILE
    if w.lang is not lang:
        return Source.OTHER_LANGUAGE
    return Source.CODE


def _bare(expr: str) -> str:
    """An expression without its receivers: `args.a // args.b` -> `a//b`."""
    return re.sub(r"(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])", "", "".join(expr.split()))


_LITERAL = re.compile(r"""^(?:-?[\d.]+[a-zA-Z]*|True|False|None|true|false|nullptr|(['"]).*\1)$""", re.S)


def same_expression(a: Assignment, w: Assignment) -> bool:
    """The two writes compute the same expression (receivers aside) from the same inputs: one
    derivation spelled twice. Equal constants say nothing about where they come from."""
    value = _bare(a.value)
    computed = not _LITERAL.match(value) and not re.fullmatch(r"[A-Z][A-Z0-9_]*|[A-Z]\w*\.\w+", value)
    return computed and value == _bare(w.value)


def _reads_field(text: str, field: str) -> bool:
    return mentions_field(text, field) or has_word(text, field)


def _helper_checks(a: Assignment, index: RepoIndex) -> bool:
    """A guard that calls a helper whose body reads the field (`if self._needs_dtype():` with
    `return self.dtype is None`): the helper's return value is the check."""
    if a.guard is None:
        return False
    for atom in a.guard.atoms():
        for m in _CALL.finditer(atom.text):
            helper = m.group(1).rsplit(".", 1)[-1]
            if not helper or helper in ("len", "isinstance", "getattr", "hasattr", "bool", "int", "str"):
                continue
            for r in index.reads(a.field):
                if (r.function or "").replace("::", ".").rsplit(".", 1)[-1] == helper:
                    return True
    return False


def _short(function: str | None) -> str:
    return (function or "").replace("::", ".").rsplit(".", 1)[-1]


def _returns_when_set(a: Assignment, head: Clauses | None, scopes: FileScopes | None) -> bool:
    """An early `return` / `continue` before the write, in its function, under a condition that reads
    the field: the write runs only when that condition did not hold."""
    if head is None:
        return False
    for c in head.clauses:
        if c.line >= a.line or c.function != (a.function or "") or not c.guards:
            continue
        if c.kind is not ClauseKind.RETURN:
            continue  # a raise under `if x and ...` validates a setting; it does not keep one
        if not any(_reads_field(g.text, a.field) for g in c.guards):
            continue
        if scopes is not None:
            inner = [s for s in scopes.around(c.line) if not s.holds(a.line)]
            if any(s.kind != ScopeKind.BLOCK for s in inner):
                continue  # the return sits in a loop or clause the write is not in
        return True
    return False


def _called_only_when_unset(a: Assignment, heads: list[Clauses]) -> bool:
    """Every call of the write's function in the changed files runs under a condition that reads the
    field (`if cfg.x is None: apply_defaults(cfg)`)."""
    name = _short(a.function)
    if not name or name.startswith("__"):
        return False
    call = re.compile(rf"(?<![\w]){re.escape(name)}\s*\(")
    found = [
        c
        for h in heads
        for c in h.clauses
        if call.search(c.text) and _short(c.function) != name and not c.text.lstrip().startswith("def ")
    ]
    return bool(found) and all(any(_reads_field(g.text, a.field) for g in c.guards) for c in found)


def fills_in(
    a: Assignment,
    index: RepoIndex,
    head: Clauses | None,
    scopes: FileScopes | None,
    heads: list[Clauses],
) -> bool:
    """The write runs only while the field is unset, or keeps the value already there: a check of the
    field in its guard, in a helper its guard calls, before it (an early return), or around every call
    of its function; a value that reads the field (`x = json_value(data, "x", defaults.x)`,
    `x &= ok`); a `catch` / `except` clause (it runs only when deriving failed)."""
    guard = _guard_text(a)
    return (
        a.checks_target_first
        or _reads_field(guard, a.field)
        or a.kind is AssignKind.AUGMENTED
        or _reads_field(a.value, a.field)
        or (scopes is not None and scopes.in_handler(a.line))
        or _helper_checks(a, index)
        or _returns_when_set(a, head, scopes)
        or _called_only_when_unset(a, heads)
    )
