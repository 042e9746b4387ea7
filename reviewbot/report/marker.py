"""The hidden state block at the end of a report: `<!-- reviewbot:state v1 PAYLOAD.CHECKSUM -->`.

It carries what the next round needs (round, head and base sha; every finding's fingerprint, state,
rule, severity, path, line, anchor and title; the history rows), so a stateless worker can continue
from the comment alone. The store keeps the full record.

PAYLOAD is base64url (no padding) of zlib-compressed JSON; CHECKSUM is the first 16 hex digits of
its SHA-256. The alphabet has no `<`, `>` or space, so nothing inside can end the comment early;
the marker is at most `MARKER_LIMIT` characters (see `encode_state`: what gives way when a PR has
thousands of findings), so a report always has room for it under GitHub's comment limit;
PR-controlled text never goes inside it. `decode_state` takes the LAST marker that starts a line
and validates: PR text elsewhere in the body is sanitised (report.sanitize turns `<!--` into
`<!⁠--`), and even a forged block that survived would have to come after the real one, at the end
of the body. The checksum catches truncation and editing; it is not a signature — that a comment
is ours is decided by its author (GitHub stage).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import Review
from reviewbot.model.round import OPEN_STATES, FindingState, RoundRow
from reviewbot.review.rounds import PreviousRound

__all__ = ["MarkedFinding", "State", "encode_state", "decode_state", "VERSION", "MARKER_LIMIT"]

VERSION = 1
_STATES = frozenset(FindingState)
_MARKER = re.compile(
    r"^<!-- reviewbot:state v(?P<v>\d+) (?P<payload>[A-Za-z0-9_-]+)\.(?P<sum>[0-9a-f]{16}) -->[ \t]*\r?$",
    re.MULTILINE,
)
_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_MAX_JSON = 1 << 20  # refuse to inflate more than this: the payload comes from a comment body
# Findings keep their anchor (for the recheck) and title (for the report); long ones are cut.
_MAX_ANCHOR = 400
_MAX_TITLE = 200
# Half of GitHub's 65,536-character comment limit: the report keeps the other half. About 2,000 open
# findings with their anchors fit; beyond that the least severe lose theirs (the store keeps all).
MARKER_LIMIT = 32_768
_SHORT_TITLE = 80
_SHORT_ANCHOR = 120
_HISTORY_KEPT = 20


@dataclass(frozen=True)
class MarkedFinding:
    fingerprint: str
    state: str
    rule: str
    severity: str
    path: str
    line: int
    anchor: str = ""  # cut to _MAX_ANCHOR characters
    title: str = ""  # cut to _MAX_TITLE characters

    def to_finding(self) -> Finding:
        return Finding(
            rule=self.rule,
            severity=Severity(self.severity),
            path=self.path,
            line=self.line,
            title=self.title,
            anchor=self.anchor,
            fingerprint_override=self.fingerprint,
            state=FindingState(self.state),
        )


@dataclass(frozen=True)
class State:
    """The compact state of one round, as carried by the marker."""

    round_index: int
    head_sha: str
    base_sha: str
    findings: tuple[MarkedFinding, ...]
    history: tuple[RoundRow, ...] = ()
    repository: str = ""
    pr: int | None = None

    @classmethod
    def from_review(cls, review: Review) -> State:
        """The state of a review whose `round` was filled by review.rounds."""
        # Closed findings keep anchor and title too: a re-run of this head rebuilds the round
        # before it from this state, and its report lists what was fixed by title.
        marked = [
            MarkedFinding(
                f.fingerprint,
                f.state,
                f.rule,
                f.severity.value,
                f.path,
                f.line,
                f.anchor[:_MAX_ANCHOR],
                f.title[:_MAX_TITLE],
            )
            for f in [*review.findings, *review.round.fixed, *review.round.cannot_substantiate]
        ]
        return cls(
            round_index=review.round.round_index,
            head_sha=review.head_sha,
            base_sha=review.base_sha,
            findings=tuple(marked),
            history=tuple(review.round.history),
            repository=review.round.repository,
            pr=review.round.pr,
        )

    def previous_round(self) -> PreviousRound:
        """This state as the `previous` argument of review.rounds.apply_round."""
        return PreviousRound(
            round_index=self.round_index,
            head_sha=self.head_sha,
            open_findings=tuple(f.to_finding() for f in self.findings if f.state in OPEN_STATES),
            history=self.history,
        )


def encode_state(state: State, limit: int = MARKER_LIMIT) -> str:
    """The marker line for `state` (no trailing newline), at most `limit` characters.

    A state too big for `limit` gives way in this order: titles shortened, then dropped (the report
    shows titles; the next round needs fingerprints and anchors); anchors shortened; history cut to
    the last rounds; closed findings dropped; then the least severe open findings (the last first),
    which the next round would report as new again rather than lose the whole state.
    """
    marker = _encode(state)
    for smaller in _smaller(state):
        if len(marker) <= limit:
            break
        marker = _encode(smaller)
    if len(marker) <= limit:
        return marker
    *_, smallest = _smaller(state)
    return _encode_open_prefix(smallest, limit)


def _retitled(state: State, title: int | None, anchor: int | None = None) -> State:
    return replace(
        state,
        findings=tuple(
            replace(
                f,
                title=f.title[:title] if title is not None else "",
                anchor=f.anchor[:anchor] if anchor is not None else f.anchor,
            )
            for f in state.findings
        ),
    )


def _smaller(state: State) -> Iterator[State]:
    """Ever smaller versions of `state`, each a shrink of the one before (made only when needed)."""
    yield _retitled(state, _SHORT_TITLE)
    yield _retitled(state, None)
    cut = _retitled(state, None, _SHORT_ANCHOR)
    yield cut
    recent = replace(cut, history=cut.history[-_HISTORY_KEPT:])
    yield recent
    yield replace(recent, findings=tuple(f for f in recent.findings if f.state in OPEN_STATES))


def _encode_open_prefix(state: State, limit: int) -> str:
    """The most severe open findings that fit (a binary search on how many, in severity order)."""
    ranked = tuple(sorted(state.findings, key=lambda f: f.severity))  # stable: report order within
    lo, hi = 0, len(ranked)
    best = _encode(replace(state, findings=()))
    while lo <= hi:
        mid = (lo + hi) // 2
        marker = _encode(replace(state, findings=ranked[:mid]))
        if len(marker) <= limit:
            best, lo = marker, mid + 1
        else:
            hi = mid - 1
    return best


def _encode(state: State) -> str:
    doc = {
        "round": state.round_index,
        "head": state.head_sha,
        "base": state.base_sha,
        "repo": state.repository,
        "pr": state.pr,
        "findings": [
            [f.fingerprint, f.state, f.rule, f.severity, f.path, f.line, f.anchor, f.title]
            for f in state.findings
        ],
        "history": [r.to_json() for r in state.history],
    }
    raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    payload = base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")
    return f"<!-- reviewbot:state v{VERSION} {payload}.{_checksum(payload)} -->"


def decode_state(body: str) -> State | None:
    """The state of the last valid v1 marker that starts a line of `body`, or None."""
    for m in reversed(list(_MARKER.finditer(body))):
        if int(m["v"]) != VERSION or _checksum(m["payload"]) != m["sum"]:
            continue
        state = _parse(m["payload"])
        if state is not None:
            return state
    return None


def _checksum(payload: str) -> str:
    return hashlib.sha256(payload.encode("ascii")).hexdigest()[:16]


def _parse(payload: str) -> State | None:
    try:
        packed = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, _MAX_JSON)
        if inflater.unconsumed_tail or not inflater.eof:
            return None
        doc = json.loads(raw.decode("utf-8"))
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        return None
    return _validated(doc)


def _validated(doc: Any) -> State | None:
    """A State when `doc` has exactly the expected shape and types; anything else is None."""
    if not isinstance(doc, dict):
        return None
    values: list[Any] = [doc.get(k) for k in ("round", "head", "base", "repo", "pr")]
    rnd, head, base, repo, pr = values
    findings, history = doc.get("findings"), doc.get("history")
    if not (_is_int(rnd) and rnd >= 1 and _is_sha(head) and _is_sha(base) and isinstance(repo, str)):
        return None
    if not (pr is None or _is_int(pr)) or not isinstance(findings, list) or not isinstance(history, list):
        return None
    marked: list[MarkedFinding] = []
    for item in findings:
        if not (isinstance(item, list) and len(item) == 8):
            return None
        fp, state, rule, sev, path, line, anchor, title = item
        if not (
            all(isinstance(v, str) for v in (fp, state, rule, sev, path, anchor, title)) and _is_int(line)
        ):
            return None
        if state not in _STATES or sev not in Severity.__members__ or not fp:
            return None
        marked.append(MarkedFinding(fp, state, rule, sev, path, line, anchor, title))
    if not all(isinstance(r, dict) and _is_int(r.get("round")) for r in history):
        return None
    rows = tuple(RoundRow.from_json(r) for r in history)
    return State(int(rnd), str(head), str(base), tuple(marked), rows, str(repo), pr)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_sha(v: Any) -> bool:
    return isinstance(v, str) and bool(_SHA.match(v))
