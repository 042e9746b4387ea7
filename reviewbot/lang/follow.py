"""Follow what a flag gates into the functions it calls: the files behind a `CallGraph`.

Runs after the repository index is built, once per round, for the fields the change derives. The
files holding their read sites are parsed in full; then, up to `depth` call levels, each call made by
the gated code is resolved, and when its target is not known yet the files that may define it (the
caller's imports and includes, the sources next to an included header, indexed files that declare a
function of that name) are read and parsed in full too. Reading is bounded by `max_files`.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable

from reviewbot.lang.calls import CallGraph, CallSite, extract_calls, split_callee
from reviewbot.lang.common import mentions_field
from reviewbot.lang.facts import GatedStmt, Lang, lang_for_path
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.parse import parse_file
from reviewbot.model.change import RepoTree

__all__ = ["follow_calls", "resolve_import"]

log = logging.getLogger(__name__)

_SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx", ".cu")


def resolve_import(path: str, spec: str, lang: Lang, paths: set[str]) -> list[str]:
    """Repository paths an import (`.ops`, `pkg.mod`) or include (`cpp/Op.h`) of `path` refers to."""
    here = posixpath.dirname(path)
    if lang is Lang.PYTHON:
        dots = len(spec) - len(spec.lstrip("."))
        rest = spec[dots:].replace(".", "/")
        if dots:
            base = here
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, rest) if rest else base
        else:
            stem = rest
        found = [p for p in (f"{stem}.py", f"{stem}/__init__.py") if p in paths]
        if not found and not dots:
            # Source roots (`src/pkg/mod.py` imported as `pkg.mod`).
            found = sorted(p for p in paths if p.endswith((f"/{stem}.py", f"/{stem}/__init__.py")))[:1]
        return found
    candidates = [posixpath.normpath(posixpath.join(here, spec)), spec]
    found = [c for c in candidates if c in paths]
    if not found:
        found = sorted(p for p in paths if p.endswith("/" + spec))[:1]
    out = list(found)
    for header in found:
        stem = posixpath.splitext(header)[0]
        out.extend(s for s in (stem + suffix for suffix in _SOURCE_SUFFIXES) if s in paths)
    return out


class _Follower:
    def __init__(self, tree: RepoTree, index: RepoIndex, max_files: int) -> None:
        self.tree = tree
        self.index = index
        self.max_files = max_files
        self.paths = set(tree.paths())
        self.graph = CallGraph()
        self.tried: set[str] = set()
        self.looked: set[tuple[str, str, str]] = set()
        self.by_function: dict[str, set[str]] | None = None

    def add(self, path: str, needs: str | None = None) -> bool:
        """Parse `path` in full into the graph; with `needs`, only when its text mentions that name."""
        if path in self.graph.files or path in self.tried or lang_for_path(path) is None:
            return False
        if len(self.graph.files) >= self.max_files:
            return False
        source = self.tree.read(path)
        if source is None or (needs is not None and not mentions_field(source, needs)):
            self.tried.add(path)
            return False
        facts = parse_file(path, source)
        if facts is None:
            return False
        calls = extract_calls(path, source, facts)
        self.graph.files[path] = facts
        self.graph.calls[path] = calls
        resolved: list[str] = []
        for spec in calls.imports:
            resolved.extend(resolve_import(path, spec, facts.lang, self.paths))
        self.graph.imports[path] = tuple(dict.fromkeys(p for p in resolved if p != path))
        return True

    def _wanted(self, site: CallSite) -> tuple[str, str] | None:
        """(name a definition must mention, qualified function to look for) for an unresolved call."""
        parts = split_callee(site.callee)
        if not parts:
            return None
        if len(parts) >= 2:
            bound = self.graph.binding(site, parts[-2])
            if bound is not None:
                return bound[0], f"{bound[0]}.{parts[-1]}"
            return parts[-1], parts[-1]
        bound = self.graph.binding(site, parts[0])
        if bound is not None:
            return bound[0], f"{bound[0]}.forward"
        return parts[0], parts[0]

    def look_for(self, site: CallSite) -> None:
        wanted = self._wanted(site)
        if wanted is None:
            return
        name, qualified = wanted
        key = (site.path, name, qualified)
        if key in self.looked:
            return
        self.looked.add(key)
        for p in self.graph.imports.get(site.path, ()):
            self.add(p, needs=name)
        for p in sorted(self._defining().get(qualified, ())):
            if p not in self.graph.files and not is_test_path(p):
                self.add(p, needs=name)

    def _defining(self) -> dict[str, set[str]]:
        """Indexed files by the functions they define (`Cls.method` and `method`), built once."""
        if self.by_function is None:
            self.by_function = {}
            for p, facts in self.index.files.items():
                for fn in facts.functions:
                    parts = fn.name.replace("::", ".").split(".")
                    for key in {parts[-1], ".".join(parts[-2:])}:
                        self.by_function.setdefault(key, set()).add(p)
        return self.by_function


def _spans(stmts: tuple[GatedStmt, ...]) -> frozenset[int]:
    """Lines of gated statements; each may continue up to the next one (`f(\n  cfg.x)`)."""
    lines: set[int] = set()
    for s, after in zip(stmts, (*stmts[1:], None)[: len(stmts)], strict=True):
        last = after.line - 1 if after is not None and after.line > s.line else s.line
        lines.update(range(s.line, last + 1))
    return frozenset(lines)


def follow_calls(
    tree: RepoTree, index: RepoIndex, fields: Iterable[str], depth: int = 2, max_files: int = 48
) -> CallGraph:
    """The call graph behind the read sites of `fields`, `depth` call levels deep."""
    f = _Follower(tree, index, max_files)
    frontier: list[tuple[str, str | None, frozenset[int] | None]] = []
    for name in sorted(set(fields)):
        for r in index.reads(name):
            if not r.in_condition or is_test_path(r.path) or not (r.gated or r.gated_else):
                continue
            f.add(r.path)
            frontier.append((r.path, r.function, _spans(r.gated) | _spans(r.gated_else)))
    seen: set[tuple[str, str | None]] = set()
    for _ in range(depth):
        following: list[tuple[str, str | None, frozenset[int] | None]] = []
        for path, function, lines in frontier:
            for site in f.graph.sites_in(path, function, lines):
                callees = f.graph.resolve(site)
                if not callees:
                    f.look_for(site)
                    callees = f.graph.resolve(site)
                for c in callees:
                    key = (c.function.path, c.function.name)
                    if key not in seen:
                        seen.add(key)
                        following.append((c.function.path, c.function.name, None))
        frontier = following
    log.debug("followed calls through %d file(s) (%s)", len(f.graph.files), ", ".join(sorted(f.graph.files)))
    return f.graph
