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
import re
import weakref
from collections.abc import Iterable

from reviewbot.lang.calls import CallGraph, CallSite, extract_calls, owner_of, split_callee
from reviewbot.lang.common import mentions_field
from reviewbot.lang.facts import Function, GatedStmt, Lang, lang_for_path
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.parse import parse_file
from reviewbot.model.change import RepoTree

__all__ = [
    "follow_calls",
    "followed",
    "resolve_import",
    "PathIndex",
    "builder_helpers",
    "is_builder",
    "scan_readers",
]

log = logging.getLogger(__name__)

_SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx", ".cu")
_MAX_BASE_LEVELS = 4  # base classes loaded up from one class to find an inherited method
MAX_READER_FILES = 24  # a switch mentioned in more files is taken as read on many paths (not parsed)
_READ_BATCH = 1000  # files per read_many call
_BOOL_TYPES = frozenset({"bool", "_Bool"})
_BOOL_LITERALS = frozenset({"True", "False"})
_BUILDER = re.compile(r"(create|build|make)_?config", re.IGNORECASE)
# The graph of the last `follow_calls` over an index, by the index's identity (dropped with it).
_FOLLOWED: dict[int, tuple[weakref.ref[RepoIndex], CallGraph]] = {}


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


def switch_like(index: RepoIndex, name: str) -> bool:
    """Some owner declares `name` as a bool or an enum, or gives it a boolean or enum default."""
    for d in index.defaults(name):
        if d.value in _BOOL_LITERALS or index.enum_members(d.value.rsplit(".", 1)[0].rsplit(".", 1)[-1]):
            return True
    return any(
        decl.type in _BOOL_TYPES or decl.default in _BOOL_LITERALS or bool(index.enum_members(decl.type))
        for facts in index.files.values()
        for decl in facts.fields
        if decl.field == name
    )


def scan_readers(tree: RepoTree, index: RepoIndex, graph: CallGraph, names: Iterable[str]) -> None:
    """Every source file that mentions one of `names` (whole word; tests and vendored trees left out):
    the lines that mention them go to `graph.mention_lines`, and the files are parsed into
    `graph.readers` — unless a name is mentioned in more than `MAX_READER_FILES` files, which
    `graph.widely_read` then records with the count (such a field is read on many paths)."""
    wanted = sorted(set(names))
    if not wanted:
        return
    paths = [
        p
        for p in tree.paths()
        if lang_for_path(p) is not None and not is_test_path(p) and not index.is_excluded(p)
    ]
    mentions: dict[str, list[str]] = {n: [] for n in wanted}
    sources: dict[str, str] = {}
    patterns = {n: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in wanted}
    for start in range(0, len(paths), _READ_BATCH):
        for path, text in _read_many(tree, paths[start : start + _READ_BATCH]):
            hits = [n for n in wanted if n in text and patterns[n].search(text)]
            for n in hits:
                mentions[n].append(path)
            if hits:
                sources[path] = text
    parsed: list[str] = []
    for n in wanted:
        found = sorted(mentions[n])
        graph.mentions[n] = tuple(found)
        if len(found) > MAX_READER_FILES:
            graph.widely_read[n] = len(found)
        else:
            parsed.append(n)
    if not parsed:
        return

    def focus(body: str) -> bool:  # only the function bodies that mention a name are walked
        return any(n in body for n in parsed)

    for path in sorted({p for n in parsed for p in mentions[n]}):
        text = sources[path]
        names = [n for n in parsed if path in graph.mentions[n]]
        graph.mention_lines[path] = {
            i: line.strip()
            for i, line in enumerate(text.split("\n"), 1)
            if any(n in line and patterns[n].search(line) for n in names)
        }
        if path not in graph.files:
            facts = parse_file(path, text, focus)
            if facts is not None:
                graph.readers[path] = facts


def _read_many(tree: RepoTree, paths: list[str]) -> Iterable[tuple[str, str]]:
    """(path, text) of the readable files among `paths`, in their order (one batch when the tree can)."""
    read_many = getattr(tree, "read_many", None)
    texts: dict[str, str | None] = (
        read_many(paths) if callable(read_many) else {p: tree.read(p) for p in paths}
    )
    for p in paths:
        text = texts.get(p)
        if text is not None:
            yield p, text


# --- config builders and the helpers they call ----------------------------------------------------

_CALL_NAME = re.compile(r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\s*\(")
_HELPER_LEVELS = 3  # helpers followed from a builder (a subclass's builder, its base's, their helpers)


def is_builder(name: str) -> bool:
    """A model config builder by the naming convention (`_create_config`, `build_config`, ...)."""
    return _BUILDER.search(name.replace("::", ".").rsplit(".", 1)[-1]) is not None


def builder_helpers(
    tree: RepoTree, index: RepoIndex
) -> dict[tuple[str, str], tuple[tuple[tuple[int, ...], str, str], ...]]:
    """For each config builder of the index, the helpers of its own file it calls, in the order they
    run, as (position, path, qualified helper). The position is the line of each call on the way,
    outermost first: `QWen._create_config` calls `QWenBase._common_config` at line 40, which calls
    `QWenBase._from_hf` at its line 12 -> ((40,), ..., `_common_config`), ((40, 12), ..., `_from_hf`).
    A write in a helper at line L then runs at (position..., L), so writes of the builder and of its
    helpers compare in execution order.

    A helper is a function of the same file named like the call (`QWenBase._common_config(config, x)`,
    `cls._from_hf(...)`, `_fill(config)`), another builder included (`Llama._create_config(path)` in
    `Cohere._create_config`); calls are read from the source lines of the function."""
    out: dict[tuple[str, str], tuple[tuple[tuple[int, ...], str, str], ...]] = {}
    wanted = sorted(
        (
            (path, fn)
            for path, facts in index.files.items()
            if not is_test_path(path)
            for fn in facts.functions
            if is_builder(fn.name)
        ),
        key=lambda x: (x[0], x[1].start_line, x[1].name),
    )
    texts = dict(_read_many(tree, sorted({path for path, _ in wanted})))
    for path, fn in wanted:
        text = texts.get(path)
        if text is None:
            continue
        found = _helper_calls(path, text.split("\n"), index.files[path].functions, fn)
        if found:
            out[(path, fn.name)] = tuple(found)
    return out


def _helper_calls(
    path: str, lines: list[str], functions: tuple[Function, ...], builder: Function
) -> list[tuple[tuple[int, ...], str, str]]:
    """The helpers `builder` runs, depth first in call order (see `builder_helpers`)."""
    found: list[tuple[tuple[int, ...], str, str]] = []

    def visit(caller: Function, at: tuple[int, ...], seen: frozenset[str]) -> None:
        if len(at) >= _HELPER_LEVELS:
            return
        for line, callee in _calls_in(lines, caller):
            for helper in _helpers(functions, caller, callee):
                if helper.name not in seen:
                    found.append(((*at, line), path, helper.name))
                    visit(helper, (*at, line), seen | {helper.name})

    visit(builder, (), frozenset({builder.name}))
    return found


def _calls_in(lines: list[str], fn: Function) -> list[tuple[int, str]]:
    """(line, callee as written) of the calls on the source lines of `fn` after its first line."""
    out: list[tuple[int, str]] = []
    for n in range(fn.start_line + 1, min(fn.end_line, len(lines)) + 1):
        code = lines[n - 1].split("#", 1)[0] if fn.lang is Lang.PYTHON else lines[n - 1].split("//", 1)[0]
        out.extend((n, m.group(1)) for m in _CALL_NAME.finditer(code))
    return out


def _helpers(functions: tuple[Function, ...], caller: Function, callee: str) -> list[Function]:
    """The function of the caller's file a call runs: `Cls.name(...)` a method of `Cls`; `self.name` /
    `cls.name` a method of that name (the caller's class first); a bare `name(...)` a free function."""
    parts = callee.replace("::", ".").split(".")
    name = parts[-1]
    qualifier = parts[-2] if len(parts) >= 2 else ""
    own = owner_of(caller.name) or ""
    candidates: list[tuple[int, int, str, Function]] = []
    for f in functions:
        owner = owner_of(f.name) or ""
        if f.name.replace("::", ".").rsplit(".", 1)[-1] != name or f.name == caller.name:
            continue
        if qualifier in ("self", "cls"):
            ok = bool(owner)
        elif qualifier:
            ok = owner == qualifier
        else:
            ok = not owner
        if ok:
            candidates.append((owner != own, f.start_line, f.name, f))
    return [min(candidates, key=lambda c: c[:3])[3]] if candidates else []
