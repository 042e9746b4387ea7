"""A finding as the rounds store keeps it: its JSON report entry, then what rebuilds it exactly.

Written by `store.records.FindingRecord.from_finding` (the `round_findings.data` column); read back
by the store (`FindingRecord.to_finding`), the history page (report.history_page) and `reviewbot
rounds`. A row written by an older reviewbot may lack keys: readers use `.get` with a default.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from reviewbot.model.finding import FindingJson

__all__ = ["Exact", "Sentences", "StoredFinding"]


class Sentences(TypedDict):
    title: str
    evidence: list[str]
    suggestion: str


class Exact(TypedDict):
    """What a stored finding keeps beyond its JSON report entry, to rebuild the Finding exactly."""

    anchor: str
    suggestion_lang: str
    replacement: str | None
    related: list[list[str | int]]  # [path, line, text] of each related location
    # Its sentences in the other languages, for pages that show stored rounds in any language
    # (store.history_page); the catalogue messages themselves are not stored.
    localized: NotRequired[dict[str, Sentences]]


class StoredFinding(FindingJson, Exact):
    """A finding as the store keeps it: its JSON report entry, then what rebuilds it exactly."""
