"""Dispatch a file to its language front end."""

from __future__ import annotations

from reviewbot.lang.facts import FileFacts, Lang, lang_for_path

__all__ = ["parse_file"]


def parse_file(path: str, text: str) -> FileFacts | None:
    """Facts of one source file, or None when the path is not C++ or Python."""
    lang = lang_for_path(path)
    if lang is Lang.CPP:
        from reviewbot.lang import cpp

        return cpp.parse(path, text)
    if lang is Lang.PYTHON:
        from reviewbot.lang import python

        return python.parse(path, text)
    return None
