"""Neutralise PR-controlled text before it goes into a report.

Code, evidence, file names and titles come from the pull request. In a GitHub comment they must not
close or forge the hidden state block (`-->`, `<!--`), ping people (`@user`, `@org/team`), link issues
(`#123`, `GH-1`), inject markdown or HTML (a `</details>`, a link, emphasis), or break out of the code
span or fence they are shown in.

`inline` is what every template expression goes through unless it is marked safe: rule texts are
markdown of reviewbot's own making with constructs in backticks, so it keeps those code spans (each
re-fenced with a backtick run longer than any inside it) and escapes everything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewbot.model.untrusted import escape_controls

__all__ = [
    "text",
    "code",
    "code_span",
    "one_line",
    "fence",
    "fence_block",
    "cell",
    "inline",
    "plain",
    "Segment",
    "segments",
    "shorten",
    "ZWJ",
    "ELLIPSIS",
]

ZWJ = "\u2060"  # word joiner: invisible, but GitHub no longer sees a mention or a reference
ELLIPSIS = "…"

_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# `#12`, and `owner/repo#12` too (a word character before `#`); `&#12;` is an HTML entity, not a ref.
_ISSUE_REF = re.compile(r"(?<!&)#(?=\d)")
_GH_REF = re.compile(r"\b(GH)-(?=\d)", re.IGNORECASE)
# A link to an issue or pull request adds a "mentioned this" event to it; breaking the scheme stops
# GitHub from turning the text into a link. Any host, not only github.com: a GitHub Enterprise Server
# links its own host's URLs, and reviewbot's report does not know which host that is.
_GH_URL = re.compile(r"\b(https?)(?=://[^/\s]+/[^/\s]+/[^/\s]+/(?:issues|pull|discussions)/\d)", re.I)
_BACKTICKS = re.compile(r"`+")
# Markdown and HTML specials in running text. `_` only where it could open or close emphasis: inside
# a word (`use_kvcache`, `rtp_llm/x`) GitHub never reads it as emphasis, and escaping it there would
# make every identifier unreadable in the raw text.
#
# `<` (an HTML tag, an autolink) and `&` before an entity are escaped as HTML; `]` only where it would
# close a link (`](`, `][`); `>` is harmless inside a line (the comment closer `-->` is broken apart
# by `text`). Brackets and arrows elsewhere stay readable: `[6.1] Tests`, `a -> b`.
_SPECIAL = re.compile(r"[\\`*~]|<|&(?=#?[A-Za-z0-9]+;)|\](?=[(\[])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_HTML = {"<": "&lt;", "&": "&amp;"}
_FENCE_LANG = re.compile(r"[^A-Za-z0-9_+.#-]")


def _comment_markers(s: str) -> str:
    return (
        s.replace("<!--", "<!" + ZWJ + "--")
        .replace("--!>", "--" + ZWJ + "!>")
        .replace("-->", "--" + ZWJ + ">")
    )


def text(value: object) -> str:
    """Free text, no markdown escaping: no mentions, no references, no comment markers."""
    s = _comment_markers(str(value))
    s = _MENTION.sub("@" + ZWJ, s)
    s = _ISSUE_REF.sub("#" + ZWJ, s)
    s = _GH_URL.sub(lambda m: m.group(1) + ZWJ, s)
    return _GH_REF.sub(lambda m: m.group(1) + "-" + ZWJ, s)


def one_line(value: object) -> str:
    """`value` on one line: newlines and other control or direction characters shown as escapes
    (`\\n`, `\\x1b`, `\\u202e`), so a name holding one cannot start a new list item or hide text."""
    return escape_controls(str(value))


def code(value: object) -> str:
    """Text shown inside a single-backtick code span written by the caller (prefer `code_span`)."""
    return text(one_line(value)).replace("`", "\u02cb")


def code_span(value: object) -> str:
    """`value` as a whole code span: fenced by a backtick run longer than any inside it, on one line."""
    s = text(one_line(value))
    run = "`" * (max((len(m) for m in _BACKTICKS.findall(s)), default=0) + 1)
    # CommonMark strips one space on each side when both are there: pad so content that starts or
    # ends with a backtick (or a space) survives exactly.
    # Content of spaces only is never stripped, so it stays as it is.
    if s[:1] == "`" or s[-1:] == "`" or (s[:1] == s[-1:] == " " and s.strip()):
        s = f" {s} "
    return f"{run}{s}{run}"


def fence(value: object) -> str:
    """Text shown inside a ``` fence: it must not end the fence (prefer `fence_block`)."""
    s = _comment_markers(str(value))
    return re.sub(r"^(\s*)(`{3,}|~{3,})", lambda m: m.group(1) + ZWJ + m.group(2), s, flags=re.MULTILINE)


def fence_block(value: object, lang: object = "") -> str:
    """`value` as a fenced code block whose fence is longer than any backtick run inside it.

    Mentions stay as they are (a fenced block never pings, and `@pytest.mark` must stay pasteable);
    comment markers are broken so nothing inside can open or close a hidden block.
    """
    body = _comment_markers(escape_controls(str(value), keep="\n\t")).rstrip("\n")
    run = "`" * max(3, max((len(m) for m in _BACKTICKS.findall(body)), default=0) + 1)
    info = _FENCE_LANG.sub("", str(lang))
    return f"{run}{info}\n{body}\n{run}"


@dataclass(frozen=True)
class Segment:
    """A piece of inline markdown: running text, or the content of a code span."""

    text: str
    code: bool = False


def segments(value: object) -> list[Segment]:
    """`value` split the way CommonMark reads code spans: a backtick run opens a span that the next
    run of the same length closes; a run without its match is literal text. Newlines and other
    control characters show as escapes (`one_line`)."""
    s = one_line(value)
    out: list[Segment] = []
    plain_start = 0
    pos = 0
    while True:
        m = _BACKTICKS.search(s, pos)
        if m is None:
            break
        close = _closing_run(s, m.end(), len(m.group()))
        if close is None:
            pos = m.end()  # literal backticks: part of the running text
            continue
        if m.start() > plain_start:
            out.append(Segment(s[plain_start : m.start()]))
        content = s[m.end() : close]
        if len(content) >= 2 and content[0] == content[-1] == " " and content.strip():
            content = content[1:-1]
        out.append(Segment(content, code=True))
        plain_start = pos = close + len(m.group())
    if plain_start < len(s):
        out.append(Segment(s[plain_start:]))
    return out


def _closing_run(s: str, start: int, length: int) -> int | None:
    for m in _BACKTICKS.finditer(s, start):
        if len(m.group()) == length:
            return m.start()
    return None


def _escape(s: str) -> str:
    return _SPECIAL.sub(lambda m: _HTML.get(m.group(), "\\" + m.group()), text(s))


def shorten(parts: list[Segment], limit: int) -> list[Segment]:
    """At most `limit` characters of the source text (a code span counts its two backticks), cut
    with an ellipsis; a cut inside a code span keeps the span closed, a cut in text ends at a word."""
    if sum(len(p.text) + (2 if p.code else 0) for p in parts) <= limit:
        return parts
    room = limit - len(ELLIPSIS)
    out: list[Segment] = []
    for p in parts:
        cost = len(p.text) + (2 if p.code else 0)
        if cost <= room:
            out.append(p)
            room -= cost
            continue
        keep = room - (2 if p.code else 0)
        if p.code and keep >= 4:
            out.append(Segment(p.text[:keep].rstrip() + ELLIPSIS, code=True))
            return out
        cut = p.text[: max(keep, 0)] if not p.code else ""
        if " " in cut[len(cut) // 2 :]:
            cut = cut[: cut.rindex(" ")]
        if cut.strip():
            out.append(Segment(cut.rstrip()))
        break
    return out + [Segment(ELLIPSIS)]


def inline(value: object, limit: int | None = None) -> str:
    """Inline markdown of reviewbot's rule texts: code spans kept (re-fenced), all else escaped.

    `limit` cuts the source text to that many characters with an ellipsis (see `shorten`).
    """
    if limit is None:
        parts = segments(value)
    else:
        # Only the start can be shown: parse a bounded prefix (a span closing past it is cut anyway).
        parts = shorten(segments(str(value)[: 4 * limit + 64]), limit)
    return "".join(code_span(p.text) if p.code else _escape(p.text) for p in parts)


def plain(value: object) -> str:
    """Text with no markdown of its own (labels, names): every special character escaped."""
    return _escape(one_line(value))


def cell(value: object) -> str:
    """Text shown in a markdown table cell (pipes escaped, inside code spans too)."""
    return inline(value).replace("|", "\\|")
