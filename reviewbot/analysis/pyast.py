"""One Python syntax tree per source text and round, for the rules that read Python with `ast`.

undefined-name, validation-rejects-default, explicit-value-overwritten and stale-doc-default each read
the changed files' Python with the standard `ast` module; parsing the same text once serves all of them.
The trees are shared: a reader must not change them (pyflakes' own bookkeeping attributes aside).
"""

from __future__ import annotations

import ast
import warnings
from functools import lru_cache

__all__ = ["python_tree"]


@lru_cache(maxsize=64)
def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like in the code read
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def python_tree(text: str | None) -> ast.Module | None:
    """The module's syntax tree, or None when there is no text or it is not valid Python."""
    return None if text is None else _parse(text)
