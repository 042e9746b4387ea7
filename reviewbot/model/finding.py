"""Findings: immutable records with a line-independent fingerprint."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, TypedDict

from reviewbot.model.messages import Message
from reviewbot.model.round import FindingState

__all__ = [
    "Severity",
    "Location",
    "Dismissal",
    "DismissalJson",
    "Finding",
    "FindingJson",
    "fingerprint",
    "normalise_anchor",
]


class Severity(str, Enum):
    P0 = "P0"
    P1 = "P1"
    P2 = "P2"
    P3 = "P3"

    @property
    def blocking(self) -> bool:
        return self in (Severity.P0, Severity.P1)

    @property
    def rank(self) -> int:
        return int(self.value[1])


@dataclass(frozen=True, order=True)
class Location:
    path: str
    line: int
    text: str = ""  # the source line, stripped; shown as evidence

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class DismissalJson(TypedDict):
    reason: str
    by: str
    at: str


@dataclass(frozen=True)
class Dismissal:
    """A maintainer's decision that a finding does not apply: it stays shown, but no longer blocks.

    Kept with the finding in every round while its fingerprint holds (`reviewbot dismiss`, or a
    `/reviewbot dismiss` comment by a user with write permission)."""

    reason: str
    by: str  # a GitHub login, or the local user for `reviewbot dismiss`
    at: str  # ISO 8601, UTC

    def to_json(self) -> DismissalJson:
        return {"reason": self.reason, "by": self.by, "at": self.at}

    @classmethod
    def from_json(cls, data: object) -> Dismissal | None:
        if not isinstance(data, dict) or not data.get("reason"):
            return None
        return cls(str(data["reason"]), str(data.get("by") or ""), str(data.get("at") or ""))


def normalise_anchor(text: str) -> str:
    """Anchor text without whitespace or comments, so reformatting does not change a fingerprint."""
    text = re.sub(r"//.*$|#.*$", "", text)
    return "".join(text.split())


def fingerprint(rule: str, path: str, anchor: str) -> str:
    raw = f"{rule}\x00{path}\x00{normalise_anchor(anchor)}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


class FindingJson(TypedDict):
    """A finding as the JSON report, the stored rounds and the KPI's suppressed findings show it."""

    fingerprint: str
    rule: str
    severity: str  # Severity's value
    blocking: bool
    path: str
    line: int
    title: str
    evidence: list[str]
    suggestion: str
    suggestion_code: str
    checklist: list[str]
    state: FindingState
    fixed_in: str | None
    extra: dict[str, str]
    dismissal: DismissalJson | None


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    path: str
    line: int
    title: str  # one sentence, constructs in backticks
    anchor: str  # the text the finding is about (predicate, assignment); feeds the fingerprint
    evidence: tuple[str, ...] = ()  # lines of evidence, places as `path:line`
    suggestion: str = ""
    suggestion_code: str = ""  # a ready-to-paste snippet (test sketch, replacement line)
    suggestion_lang: str = ""  # code fence language of suggestion_code
    replacement: str | None = None  # mechanical fix of the anchored line (GitHub suggestion block)
    checklist: tuple[str, ...] = ()  # checklist item ids this finding fails (filled by the checklist stage)
    extra: tuple[tuple[str, str], ...] = ()  # rule-specific facts for JSON (key, value)
    fingerprint_override: str | None = None
    state: FindingState = FindingState.NEW  # set by review.rounds
    fixed_in: str | None = None
    related: tuple[Location, ...] = field(default=())
    dismissal: Dismissal | None = None  # dismissed: shown with its reason, never blocking
    # The catalogue messages behind title / evidence / suggestion (parts `title`, `evidence.<i>`,
    # `suggestion`): the texts above are their English rendering; `localized` renders another language.
    texts: tuple[tuple[str, Message], ...] = field(default=(), compare=False)

    @classmethod
    def make(
        cls,
        *,
        title: Message | str,
        evidence: tuple[Message | str, ...] | list[Message | str] = (),
        suggestion: Message | str = "",
        **fields: Any,
    ) -> Finding:
        """A finding whose sentences are catalogue messages (plain strings pass through unchanged)."""
        texts: list[tuple[str, Message]] = []
        if isinstance(title, Message):
            texts.append(("title", title))
        if isinstance(suggestion, Message):
            texts.append(("suggestion", suggestion))
        texts.extend((f"evidence.{i}", e) for i, e in enumerate(evidence) if isinstance(e, Message))
        return cls(
            title=str(title),
            evidence=tuple(str(e) for e in evidence),
            suggestion=str(suggestion),
            texts=tuple(texts),
            **fields,
        )

    def localized(self, lang: str) -> Finding:
        """The same finding with its sentences in `lang` (identifiers, code and paths unchanged)."""
        if lang == "en" or not self.texts:
            return self
        parts = dict(self.texts)
        title = parts["title"].render(lang) if "title" in parts else self.title
        suggestion = parts["suggestion"].render(lang) if "suggestion" in parts else self.suggestion
        evidence = tuple(
            parts[f"evidence.{i}"].render(lang) if f"evidence.{i}" in parts else e
            for i, e in enumerate(self.evidence)
        )
        return replace(self, title=title, evidence=evidence, suggestion=suggestion)

    @property
    def blocking(self) -> bool:
        """P0/P1 and not dismissed: what makes a round BLOCKING and its check run fail."""
        return self.severity.blocking and self.dismissal is None

    @property
    def fingerprint(self) -> str:
        return self.fingerprint_override or fingerprint(self.rule, self.path, self.anchor)

    def with_(self, **changes: Any) -> Finding:
        return replace(self, **changes)

    def to_json(self) -> FindingJson:
        return {
            "fingerprint": self.fingerprint,
            "rule": self.rule,
            "severity": self.severity.value,
            "blocking": self.blocking,
            "path": self.path,
            "line": self.line,
            "title": self.title,
            "evidence": list(self.evidence),
            "suggestion": self.suggestion,
            "suggestion_code": self.suggestion_code,
            "checklist": list(self.checklist),
            "state": self.state,
            "fixed_in": self.fixed_in,
            "extra": dict(self.extra),
            "dismissal": self.dismissal.to_json() if self.dismissal is not None else None,
        }
