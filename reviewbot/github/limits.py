"""GitHub's size limits on what a round publishes, and how a body is cut to one.

A cut body keeps reviewbot's hidden state marker (the next round reads it) and says, in a note,
how much was left out; a code fence or `<details>` the cut leaves open is closed first.
"""

from __future__ import annotations

import re

__all__ = ["COMMENT_LIMIT", "CHECK_TEXT_LIMIT", "STATE_LINE", "fit_body"]

COMMENT_LIMIT = 65536  # GitHub refuses longer comment bodies (422)
CHECK_TEXT_LIMIT = 65535  # check run output summary / text
STATE_LINE = re.compile(r"^<!-- reviewbot:state v\d+ ", re.MULTILINE)


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _closers(cut: str) -> str:
    """What closes the code fence and the `<details>` a cut leaves open, so the note after it and
    the state marker are neither code nor folded away. reviewbot's own `<details>` lines are the only
    ones that count: PR text in a report is escaped, and inside a fence nothing counts."""
    fence = ""
    details = 0
    for line in cut.splitlines():
        m = _FENCE.match(line)
        if fence:
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= len(fence)
                and not line[m.end() :].strip()
            ):
                fence = ""
            continue
        if m:
            fence = m.group(1)
        elif line.startswith("<details>"):
            details += 1
        elif line.startswith("</details>") and details:
            details -= 1
    return (f"{fence}\n" if fence else "") + "</details>\n" * details


def fit_body(body: str, limit: int, note: str) -> tuple[str, bool]:
    """`body` cut to `limit` characters with `note` where text was left out; the state marker is kept."""
    if len(body) <= limit:
        return body, False
    markers = list(STATE_LINE.finditer(body))
    report, marker = (body[: markers[-1].start()], body[markers[-1].start() :]) if markers else (body, "")
    room = limit - len(marker) - len(note.format(n=len(body))) - 16
    if room < limit // 4:
        marker, room = "", limit - len(note.format(n=len(body))) - 16  # a huge state must not eat the report
    cut = report[:room]
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    cut += _closers(cut)
    left_out = len(report) - len(cut)
    text = f"{cut.rstrip()}\n\n{note.format(n=left_out)}\n"
    if marker:
        text += "\n" + marker
    return text[:limit], True
