"""Mutants that revert the change's derivation branches (pure: change and facts in, mutated texts out).

A new branch is reverted by dropping its changed writes (the `if` stays, emptied; Python gets `pass`),
so the surrounding structure (`else`, closing braces) is never broken. A changed write is reverted by
restoring the base: the base statement for a changed value, the base condition for a changed guard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewbot.analysis.derive import ChangedDerivation, assignment_anchor
from reviewbot.lang.facts import AssignKind, Assignment, Lang
from reviewbot.model.change import ChangeSet
from reviewbot.model.tests import Mutant

__all__ = ["Mutant", "build_mutants", "statement_range"]

_MAX_STATEMENT_LINES = 60


def _code(line: str, lang: Lang) -> str:
    marker = "#" if lang is Lang.PYTHON else "//"
    return line.split(marker, 1)[0].rstrip()


def statement_range(lines: list[str], line: int, lang: Lang) -> tuple[int, int]:
    """First and last 1-based line of the statement that starts at `line`."""
    depth = 0
    end = line
    for n in range(line, min(len(lines), line + _MAX_STATEMENT_LINES) + 1):
        code = _code(lines[n - 1], lang)
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        end = n
        if depth <= 0 and (code.endswith(";") if lang is Lang.CPP else not code.endswith("\\")):
            break
    return line, end


def _condition_range(lines: list[str], start: int, lang: Lang) -> tuple[int, int]:
    """Lines of an `if` condition: from the `if` to the `{` (C++) or the `:` (Python) that opens the body."""
    depth = 0
    for n in range(start, min(len(lines), start + _MAX_STATEMENT_LINES) + 1):
        code = _code(lines[n - 1], lang)
        depth += code.count("(") - code.count(")")
        opens = "{" in code if lang is Lang.CPP else code.endswith(":")
        if depth <= 0 and opens:
            return start, n
    return start, start


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _statement_span(lines: list[str], a: Assignment) -> tuple[int, int, int, int] | None:
    """(first line, first col, last line, end col) of the write `a`, leaving code around it alone."""
    first = lines[a.line - 1] if 0 < a.line <= len(lines) else ""
    m = re.search(
        rf"(?:\b[A-Za-z_]\w*\s*(?:\.|->|::)\s*)*\b{re.escape(a.field)}\s*(?:\*\*|//|<<|>>|[-+*/%|&^@])?=(?!=)",
        first,
    )
    if m is None:
        return None
    depth, quote = 0, ""
    n, col = a.line, m.start()
    while n <= min(len(lines), a.line + _MAX_STATEMENT_LINES):
        text = lines[n - 1]
        i = col if n == a.line else 0
        while i < len(text):
            c = text[i]
            if quote:
                quote = "" if c == quote and text[i - 1] != "\\" else quote
            elif c in "\"'":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:  # the block around the statement closes: the statement ended before it
                    return a.line, m.start(), n, i
                depth -= 1
            elif c == ";" and depth == 0:
                return a.line, m.start(), n, i + 1
            elif (c == "#") if a.lang is Lang.PYTHON else text.startswith("//", i):
                break
            i += 1
        if a.lang is Lang.PYTHON and depth == 0 and not text.rstrip().endswith("\\"):
            return a.line, m.start(), n, len(text)
        n += 1
    return None


def _drop(lines: list[str], writes: Iterable[Assignment]) -> list[str]:
    """Replace each write by an empty statement; code before and after it on its lines stays."""
    out = list(lines)
    for a in sorted(writes, key=lambda w: w.line, reverse=True):
        span = _statement_span(out, a)
        filler = "pass" if a.lang is Lang.PYTHON else ";"
        if span is None:
            start, end = statement_range(out, a.line, a.lang)
            span = (start, len(_indent(out[start - 1])), end, len(out[end - 1]))
        l1, c1, l2, c2 = span
        rest = out[l2 - 1][c2:]
        if l1 == l2:
            out[l1 - 1] = out[l1 - 1][:c1] + filler + rest
            continue
        out[l1 - 1] = out[l1 - 1][:c1] + filler
        for n in range(l1 + 1, l2):
            out[n - 1] = ""
        out[l2 - 1] = (_indent(out[l1 - 1]) + rest.lstrip()) if rest.strip() else ""
    return out


def _replace(
    lines: list[str], head: tuple[int, int], base_lines: list[str], base: tuple[int, int]
) -> list[str]:
    return lines[: head[0] - 1] + base_lines[base[0] - 1 : base[1]] + lines[head[1] :]


def _problem(text: str, lang: Lang, path: str) -> str:
    if lang is not Lang.PYTHON:
        return ""
    try:
        compile(text, path, "exec")
    except SyntaxError as exc:
        return f"the reverted file does not parse ({exc.msg}, line {exc.lineno})"
    return ""


def _branch_key(a: Assignment) -> tuple[str, int]:
    if a.kind is AssignKind.TERNARY or a.guard is None:
        return a.path, a.line
    return a.path, a.guard_line or a.branch_start or a.line


def _match_base(d: ChangedDerivation) -> tuple[str, Assignment | None]:
    """How to revert `d`: drop it, or restore which base write."""
    key = d.head.guard.key if d.head.guard is not None else ""
    if d.base and not d.new_branch:
        same = [b for b in d.base if (b.guard.key if b.guard is not None else "") == key]
        return "restore-value", min(same, key=lambda b: abs(b.line - d.head.line))
    if d.base and d.head.kind is AssignKind.TERNARY:
        ternaries = [b for b in d.base if b.kind is AssignKind.TERNARY]
        if ternaries:
            return "restore-value", min(ternaries, key=lambda b: abs(b.line - d.head.line))
    same_value = [
        b for b in d.base if b.guard is not None and b.value == d.head.value and b.kind is d.head.kind
    ]
    if same_value and d.head.guard_line is not None:
        return "restore-guard", min(same_value, key=lambda b: abs(b.line - d.head.line))
    return "drop-branch", None


def _one(mid: str, group: list[ChangedDerivation], change: ChangeSet) -> Mutant | None:
    a = min((d.head for d in group), key=lambda x: x.line)
    f = change.file(a.path)
    if f is None or f.head_text is None:
        return None
    lines = f.head_text.split("\n")
    covers = tuple(sorted({(d.head.path, d.head.line) for d in group}))
    how, b = _match_base(group[0])
    base_lines = f.base_text.split("\n") if f.base_text is not None else None
    where = f"{a.path}:{_branch_key(a)[1]}"
    if how == "restore-value" and b is not None and base_lines is not None:
        head_r, base_r = statement_range(lines, a.line, a.lang), statement_range(base_lines, b.line, b.lang)
        mutated = _replace(lines, head_r, base_lines, base_r)
        stmt = b.text or f"{b.target} = {b.value}"
        desc = f"restore the base write `{stmt}` at {where}"
        reverted = f"the base write `{stmt}` restored"
    elif how == "restore-guard" and b is not None and base_lines is not None and b.guard_line is not None:
        head_r = _condition_range(lines, a.guard_line or a.line, a.lang)
        base_r = _condition_range(base_lines, b.guard_line, b.lang)
        mutated = _replace(lines, head_r, base_lines, base_r)
        cond = b.guard_text or (b.guard.key if b.guard else "")
        desc = f"restore the base condition `{cond}` at {where}"
        reverted = f"the base condition `{cond}` restored"
    else:
        mutated = _drop(lines, {d.head.line: d.head for d in group}.values())
        stmts = ", ".join(f"`{d.head.text or d.head.target + ' = ' + d.head.value}`" for d in group)
        new_if = a.guard is not None and a.branch_start is not None and a.branch_start in f.added_lines
        desc = f"drop {stmts} at {where}" + (", the body of the new branch" if new_if else "")
        reverted = f"{stmts} removed"
        how = "drop-branch"
    text = "\n".join(mutated)
    return Mutant(
        id=mid,
        path=a.path,
        line=_branch_key(a)[1],
        kind=how,
        description=desc,
        covers=covers,
        text=text,
        problem=_problem(text, a.lang, a.path),
        anchor=" ; ".join(sorted({assignment_anchor(d.head) for d in group})),
        reverted=reverted,
    )


def build_mutants(
    change: ChangeSet, derivations: list[ChangedDerivation], limit: int | None = None
) -> list[Mutant]:
    """One mutant per changed branch (writes under the same condition, or one ternary statement),
    never two for one changed line, and at most `limit` (in file and line order).

    One mutant per line is enough to tell a tested line from an untested one (Google's experience:
    on more than 90% of lines); a branch whose every write another mutant already reverts adds none.
    """
    groups: dict[tuple[str, int, str], list[ChangedDerivation]] = {}
    for d in derivations:
        how, _ = _match_base(d)
        # Drops of one branch share a mutant; each restore is its own (it restores one base write).
        key = (*_branch_key(d.head), how if how == "drop-branch" else f"{how}:{d.head.line}")
        groups.setdefault(key, []).append(d)
    out: list[Mutant] = []
    covered: set[tuple[str, int]] = set()
    for key in sorted(groups):
        if limit is not None and len(out) >= limit:
            break
        lines = {(d.head.path, d.head.line) for d in groups[key]}
        if lines <= covered:
            continue
        m = _one(f"m{len(out) + 1}", groups[key], change)
        if m is not None:
            out.append(m)
            covered |= lines
    return out
