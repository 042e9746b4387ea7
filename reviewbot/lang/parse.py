"""Dispatch a file to its language front end."""

from __future__ import annotations

from collections.abc import Callable

from reviewbot.lang.facts import FileFacts, Lang, lang_for_path

__all__ = ["parse_file"]


def parse_file(path: str, text: str, focus: Callable[[str], bool] | None = None) -> FileFacts | None:
    """Facts of one source file, or None when the path is not C++ or Python.

    `focus` limits the walk to function bodies whose text it accepts (plus those reading an alias
    of a focused field); the repository index uses it for files the change did not touch.
    """
    lang = lang_for_path(path)
    if lang is Lang.CPP:
        from reviewbot.lang import cpp

        return cpp.parse(path, text, focus)
    if lang is Lang.PYTHON:
        from reviewbot.lang import python

        return python.parse(path, text, focus)
    return None
