"""A source module's self-test: the `test*` functions only its `if __name__ == "__main__":` block calls
(pure). Neither serving nor the test suite runs them: a bug there is a note, not a blocker."""

from __future__ import annotations

import ast
from collections.abc import Iterable

__all__ = ["self_test"]


def self_test(tree: ast.AST, lines: Iterable[int]) -> bool:
    """Every use sits in a module-level function named `test*` / `_test*` that the module calls only
    from its `if __name__ == "__main__":` block: a source module's self-test, which neither serving nor
    the test suite runs (dev-scan sample 13: sglang's `test_build_tree_kernel_efficient`)."""
    if not isinstance(tree, ast.Module):
        return False
    tests = [
        f
        for f in tree.body
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name.lstrip("_").startswith("test")
    ]
    holders: set[str] = set()
    for line in lines:
        f = next((f for f in tests if f.lineno <= line <= (f.end_lineno or f.lineno)), None)
        if f is None:
            return False
        holders.add(f.name)
    return bool(holders) and _called_only_from_main(tree, holders)


def _called_only_from_main(tree: ast.Module, names: set[str]) -> bool:
    """Each of `names` is named in the module's `__main__` block and nowhere else but its own def."""
    main = [st for st in tree.body if isinstance(st, ast.If) and _is_main_test(st.test)]
    rest = [
        st
        for st in tree.body
        if st not in main
        and not (isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef) and st.name in names)
    ]

    def named(statements: Iterable[ast.stmt]) -> set[str]:
        return {n.id for st in statements for n in ast.walk(st) if isinstance(n, ast.Name) and n.id in names}

    return names <= named(main) and not named(rest)


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides
    )
