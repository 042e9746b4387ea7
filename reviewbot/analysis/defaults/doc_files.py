"""Documentation files that still state a default the change replaced (pure, apart from reading the tree).

For each default the change alters (`analysis.defaults.named_defaults`: a C++ initialiser with the flags
that set it, a DeepSpeed-style config key, an argparse option, a config field's generated flag), the
Markdown and reStructuredText files of the head tree that name it are read line by line. A line is stale
when it names the option or key and states the base's value as its default:

- on the same line, after the name and before any other flag: `--batch-size N: ... (default: 512)`,
  `` `-b N`, `--batch-size N`: ... Default: `512` ``;
- in a Markdown table row that names it, in the column headed `Default`.

Not read: change logs and release notes (history), vendored trees. A document beside a program that
registers the same flag for a field of its own (another tool's `--batch-size`, `examples/llama-bench/`)
documents that program, not the changed default, and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.defaults.cli_help import branches
from reviewbot.analysis.defaults.docs import StaleDefault, stated_default
from reviewbot.analysis.defaults.named_defaults import NamedDefault, named_defaults
from reviewbot.analysis.defaults.stale_help import same_value, shown_value
from reviewbot.analysis.removals.named_flags import is_history, whole_name
from reviewbot.analysis.sides import Side
from reviewbot.model.change import RepoTree, read_many

__all__ = ["stale_doc_files"]

_DOCS = ("*.md", "*.rst")
_SOURCE = re.compile(r"\.(?:cpp|cc|cxx|py)$")
_NEXT_FLAG = re.compile(r"(?<![\w-])--[A-Za-z]")
_REACH = 300  # characters after a name in which its default is looked for
_MAX_DOCS = 60


@dataclass(frozen=True)
class _Hit:
    name: str
    stated: str
    line: int
    text: str


def _inline(line: str, names: list[tuple[str, re.Pattern[str]]]) -> tuple[str, str] | None:
    """(name, stated default) of a line that names an option and then its default."""
    for name, pat in names:
        for m in pat.finditer(line):
            rest = line[m.end() : m.end() + _REACH]
            nxt = _NEXT_FLAG.search(rest)
            stated = stated_default(rest[: nxt.start()] if nxt else rest)
            if stated is not None:
                return name, stated
    return None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table_default(lines: list[str], i: int) -> str | None:
    """The `Default` column's cell of Markdown table row `i` (None when the table has no such column)."""
    top = i
    while top > 0 and lines[top - 1].lstrip().startswith("|"):
        top -= 1
    if top == i or top + 1 >= i:  # row `i` is the header or the separator
        return None
    header = [c.strip("*_` ").lower() for c in _cells(lines[top])]
    column = next((k for k, c in enumerate(header) if c in ("default", "default value", "defaults")), None)
    row = _cells(lines[i])
    if column is None or column >= len(row):
        return None
    cell = row[column].strip().strip("*_` ").strip("\"'")
    return cell or None


def _hits(text: str, names: tuple[str, ...], old: str) -> list[_Hit]:
    lines = text.split("\n")
    pats = [(n, whole_name(n)) for n in names]
    out: list[_Hit] = []
    for i, line in enumerate(lines):
        if not any(n in line for n in names):
            continue
        found: tuple[str, str] | None = None
        shown = line.strip()
        named = next((n for n, p in pats if p.search(line)), None)
        if named is not None and line.lstrip().startswith("|"):
            cell = _table_default(lines, i)
            found = (named, cell) if cell is not None else None
            if cell is not None and len(shown) > 100:  # the row's start and its Default cell
                shown = f"{shown[:70].rstrip()} … | {cell} |"
        found = found or _inline(line, pats)
        if found is not None and same_value(found[1], old) is True:
            out.append(_Hit(found[0], found[1], i + 1, shown))
    return out


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _beside(doc: str, flag: str, m: NamedDefault, sources: dict[str, str | None]) -> bool:
    """A program in the document's folder, not the changed one, registers `flag` without setting the
    changed field from it."""
    for path, text in sources.items():
        if path == m.path or _folder(path) != _folder(doc) or not text or f'"{flag}"' not in text:
            continue
        if path.endswith(".py"):
            return True
        if not any(b.field == m.field for b in branches(text) if flag in b.flags):
            return True
    return False


def _sources(tree: RepoTree, docs: list[str]) -> dict[str, str | None]:
    folders = {_folder(d) for d in docs}
    paths = [p for p in tree.paths() if _SOURCE.search(p) and _folder(p) in folders]
    return read_many(tree, paths[:200])


def stale_doc_files(
    changed: Iterable[Side],
    texts: dict[str, tuple[str | None, str | None]],
    tree: RepoTree | None,
    excluded: object = None,
) -> list[StaleDefault]:
    """The lines of the head tree's documents that state a default the change replaced."""
    grep = getattr(tree, "grep", None)
    if tree is None or not callable(grep):
        return []
    moved = named_defaults(changed, texts, tree)
    if not moved:
        return []
    found = grep(sorted({n.lstrip("-") for m in moved for n in m.names}), _DOCS)
    is_excluded = getattr(excluded, "is_excluded", None)
    docs = sorted(
        p for p in (found or ()) if not is_history(p) and not (callable(is_excluded) and is_excluded(p))
    )[:_MAX_DOCS]
    if not docs:
        return []
    bodies = read_many(tree, docs)
    sources = _sources(tree, docs)
    out: list[StaleDefault] = []
    for m in moved:
        for doc in docs:
            body = bodies.get(doc)
            if body:
                out.extend(_stale(m, doc, body, sources, texts))
    return out


def _stale(
    m: NamedDefault,
    doc: str,
    body: str,
    sources: dict[str, str | None],
    texts: dict[str, tuple[str | None, str | None]],
) -> Iterable[StaleDefault]:
    head = (texts.get(m.path, (None, None))[1] or "").split("\n")
    value_text = head[m.line - 1].strip() if 0 < m.line <= len(head) else ""
    for h in _hits(body, m.names, m.old):
        if h.name.startswith("--") and _beside(doc, h.name, m, sources):
            continue
        yield StaleDefault(
            doc,
            m.line,
            h.name,
            "doc",
            h.stated,
            shown_value(m.old),
            shown_value(m.new),
            value_text,
            h.line,
            h.text,
            value_path=m.path,
            field=m.field,
        )
