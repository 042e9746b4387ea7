"""One Python syntax tree per source text and round, for the rules that read Python with `ast`.

undefined-name, validation-rejects-default, explicit-value-overwritten and stale-doc-default each read
the changed files' Python with the standard `ast` module; parsing the same text once serves all of them.
The trees are shared: a reader must not change them (pyflakes' own bookkeeping attributes aside).
`side_texts` and `changed_python` give those rules the changed files' texts and parsed heads alike.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable, Iterator
from functools import lru_cache

from reviewbot.analysis.sides import Side
from reviewbot.model.change import ChangeSet

__all__ = ["Texts", "changed_python", "python_tree", "side_texts"]

# Head path -> (base text, head text) of the changed files.
Texts = dict[str, tuple[str | None, str | None]]


def side_texts(change: ChangeSet) -> Texts:
    """Head path -> (base text, head text) of every changed file."""
    return {f.path: (f.base_text, f.head_text) for f in change.files}


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


def changed_python(
    changed: Iterable[Side], texts: Texts
) -> Iterator[tuple[Side, str | None, str, ast.Module]]:
    """(side, base text, head text, head tree) of each changed Python file with added lines whose head
    parses: what every rule that reads the change's Python with `ast` starts from."""
    for s in changed:
        if not s.path.endswith(".py") or not s.added:
            continue
        base_text, head_text = texts.get(s.path, (None, None))
        head = python_tree(head_text)
        if head is not None and head_text is not None:
            yield s, base_text, head_text, head
