"""The records of a PR's rounds: where a finding stands (`FindingState`) and one round's history row.

A `RoundRow` is written once per round (review.rounds), kept in the bot's comment (report.marker),
read back from the rounds store (`Store.history`, one per recorded round), and shown as a line of the
report's round-history table and of `reviewbot rounds`. Its JSON (`to_json`, the only serializer) is
the same in the report, the marker and `reviewbot rounds` (which adds `created_at`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import NotRequired, TypedDict

__all__ = ["FindingState", "OPEN_STATES", "RoundRow", "RoundRowJson"]


class FindingState(StrEnum):
    """Where a finding stands after a round (review.rounds sets it; a str, so JSON is the value)."""

    NEW = "new"  # not reported by the previous round
    STILL_OPEN = "still_open"  # reported by the previous round too (or carried over unverified)
    FIXED = "fixed"  # an earlier finding whose anchor is gone or whose rule no longer fires
    CANNOT_SUBSTANTIATE = "cannot_substantiate"  # an earlier finding whose file is gone, no successor


OPEN_STATES = frozenset({FindingState.NEW, FindingState.STILL_OPEN})


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class RoundRowJson(TypedDict):
    """A `RoundRow` as JSON: the report's and the marker's `history`, a line of `reviewbot rounds
    --format json` (the only writer of `created_at`)."""

    round: int
    head_sha: str
    status: str
    summary: dict[str, int]
    new: int
    fixed: int
    still_open: int
    cannot_substantiate: int
    full_review: bool
    force_pushed: bool
    reviewed_at: str
    created_at: NotRequired[str]  # ISO 8601: when the store first recorded the round


@dataclass(frozen=True)
class RoundRow:
    """One round of a PR as its history shows it: counts of its findings by state after the round.

    Made by review.rounds (the round just reviewed), report.marker (decoded from the bot's comment)
    and the rounds store (`Store.history`); read by the report's history table, the marker, the next
    round (`PreviousRound.history`) and `reviewbot rounds`."""

    round: int
    head_sha: str
    status: str  # model.review.Status's value
    summary: Mapping[str, int] = field(default_factory=dict)  # open findings per severity
    new: int = 0
    fixed: int = 0
    still_open: int = 0
    cannot_substantiate: int = 0
    full_review: bool = True
    force_pushed: bool = False
    reviewed_at: str = ""
    # Set when read from the store; not part of the row's JSON (the report and the marker stay the
    # same whichever source a row came from), nor of its equality.
    created_at: datetime | None = field(default=None, compare=False)

    def to_json(self) -> RoundRowJson:
        return {
            "round": self.round,
            "head_sha": self.head_sha,
            "status": self.status,
            "summary": dict(self.summary),
            "new": self.new,
            "fixed": self.fixed,
            "still_open": self.still_open,
            "cannot_substantiate": self.cannot_substantiate,
            "full_review": self.full_review,
            "force_pushed": self.force_pushed,
            "reviewed_at": self.reviewed_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RoundRow:
        """A row as `to_json` wrote it; what is missing or of the wrong type (a marker is PR text
        anyone can edit) takes the default."""
        summary = data.get("summary")
        return cls(
            round=_int(data.get("round")),
            head_sha=str(data.get("head_sha") or ""),
            status=str(data.get("status") or ""),
            summary={str(k): _int(v) for k, v in summary.items()} if isinstance(summary, dict) else {},
            new=_int(data.get("new")),
            fixed=_int(data.get("fixed")),
            still_open=_int(data.get("still_open")),
            cannot_substantiate=_int(data.get("cannot_substantiate")),
            full_review=bool(data.get("full_review", True)),
            force_pushed=bool(data.get("force_pushed", False)),
            reviewed_at=str(data.get("reviewed_at") or ""),
        )
