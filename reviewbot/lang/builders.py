"""Model config builders and the helpers of their file they call (for how far a rule reaches).

A builder is a function named by the convention (`_create_config`, `build_config`, ...). What it leaves
in the config is its own writes and those of the helpers it calls — `QWenBase._common_config(config,
path)`, another builder (`Llama._create_config(path)` in `Cohere._create_config`) — so the follow
stage lists, per builder, the helpers of the same file it runs, in the order they run. Calls are read
from the builder's source lines (no parse needed: the index already has the functions and writes).
"""

from __future__ import annotations

import re

from reviewbot.lang.calls import owner_of
from reviewbot.lang.facts import Function, Lang
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.mentions import read_texts
from reviewbot.model.change import RepoTree

__all__ = ["is_builder", "builder_helpers"]

_BUILDER = re.compile(r"(create|build|make)_?config", re.IGNORECASE)
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
    texts = dict(read_texts(tree, sorted({path for path, _ in wanted})))
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
