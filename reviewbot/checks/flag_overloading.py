"""flag-overloading (P3): one derived boolean flag gates different behaviours at different read sites.

## What it does
For every **boolean** field the change derives (its default or declared type is boolean, or the derived
value is a boolean literal or condition; integer sizes, ids and enums are not flags), follows its read
sites in the repository (one level of aliasing, `self.flag = cfg.flag` then `if self.flag:`) and
collects the operations each read gates: the calls the flag's branch makes on members
(`self.kv_cache_write_op.forward(...)` is `kv_cache_write_op.forward`), on the object's own methods and
free functions — not logging, builtins, or calls on locals and libraries (`qkv.view(...)`,
`torch.empty(...)`), which only shape data. Calls on one member object are one behaviour
(`cache_manager_.malloc_with_cache` and `cache_manager_.free_with_cache` are two halves of "reuse the
cache"); an own method or a free function is a behaviour of its own. When two read sites gate different
behaviours, the flag carries more than one meaning; the finding counts the behaviours and lists the same
ones (each by its first operation), with where each is gated.

Only flags the change derives are judged: a write under a condition, or a value that is a condition.
Not judged: an unconditional literal (`params.interactive = true;`, a setter or a default); the user's
own switch (a command-line option's handler, or in Python a field that is a command-line option of the
same file: an option is documented as one feature, and what it gates is that feature); a write the
change only moved from another file or whose condition it only renamed (`conversation` ->
`conversation_mode`). What a read site gates is read from code, not from string literals or comments
(a message's words are not calls), and failing is not a behaviour (`raise`, `throw`, `assert`, an
exception's constructor).

## Why is this bad?
Whoever sets the flag for one purpose (skip the rope kernel) also switches the other behaviour (skip the
KV-cache write). The derivation is only correct while an unstated invariant holds that makes both
effects safe at once; nothing asserts it.

## Example
```python
if self.attn_configs.need_rope_kv_cache:          # aiter.py: gates the fused rope kernel
    fmha_input = self.rope_kvcache_op.forward(qkv, kv_cache, seq_len)
...
if self.need_rope_kv_cache:                        # py_flashinfer_mha.py: gates the KV-cache write
    self.kv_cache_write_op.forward(qkv, kv_cache)
```

## Use instead
Split the flag into one flag per behaviour, or document both meanings where the field is declared and
fail fast where the invariant could break (`assert not (not need_rope_kv_cache and kv_cache is not None)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.writes.scopes import FileScopes, file_scopes
from reviewbot.analysis.writes.sources import cli_write
from reviewbot.checks.base import CheckContext
from reviewbot.checks.duplicated_predicate import renamed
from reviewbot.checks.util import MAX_TITLE, clip, field_owner, is_vendored, owners_of, place
from reviewbot.lang.common import is_log_callee
from reviewbot.lang.facts import Assignment, FieldRead, GatedStmt, Lang
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.predicate import loose_key
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "flag-overloading"
severity = Severity.P3
summary = "The derived boolean flag is read at sites that gate different behaviours."

_CALL = re.compile(r"(?<![\w.>:])((?:self\.|this->)?[A-Za-z_]\w*(?:(?:\.|->|::)[A-Za-z_]\w*)*)\s*\(")
_NOT_OPERATIONS = frozenset(
    {
        # keywords that precede a parenthesis
        "if", "elif", "while", "for", "switch", "return", "assert", "sizeof", "not", "and", "or", "in",
        "catch", "decltype", "static_cast", "dynamic_cast", "reinterpret_cast", "const_cast", "typeid",
        # builtins that shape or inspect data
        "len", "isinstance", "int", "str", "float", "bool", "list", "dict", "tuple", "set", "range", "getattr",
        "setattr", "hasattr", "super", "type", "min", "max", "abs", "any", "all", "sorted", "enumerate", "zip",
        "print", "repr", "id", "iter", "next", "map", "filter", "format", "round", "divmod", "vars",
    }
)  # fmt: skip
_BOOL_VALUE = re.compile(
    r"^(True|False)$|==|!=|<=|>=|&&|\|\||(?<![-<])[<>](?![<>=])|^!|\bnot\b|\band\b|\bor\b"
)


# String literals (a log or error message's words are not calls) and comments, removed before calls are read.
_STRING_OR_COMMENT = re.compile(
    r'[rRbBuUfF]*"""[\s\S]*?"""|[rRbBuUfF]*\'\'\'[\s\S]*?\'\'\'|[rRbBuUfF]*"(?:\\.|[^"\\\n])*"'
    r"|[rRbBuUfF]*'(?:\\.|[^'\\\n])*'|//[^\n]*|#[^\n]*"
)
# Statements that validate or fail (`raise ValueError(...)`, `throw std::invalid_argument(...)`, `assert`):
# rejecting a configuration is not a behaviour the flag switches on.
_FAILS = re.compile(r"^\s*(?:raise|throw|assert|static_assert)\b")
_EXCEPTION = re.compile(r"(?:Error|Exception|Warning|_error|_exception)$")


def code_of(text: str) -> str:
    """The statement without string literals and comments."""
    return _STRING_OR_COMMENT.sub('""', text)


def operations(stmt: GatedStmt) -> list[str]:
    """The operations one gated statement performs, as `member.method` or `function`."""
    out: list[str] = []
    if _FAILS.match(stmt.text):
        return out
    for m in _CALL.finditer(code_of(stmt.text)):
        chain = m.group(1).replace("->", ".").replace("::", ".")
        parts = chain.split(".")
        member = parts[0] in ("self", "this")
        if member:
            parts = parts[1:]
        if not parts or parts[0] in _NOT_OPERATIONS or is_log_callee(chain) or _EXCEPTION.search(parts[-1]):
            continue
        # A call on a local or a library (`qkv.view(...)`, `torch.empty(...)`) shapes data; C++ members
        # are often spelled `name_` / `m_name` without `this->`.
        if len(parts) > 1 and not member and not (parts[0].endswith("_") or parts[0].startswith("m_")):
            continue
        out.append(".".join(parts[-2:]))
    return out


def _site_operations(r: FieldRead) -> tuple[str, ...]:
    stmts = r.gated or r.gated_else  # `gated` runs when the flag is true, whatever the spelling
    return tuple(dict.fromkeys(op for s in stmts for op in operations(s)))


def behaviour(op: str) -> str:
    """The component an operation belongs to: calls on one member object (`cache_manager_.malloc` and
    `cache_manager_.free`) are two halves of one behaviour; an own method or free function is its own."""
    return op.split(".", 1)[0]


def is_boolean_flag(d: ChangedDerivation, index: RepoIndex) -> bool:
    """Is the derived field a boolean switch? Its owner's declared default decides; without one, the
    derived value (a boolean literal or condition)."""
    a = d.head
    owners, _ = owners_of(a, index)
    defaults = [x for x in index.defaults(a.field) if not is_vendored(x.path)]
    mine = [x for x in defaults if x.owner in owners] or (defaults if not owners else [])
    if mine:
        return all(x.value in ("True", "False") for x in mine)
    return bool(_BOOL_VALUE.search(a.value))


_LITERAL = frozenset({"True", "False", "true", "false", "1", "0"})


def is_derived(d: ChangedDerivation) -> bool:
    """The write derives the flag from other settings: it runs under a condition, or its value is a
    condition. An unconditional literal (`params.interactive = true;` in a command-line handler,
    `self.x = False` in a constructor) sets the flag, it does not derive it."""
    return d.head.guard is not None or d.head.value not in _LITERAL


def _same_rule(old: Assignment, new: Assignment) -> bool:
    """The same write under the same condition, up to one renamed identifier in the condition."""
    if old.field != new.field or old.value != new.value:
        return False
    if old.guard is None or new.guard is None:
        return old.guard is None and new.guard is None
    return renamed(loose_key(old.guard), loose_key(new.guard))


def moved_or_renamed(ctx: CheckContext, d: ChangedDerivation) -> bool:
    """The change did not derive the flag anew: the same write under the same condition was there
    before, in this function (a condition renamed, `conversation` -> `conversation_mode`) or on a
    removed line of any changed file (code moved between files)."""
    if any(_same_rule(b, d.head) for b in d.base):
        return True
    for changed in ctx.change.files:
        base = ctx.base_facts.get(changed.old_path or changed.path)
        if base is None:
            continue
        removed = {n for h in changed.hunks for n, _ in h.removed}
        if any(b.line in removed and _same_rule(b, d.head) for b in base.assignments):
            return True
    return False


def user_option(d: ChangedDerivation, scopes: FileScopes | None) -> bool:
    """The flag is the user's own switch: the write is a command-line option's handler (`argv`, an
    option string matched, a lambda registered for `--x`), or the field is a command-line option of the
    same file (`parser.add_argument("--sequence-parallel")`, Python). An option is documented to its users
    as one feature; what it gates is that feature."""
    a = d.head
    if cli_write(a, scopes):
        return True
    return scopes is not None and a.lang is Lang.PYTHON and scopes.option_line(a.field) is not None


def _sites(ctx: CheckContext, d: ChangedDerivation) -> list[tuple[FieldRead, tuple[str, ...]]]:
    """Read sites of the derived field that gate operations: reads of the same owner (or through an
    alias bound from the field); reads of a same-named field of another class are not its reads."""
    a = d.head
    owner = field_owner(a, ctx.index)
    family = ctx.index.family(owner) if owner else frozenset()
    out = []
    for r in sorted(ctx.index.reads(a.field), key=lambda r: (r.path, r.line)):
        if not r.in_condition or is_test_path(r.path) or is_vendored(r.path) or ctx.index.is_excluded(r.path):
            continue
        if owner and not r.alias:
            read_owners, _ = owners_of(r, ctx.index)
            if not read_owners & family:
                continue
        ops = _site_operations(r)
        if ops:
            out.append((r, ops))
    return out


def _title(field: str, ops: list[str]) -> tuple[Message, str]:
    """The count and the list name the same operations: as many as fit, then "and N more".

    The message and its English text (what fits is measured, and clipped, in English)."""
    for shown in range(min(len(ops), 4), 0, -1):
        rest = len(ops) - shown
        named = [f"`{op}`" for op in ops[:shown]]
        listed: object = msg("flag-overloading.listed-more", ops=named, rest=rest) if rest else named
        title = msg("flag-overloading.title", field=field, count=len(ops), listed=listed)
        if len(str(title)) <= MAX_TITLE:
            return title, str(title)
    short = msg("flag-overloading.title.short", field=field, count=len(ops))
    return short, clip(str(short), MAX_TITLE)


def run(ctx: CheckContext) -> Iterable[Finding]:
    done: set[str] = set()
    scopes: dict[str, FileScopes | None] = {}

    def scopes_of(path: str) -> FileScopes | None:
        if path not in scopes:
            changed = ctx.change.file(path)
            text = changed.head_text if changed is not None else None
            scopes[path] = file_scopes(path, text) if text is not None else None
        return scopes[path]

    for d in sorted(ctx.derivations, key=lambda d: (d.head.path, d.head.line, d.head.target)):
        a = d.head
        if a.field in done or not is_derived(d) or moved_or_renamed(ctx, d):
            continue
        if user_option(d, scopes_of(a.path)):
            continue
        done.add(a.field)
        if not is_boolean_flag(d, ctx.index):
            continue
        sites = _sites(ctx, d)
        if len({frozenset(behaviour(op) for op in ops) for _, ops in sites}) < 2:
            continue  # every read site gates the same behaviours: one meaning
        # Behaviours in the order they are first gated (sites are ordered by path and line), each named
        # by its first operation.
        gated_at: dict[str, list[FieldRead]] = {}
        named: dict[str, str] = {}
        for r, ops in sites:
            for op in ops:
                named.setdefault(behaviour(op), op)
                gated_at.setdefault(named[behaviour(op)], [])
                if r not in gated_at[named[behaviour(op)]]:
                    gated_at[named[behaviour(op)]].append(r)
        ops_list = list(gated_at)
        title, title_en = _title(a.field, ops_list)
        evidence: list[Message | str] = []
        for op in ops_list[:2]:
            first, *more = gated_at[op]
            at = place(first.path, first.line)
            evidence.append(
                msg("flag-overloading.gated-more", op=op, place=at, more=len(more))
                if more
                else msg("flag-overloading.gated", op=op, place=at)
            )
        if len(ops_list) > 2:
            tail = [f"`{op}`" for op in ops_list[2:]]
            where = sorted({place(r.path, r.line) for op in ops_list[2:] for r in gated_at[op]})
            evidence.append(
                msg("flag-overloading.gated-tail-more", ops=tail, places=where[:3], more=len(where) - 3)
                if len(where) > 3
                else msg("flag-overloading.gated-tail", ops=tail, places=where[:3])
            )
        # English as before: the title as measured, the tail line clipped before its count
        english = [str(e) for e in evidence]
        if len(ops_list) > 2:
            tail_en = str(msg("flag-overloading.gated-tail", ops=tail, places=where[:3]))
            english[-1] = clip(tail_en, 300) + (
                f" and {len(where) - 3} more site(s)" if len(where) > 3 else ""
            )
        finding = Finding.make(
            rule=id,
            severity=severity,
            path=a.path,
            line=a.line,
            title=title,
            anchor=f"{a.field}|" + ",".join(sorted(ops_list)),
            evidence=evidence,
            suggestion=msg("flag-overloading.suggestion", field=a.field),
            extra=(("field", a.field), ("operations", ", ".join(ops_list)), ("sites", str(len(sites)))),
        )
        yield finding.with_(title=title_en, evidence=tuple(english))
