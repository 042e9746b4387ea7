"""Where the function harness reads a target nested in the construction a function returns.

`transformers_modeling_backend_sft_full()` returns `TransformersBackendConfig(optimizer=
OptimizersContainer.Config(lr=2e-5), ...)`: the table's target `OptimizersContainer.Config.lr` is the
keyword of a construction nested in the one returned, read after the call as `returned.optimizer.lr`.
"""

from __future__ import annotations

import ast

__all__ = ["nested_keywords"]


def _keyword_path(value: ast.expr, owner: str) -> tuple[str, ...] | None:
    """The keywords leading from the construction `value` to the one construction of `owner` in it
    (`Trainer(optimizer=Optimizer.Config(lr=...))`, owner `Optimizer.Config` -> ("optimizer",)); None
    when there is none or more than one."""
    if not isinstance(value, ast.Call):
        return None
    found: list[tuple[str, ...]] = []
    for k in value.keywords:
        if k.arg is None:
            continue
        if isinstance(k.value, ast.Call) and ast.unparse(k.value.func) == owner:
            found.append((k.arg,))
        deeper = _keyword_path(k.value, owner)
        if deeper is not None:
            found.append((k.arg, *deeper))
    return found[0] if len(found) == 1 else None


def nested_keywords(returns: list[ast.expr | None], parts: list[str]) -> tuple[str, ...] | None:
    """The keyword path every `return` gives to the construction of the target's owner, nested in the
    construction it returns (the same path in each), or None."""
    owner = ".".join(parts[:-1])
    paths = {_keyword_path(r, owner) if r is not None else None for r in returns}
    path = paths.pop() if len(paths) == 1 else None
    return path
