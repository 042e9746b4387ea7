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
import weakref
from collections.abc import Iterable

from reviewbot.lang.builders import builder_helpers, is_builder
from reviewbot.lang.cache import active, facts_key
from reviewbot.lang.calls import CallGraph, CallSite, FileCalls, extract_calls, owner_of, split_callee
from reviewbot.lang.common import mentions_field
from reviewbot.lang.facts import FileFacts, GatedStmt, Lang, lang_for_path
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.mentions import scan_readers, switch_like
from reviewbot.lang.parse import parse_file
from reviewbot.model.change import RepoTree

# `is_builder` is re-exported: other analyses import it from here.
__all__ = ["follow_calls", "followed", "resolve_import", "PathIndex", "is_builder"]

log = logging.getLogger(__name__)

_SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx", ".cu")
_MAX_BASE_LEVELS = 4  # base classes loaded up from one class to find an inherited method
# The graph of the last `follow_calls` over an index, by the index's identity (dropped with it).
_FOLLOWED: dict[int, tuple[weakref.ref[RepoIndex], CallGraph]] = {}


def _calls(path: str, source: str, facts: FileFacts) -> FileCalls:
    """`extract_calls`, through the facts cache when one is in use: the call sites of a file are a
    function of its text (and of its full facts, themselves a function of the text)."""
    store = active()
    if store is None:
        return extract_calls(path, source, facts)
    key = facts_key(path, source, "\0calls")
    found = store.get_values([key], FileCalls).get(key)
    if found is None:
        found = extract_calls(path, source, facts)
        store.put(key, found)
    return found


class PathIndex:
    """Repository paths by name, for suffix look-ups (`/pkg/mod.py`) without scanning every path."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = set(paths)
        self._by_name: dict[str, list[str]] = {}
        for p in sorted(self.paths):
            self._by_name.setdefault(posixpath.basename(p), []).append(p)

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def ending(self, *suffixes: str) -> list[str]:
        """Paths that end with one of `suffixes` (each starting with `/`), sorted."""
        found: set[str] = set()
        for suffix in suffixes:
            found.update(p for p in self._by_name.get(posixpath.basename(suffix), ()) if p.endswith(suffix))
        return sorted(found)


def resolve_import(path: str, spec: str, lang: Lang, paths: set[str] | PathIndex) -> list[str]:
    """Repository paths an import (`.ops`, `pkg.mod`) or include (`cpp/Op.h`) of `path` refers to."""
    known = paths if isinstance(paths, PathIndex) else PathIndex(paths)
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
        found = [p for p in (f"{stem}.py", f"{stem}/__init__.py") if p in known]
        if not found and not dots:
            # Source roots (`src/pkg/mod.py` imported as `pkg.mod`).
            found = known.ending(f"/{stem}.py", f"/{stem}/__init__.py")[:1]
        return found
    candidates = [posixpath.normpath(posixpath.join(here, spec)), spec]
    found = [c for c in candidates if c in known]
    if not found:
        found = known.ending("/" + spec)[:1]
    out = list(found)
    for header in found:
        stem = posixpath.splitext(header)[0]
        out.extend(s for s in (stem + suffix for suffix in _SOURCE_SUFFIXES) if s in known)
    return out


class _Follower:
    def __init__(self, tree: RepoTree, index: RepoIndex, max_files: int) -> None:
        self.tree = tree
        self.index = index
        self.max_files = max_files
        self.paths = PathIndex(tree.paths())
        self.graph = CallGraph()
        self.tried: set[str] = set()
        self.looked: set[tuple[str, str, str]] = set()
        self.by_function: dict[str, set[str]] | None = None
        self.loaded: set[tuple[str, str]] = set()

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
        calls = _calls(path, source, facts)
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
        if self.graph.resolve(site):
            return
        # An inherited method: load the class's declaration and its bases' until one defines it.
        cls, method = qualified.rsplit(".", 1) if "." in qualified else (owner_of(site.function), qualified)
        if cls is not None:
            self.load_class(cls, method)

    def load_class(self, cls: str, method: str) -> None:
        """Files that declare `cls` or define its methods (and the headers they include that declare
        it), then the same for each base class up the ancestry, until one defines `method`."""
        for _ in range(_MAX_BASE_LEVELS):
            if self.graph.methods("", cls, method):
                return
            for owner in self.graph.ancestry(cls):
                if (owner, method) in self.loaded:
                    continue
                self.loaded.add((owner, method))
                for p in self._declaring(owner):
                    self.add(p, needs=owner)
                    for inc in self.graph.imports.get(p, ()):
                        self.add(inc, needs=owner)

    def _declaring(self, cls: str) -> list[str]:
        """Indexed files that declare the class `cls` or define one of its methods, by path."""
        found = {o.path for o in self.index.owners(cls)} | self._defining().get(f"{cls}.*", set())
        return sorted(p for p in found if not is_test_path(p))

    def _defining(self) -> dict[str, set[str]]:
        """Indexed files by the functions they define (`Cls.method` and `method`), built once."""
        if self.by_function is None:
            self.by_function = {}
            for p, facts in self.index.files.items():
                for fn in facts.functions:
                    parts = fn.name.replace("::", ".").split(".")
                    # `*` keys a class by any of its methods (`Cls.*`), for inherited look-ups.
                    keys = {parts[-1], ".".join(parts[-2:])} | (
                        {f"{parts[-2]}.*"} if len(parts) > 1 else set()
                    )
                    for key in keys:
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
    """The call graph behind the read sites of `fields`, `depth` call levels deep, and the readers of
    the switch-like fields that code reads (see `scan_readers`)."""
    f = _Follower(tree, index, max_files)
    frontier: list[tuple[str, str | None, frozenset[int] | None]] = []
    for name in sorted(set(fields)):
        reads = sorted(index.reads(name), key=lambda r: (r.path, r.line, r.expr))
        for r in reads:
            if not r.in_condition or is_test_path(r.path) or not (r.gated or r.gated_else):
                continue
            f.add(r.path)
            frontier.append((r.path, r.function, _spans(r.gated) | _spans(r.gated_else)))
    reached = list(frontier)
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
        reached.extend(following)
    log.debug("followed calls through %d file(s) (%s)", len(f.graph.files), ", ".join(sorted(f.graph.files)))
    scan_readers(tree, index, f.graph, _switch_names(index, f.graph, reached, set(fields)))
    f.graph.helpers = builder_helpers(tree, index)
    _remember(index, f.graph)
    return f.graph


def _remember(index: RepoIndex, graph: CallGraph) -> None:
    key = id(index)

    def forget(_ref: weakref.ref[RepoIndex]) -> None:
        _FOLLOWED.pop(key, None)

    _FOLLOWED[key] = (weakref.ref(index, forget), graph)


def followed(index: RepoIndex) -> CallGraph | None:
    """The graph `follow_calls` built over `index` in this round, if it ran (analyses that start from
    the index alone — how far a rule reaches — read the builders' helper calls from it)."""
    entry = _FOLLOWED.get(id(index))
    return entry[1] if entry is not None and entry[0]() is index else None


def _switch_names(
    index: RepoIndex,
    graph: CallGraph,
    reached: list[tuple[str, str | None, frozenset[int] | None]],
    fields: set[str],
) -> list[str]:
    """Fields read in the reached code whose declaration makes them a switch: declared `bool` or of an
    enum type, or with a boolean or enum default. Only for these is it worth finding every reader."""
    names: set[str] = set()
    for path, function, lines in reached:
        facts = graph.files.get(path)
        for r in facts.reads if facts is not None else ():
            if r.function == function and (lines is None or r.line in lines) and r.field not in fields:
                names.add(r.field)
    return sorted(n for n in names if switch_like(index, n))
