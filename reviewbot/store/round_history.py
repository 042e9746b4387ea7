"""The rounds store as a round's history (`review.round.History`) and as where a round is kept.

`StoreHistory` is what a local `reviewbot run --pr N` continues from, and what a GitHub round falls
back to when the bot's comment has no state; `save_review` records a rendered round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property

from reviewbot.model.finding import Dismissal
from reviewbot.model.review import Review
from reviewbot.report.render import ReportJson, stored_json
from reviewbot.review.rounds import PreviousRound
from reviewbot.store.dismissals import dismissals_of
from reviewbot.store.records import RoundRecord
from reviewbot.store.store import Store

__all__ = ["StoreHistory", "previous_from_store", "save_review"]


def previous_from_store(
    store: Store, repository: str, pr: int, head_sha: str
) -> tuple[PreviousRound | None, RoundRecord | None]:
    """(the round to continue from, the round this head already has if any).

    A head reviewed before is re-done as the same round, so it continues from the round before it.
    """
    existing = store.round_for_head(repository, pr, head_sha)
    if existing is not None:
        before = (
            store.get_round(repository, pr, existing.round_index - 1) if existing.round_index > 1 else None
        )
    else:
        before = store.latest_round(repository, pr)
    if before is None:
        return None, existing
    rows = [r for r in store.history(repository, pr) if r.round <= before.round_index]
    previous = PreviousRound(before.round_index, before.head_sha, tuple(before.open_findings), tuple(rows))
    return previous, existing


class StoreHistory:
    """PR `pr`'s rounds in `store` (`repository` is a function so that naming it can wait until the
    change is known to exist)."""

    def __init__(self, store: Store, repository: Callable[[], str], pr: int) -> None:
        self.store = store
        self._name = repository
        self._pr = pr
        self.existing: RoundRecord | None = None  # the round the reviewed head already had

    @cached_property
    def repository(self) -> str:
        return self._name()

    @property
    def pr(self) -> int:
        return self._pr

    def previous(self, head_sha: str) -> PreviousRound | None:
        previous, self.existing = previous_from_store(self.store, self.repository, self._pr, head_sha)
        return previous

    def dismissals(self) -> Mapping[str, Dismissal]:
        return dismissals_of(self.store.engine, self.repository, self._pr)


def save_review(
    store: Store, review: Review, *, repository: str, pr: int, markdown: str, doc: ReportJson
) -> bool:
    """Record `review` (its report `markdown` and JSON `doc`); False when its head had a round already
    (replaced in place)."""
    record = RoundRecord.from_review(
        review, repository=repository, pr=pr, report_markdown=markdown, report_json=stored_json(doc)
    )
    _, created = store.save_round(record)
    return created
