"""Thin helpers over the tree-sitter API shared by both front ends."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tree_sitter import Language, Node, Parser

__all__ = ["LazyParser", "count_errors", "error_spans", "named", "text", "first_line", "last_line"]


class LazyParser:
    """One tree-sitter Parser per process (and thread), created on first use."""

    def __init__(self, language: Callable[[], object]) -> None:
        self._language_fn = language
        self._language: Language | None = None
        self._local = threading.local()

    def get(self) -> Parser:
        parser: Parser | None = getattr(self._local, "parser", None)
        if parser is None:
            if self._language is None:
                self._language = Language(self._language_fn())
            parser = Parser(self._language)
            self._local.parser = parser
        return parser


def count_errors(root: Node) -> int:
    """ERROR and MISSING nodes, visiting only subtrees that contain one."""
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return count


def error_spans(root: Node) -> tuple[tuple[int, int], ...]:
    """The 1-based line ranges of ERROR and MISSING nodes, merged, in order.

    tree-sitter recovers around an error: everything outside these ranges parsed, so only a change
    inside one of them is a change the analysis could not see.
    """
    if not root.has_error:
        return ()
    spans: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            spans.append((first_line(node), max(first_line(node), last_line(node))))
            continue  # the whole ERROR node is unparsed: what lies below it adds nothing
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def named(node: Node | None) -> list[Node]:
    """Named children without comments."""
    return [] if node is None else [c for c in node.named_children if c.type != "comment"]


def text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def first_line(node: Node) -> int:
    return node.start_point[0] + 1


def last_line(node: Node) -> int:
    end_row, end_col = node.end_point
    # A node that ends at column 0 ends on the previous line (its trailing newline).
    return end_row if end_col == 0 and end_row > node.start_point[0] else end_row + 1
