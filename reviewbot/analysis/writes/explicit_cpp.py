"""The C++ half of `explicit_writes`: fields of the params struct a command-line parser filled
(`gpt_params_parse(argc, argv, params)`) that an added line overwrites, directly (`params.x = ...;`) or
through a call that passes the struct to a function writing its fields; and the command-line handlers
that set those fields (where the user gives the value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.sides import Side
from reviewbot.model.change import RepoTree, read_many

__all__ = ["CppCandidate", "cpp_candidates", "cpp_handler_sources", "read_files"]

_CPP_PARSE = re.compile(r"\b(\w*parse\w*)\s*\(\s*argc\s*,\s*argv\s*,\s*(\w+)\s*[,)]")
_CPP_ASSIGN = r"^\s*{var}\s*\.\s*(\w+)\s*=(?!=)"
_CPP_CALL = r"^\s*(?:\w+\s*::\s*)*(\w+)\s*\(\s*{var}\s*\)\s*;"
_CPP_HANDLER = r"\.\s*{field}\s*=\s*[^;=]*(?:argv|std::sto[ifdlu]+|\bato[if]\b|\bvalue\b|\bstrto\w+)"


def _enclosing_conditions(lines: list[str], index: int, start: int) -> list[str]:
    """Header texts (if/while/for/else-if) of the blocks around line `index` (0-based), not above `start`."""
    out: list[str] = []
    depth = 0
    prev = lines[index - 1] if index > 0 else ""
    if re.match(r"^\s*(?:else\s+)?if\s*\(", prev) and "{" not in prev and ";" not in prev:
        out.append(prev)
    head = lines[index]
    m = re.match(r"^\s*(?:else\s+)?if\s*\((.*)\)\s*[^;]*;", head)
    if m:
        out.append(head)
    for i in range(index - 1, max(start - 1, -1), -1):
        t = re.sub(r"//.*$", "", lines[i])
        t = re.sub(r'"(?:\\.|[^"\\])*"', '""', t)
        for ch in reversed(t):
            if ch == "}":
                depth += 1
            elif ch == "{":
                if depth == 0:
                    header = t
                    j = i
                    while j > start and not re.search(
                        r"\b(?:if|while|for|switch)\b|\belse\b|\)\s*\{?\s*$", header
                    ):
                        j -= 1
                        header = lines[j] + header
                    if "(" not in header and j > start:
                        header = lines[j - 1] + header
                    out.append(header)
                else:
                    depth -= 1
    return out


def _cpp_field_written(body: list[str], var: str, start: int) -> list[tuple[int, str, str]]:
    """(0-based index, field, text) of unguarded writes of `var.field` in `body` lines (from `start`)."""
    out: list[tuple[int, str, str]] = []
    assign = re.compile(_CPP_ASSIGN.format(var=re.escape(var)))
    # `get_env("X", params.model);`: a call made for its effect on its last (reference) argument; a call
    # whose value is used (`auto c = chunk_file(f, params.chunk_separator);`) reads its arguments
    by_ref = re.compile(
        r"^\s*(?:\w+\s*::\s*)*\w+\s*\(\s*[^;()]*,\s*" + re.escape(var) + r"\s*\.\s*(\w+)\s*\)\s*;"
    )
    for i in range(start, len(body)):
        text = body[i]
        m = assign.match(text) or by_ref.match(text)
        if not m:
            continue
        field = m.group(1)
        conds = _enclosing_conditions(body, i, start)
        if any(re.search(r"\b" + re.escape(field) + r"\b", c) for c in conds):
            continue
        # `params.n_parallel = std::max(4, params.n_parallel);`: the value reads the user's own, a floor
        # or a normalisation that keeps it, not a replacement
        if assign.match(text) and re.search(
            rf"\b{re.escape(var)}\s*\.\s*{re.escape(field)}\b", text.split("=", 1)[1]
        ):
            continue
        out.append((i, field, text.strip()))
    return out


def _cpp_definition(text: str, name: str) -> tuple[list[str], int, str] | None:
    """(lines, body start index, parameter name) of a function `name(T & p) {` defined in `text`."""
    m = re.search(
        r"^[\w:<>\s\*&]*\b" + re.escape(name) + r"\s*\(\s*[\w:<>\s]*&\s*(\w+)\s*\)\s*\{", text, re.M
    )
    if m is None:
        return None
    lines = text.split("\n")
    first = text.count("\n", 0, m.start())
    depth = 0
    for i in range(first, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth <= 0 and i > first:
            return lines[first : i + 1], 1, m.group(1)
    return None


@dataclass(frozen=True)
class CppCandidate:
    line: int
    var: str
    fields: tuple[str, ...]
    writes: tuple[tuple[str, int, str], ...]


def _definition_texts(name: str, texts: dict[str, str], tree: RepoTree | None) -> dict[str, str]:
    """The changed C++ files, else the head tree's C++ files naming `name` (at most 20)."""
    if any(re.search(r"\b" + re.escape(name) + r"\s*\([^;]*\)\s*\{", t) for t in texts.values()):
        return texts
    grep = getattr(tree, "grep", None)
    if tree is None or not callable(grep):
        return texts
    found = grep([name]) or set()
    paths = [p for p in sorted(found) if re.search(r"\.(?:cc|cpp|cxx|h|hpp|cu)$", p) and p not in texts][:20]
    return {**texts, **read_files(tree, paths)}


def _consumed(body: list[str], var: str, field: str, first: int, line: int) -> bool:
    """The parsed value was used before the write replaced it: the struct handed to a call
    (`llama_init_from_gpt_params(params)` loads the target model from the user's `params.model`) or
    the field read, between the parse and the write. Reusing the struct afterwards (the draft model's
    settings written into it) loses nothing the user gave."""
    v, f = re.escape(var), re.escape(field)
    handed = re.compile(rf"\w\s*\((?:[^;]*[,(])?\s*&?\s*{v}\s*[,)]")
    read = re.compile(rf"\b{v}\s*(?:\.|->)\s*{f}\b(?!\s*=(?!=))")
    return any(handed.search(t) or read.search(t.split("=", 1)[-1]) for t in body[first:line])


def cpp_candidates(
    s: Side, text: str, fn_texts: dict[str, str], tree: RepoTree | None = None
) -> list[CppCandidate]:
    """The added lines of `s` that overwrite a field of a params struct after a CLI parser filled it."""
    lines = text.split("\n")
    out: list[CppCandidate] = []
    facts = s.head_facts
    for m in _CPP_PARSE.finditer(text):
        parse_line = text.count("\n", 0, m.start()) + 1
        var = m.group(2)
        fn = facts.function_at(parse_line) if facts is not None else None
        end = fn.end_line if fn is not None else len(lines)
        start = fn.start_line if fn is not None else parse_line
        body = lines[start - 1 : end]
        offset = start - 1
        first = parse_line - start + 1
        for i, field, _txt in _cpp_field_written(body, var, first):
            if i + offset + 1 in s.added and not _consumed(body, var, field, first, i):
                out.append(CppCandidate(i + offset + 1, var, (field,), ()))
        call = re.compile(_CPP_CALL.format(var=re.escape(var)))
        for i in range(first, len(body)):
            ln = i + offset + 1
            c = call.match(body[i])
            if ln not in s.added or not c or c.group(1) in (m.group(1), "assert"):
                continue
            conds = _enclosing_conditions(body, i, first)
            if conds:
                continue
            for path, ftext in _definition_texts(c.group(1), fn_texts, tree).items():
                d = _cpp_definition(ftext, c.group(1))
                if d is None:
                    continue
                flines, bstart, param = d
                writes = _cpp_field_written(flines, param, bstart)
                if writes:
                    base = ftext.count("\n", 0, ftext.find("\n".join(flines))) + 1
                    out.append(
                        CppCandidate(
                            ln,
                            var,
                            tuple(dict.fromkeys(f for _, f, _ in writes)),
                            tuple((path, base + j, t) for j, _, t in writes),
                        )
                    )
                break
    return out


def cpp_handler_sources(fields: set[str], texts: dict[str, str]) -> dict[str, tuple[str, int, str]]:
    """{field: (path, line, text)} of the first command-line handler in `texts` that sets the field."""
    out: dict[str, tuple[str, int, str]] = {}
    for path, text in sorted(texts.items()):
        if path.endswith(".py"):
            continue
        for f in fields - set(out):
            m = re.search(_CPP_HANDLER.format(field=re.escape(f)), text)
            if m:
                n = text.count("\n", 0, m.start()) + 1
                out[f] = (path, n, text.split("\n")[n - 1].strip())
    return out


def read_files(tree: RepoTree, paths: Iterable[str]) -> dict[str, str]:
    """{path: text} of the non-empty files among `paths` (one batch when the tree can)."""
    got = read_many(tree, sorted(set(paths)))
    return {p: t for p, t in got.items() if t}
