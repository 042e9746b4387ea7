"""The model config builders of a repository and every write each makes, its helpers' included.

A builder is a function named by the convention (`_create_config`, `build_config`; see
`lang.builders.is_builder`). Its writes are its own and those of the helpers of its file it calls
(`QWenBase._common_config(config, ...)`, `Llama._create_config(path)` from a subclass), which the follow
stage found (`CallGraph.helpers`); each write is placed where it runs, so the last write of a field is
the value the builder leaves. Builders of base classes named as such (`BaseModel`, `QWenBase`) are the
generic path models go through, not model configs of their own, and are left out. Pure.
"""

from __future__ import annotations

from reviewbot.analysis.coupled.feasible import name_words
from reviewbot.lang.builders import is_builder
from reviewbot.lang.facts import Assignment, Function
from reviewbot.lang.follow import followed
from reviewbot.lang.index import RepoIndex, is_test_path

__all__ = ["config_builders"]


def config_builders(index: RepoIndex) -> list[tuple[Function, list[Assignment]]]:
    """Each config builder with the writes it makes, in the order they happen: its own, and those of
    the helpers of its file it calls (`QWenBase._common_config(config, ...)`), placed at the call."""
    graph = followed(index)
    helpers = graph.helpers if graph is not None else {}
    found: list[tuple[Function, list[Assignment]]] = []
    for path, facts in sorted(index.files.items()):
        if is_test_path(path):
            continue
        by_function: dict[str, list[Assignment]] = {}
        for a in facts.assignments:
            if a.function:
                by_function.setdefault(a.function, []).append(a)
        for fn in facts.functions:
            if not is_builder(fn.name):
                continue
            # Each write at its place in the run: (call lines on the way..., its own line).
            placed: list[tuple[tuple[int, ...], Assignment]] = [
                ((a.line,), a) for a in by_function.get(fn.name, ())
            ]
            for at, _, helper in helpers.get((path, fn.name), ()):
                placed.extend(((*at, a.line), a) for a in by_function.get(helper, ()))
            found.append((fn, [a for _, a in sorted(placed, key=lambda x: (x[0], x[1].target, x[1].value))]))
    templates = _templates([fn for fn, _ in found])
    return [(fn, writes) for fn, writes in found if fn.name not in templates]


_TEMPLATE_WORDS = frozenset({"base", "abstract", "mixin", "generic"})


def _templates(builders: list[Function]) -> set[str]:
    """Builders of a base class by its name (`BaseModel.create_config`, `QWenBase._create_config`):
    the generic path models go through, not a model config of its own."""
    out: set[str] = set()
    for fn in builders:
        parts = fn.name.replace("::", ".").split(".")
        if len(parts) >= 2 and _TEMPLATE_WORDS & set(name_words(parts[-2])):
            out.add(fn.name)
    return out
