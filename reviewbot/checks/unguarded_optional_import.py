"""unguarded-optional-import (P1): a probe for an optional package that raises when the package is missing.

## What it does
Flags, on the changed lines, `importlib.util.find_spec("pkg.sub")` (or `find_spec` imported from
`importlib.util`) of a dotted name outside a `try` that catches `ImportError`: for a submodule Python
imports the parent package first, so on an installation without `pkg` the probe raises
`ModuleNotFoundError` instead of returning `None`, and the code meant to fall back never runs
(`analysis.optional_imports`). A probe in a config's `__post_init__` or a server's start-up takes every
launch without the optional package down with it.

P3 in a script beside the package (`benchmarks/`, `examples/`, `tools/`, `scripts/`, CI folders).

Not flagged: an undotted name (`find_spec("pkg")` returns `None` when `pkg` is missing); a probe inside
`try: ... except ImportError` (or `ModuleNotFoundError`, `Exception`, a bare `except`) or `with contextlib.suppress(ImportError)`; a probe after a
check that can stop it (an earlier operand of the same `and`, `has_pkg() and find_spec("pkg.sub")`, or
an earlier `if ...: return` / `raise` in the function); a parent of the standard library, the
repository's own top-level package, or a package the same module imports unconditionally at its top
(installed wherever the module runs); test files.

## Why is this bad?
The probe exists because the package is optional. Users who do not install it (most of them) get a
`ModuleNotFoundError` from a check whose whole point was to tolerate its absence, often at start-up.

## Example
```python
if importlib.util.find_spec("mooncake.engine") is None:   # raises without mooncake
    self.support_transfer_engine = False
```

## Use instead
```python
if importlib.util.find_spec("mooncake") is None or importlib.util.find_spec("mooncake.engine") is None:
    self.support_transfer_engine = False
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.optional_imports import own_packages, raising_probes
from reviewbot.analysis.pyast import side_texts
from reviewbot.analysis.sides import sides
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import beside_package, clip
from reviewbot.lang.index import is_test_path
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "unguarded-optional-import"
severity = Severity.P1
summary = "A probe of an optional package (find_spec of a dotted name) raises ModuleNotFoundError when the package is missing."


def run(ctx: CheckContext) -> Iterable[Finding]:
    python = [s for s in sides(ctx.change, ctx.base_facts, ctx.head_facts) if s.path.endswith(".py")]
    if not python:
        return
    tree = ctx.change.head_tree
    own = own_packages(tree.paths()) if tree is not None else frozenset()
    for p in raising_probes(python, side_texts(ctx.change), own):
        if is_test_path(p.path):
            continue  # a test's environment installs what it probes, or the test fails visibly
        where = p.function or p.path
        yield Finding.make(
            rule=id,
            # a script beside the package (a benchmark, a CI helper) fails for its own user only
            severity=Severity.P3 if beside_package(p.path) else severity,
            path=p.path,
            line=p.line,
            anchor=f"{p.function}|{p.module}",
            title=msg("unguarded-optional-import.title", module=p.module, parent=p.parent, where=where),
            evidence=(msg("unguarded-optional-import.line", text=clip(p.text, 120)),),
            suggestion=msg("unguarded-optional-import.suggestion", module=p.module, parent=p.parent),
            extra=(("field", p.field or p.module), ("module", p.module), ("function", p.function)),
        )
