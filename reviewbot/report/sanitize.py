"""Neutralise PR-controlled text before it goes into a report.

Code, evidence, file names and titles come from the pull request. In a GitHub comment they must not
close or forge the hidden state block (`-->`, `<!--`), ping people (`@user`, `@org/team`), link issues
(`#123`, `GH-1`), or break out of the code span or fence they are shown in.
"""

from __future__ import annotations

import re

__all__ = ["text", "code", "fence", "cell", "ZWJ"]

ZWJ = "\u2060"  # word joiner: invisible, but GitHub no longer sees a mention or a reference

_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# `#12`, and `owner/repo#12` too (a word character before `#`); `&#12;` is an HTML entity, not a ref.
_ISSUE_REF = re.compile(r"(?<!&)#(?=\d)")
_GH_REF = re.compile(r"\b(GH)-(?=\d)", re.IGNORECASE)
# A link to an issue or pull request adds a "mentioned this" event to it; breaking the scheme stops
# GitHub from turning the text into a link.
_GH_URL = re.compile(
    r"\b(https?)(?=://(?:www\.)?github\.com/[^/\s]+/[^/\s]+/(?:issues|pull|discussions)/\d)", re.I
)


def _comment_markers(s: str) -> str:
    return (
        s.replace("<!--", "<!" + ZWJ + "--")
        .replace("--!>", "--" + ZWJ + "!>")
        .replace("-->", "--" + ZWJ + ">")
    )


def text(value: object) -> str:
    """Free text (titles, evidence, suggestions): no mentions, no references, no comment markers."""
    s = _comment_markers(str(value))
    s = _MENTION.sub("@" + ZWJ, s)
    s = _ISSUE_REF.sub("#" + ZWJ, s)
    s = _GH_URL.sub(lambda m: m.group(1) + ZWJ, s)
    return _GH_REF.sub(lambda m: m.group(1) + "-" + ZWJ, s)


def code(value: object) -> str:
    """Text shown inside a single-backtick code span."""
    return text(value).replace("`", "\u02cb").replace("\n", " ")


def fence(value: object) -> str:
    """Text shown inside a ``` fence: it must not end the fence."""
    s = _comment_markers(str(value))
    return re.sub(r"^(\s*)(`{3,}|~{3,})", lambda m: m.group(1) + ZWJ + m.group(2), s, flags=re.MULTILINE)


def cell(value: object) -> str:
    """Text shown in a markdown table cell."""
    return text(value).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")
