"""The history of a GitHub round (`review.round.History`): the state in the bot's own comment,
else the store, and the PR's dismissals (the store keeps them; the comment's state does not).

The comment is what the PR shows, whoever published it (a developer's `--post` or the App), so its
hidden state wins. When the comment already covers the head being reviewed (a re-run), the round
before it is rebuilt from the same state: the findings open then are this round's still-open,
fixed and unsubstantiated ones.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from reviewbot.errors import StoreError
from reviewbot.model.finding import Dismissal
from reviewbot.model.round import FindingState
from reviewbot.report.marker import State
from reviewbot.review.rounds import PreviousRound
from reviewbot.store.dismissals import dismissals_of
from reviewbot.store.round_history import previous_from_store
from reviewbot.store.store import Store

__all__ = ["CommentHistory", "previous_round", "dismissals_for"]

log = logging.getLogger(__name__)


def _before(state: State) -> PreviousRound | None:
    """The round before `state`'s, as far as the state tells it (None: `state` is round 1)."""
    if state.round_index <= 1:
        return None
    rows = [r for r in state.history if r.round < state.round_index]
    head = next((r.head_sha for r in rows if r.round == state.round_index - 1), "")
    open_then = tuple(
        f.to_finding().with_(state=FindingState.STILL_OPEN) for f in state.findings if f.state != "new"
    )
    return PreviousRound(state.round_index - 1, head, open_then, tuple(rows))


def previous_round(
    state: State | None, *, repo: str, pr: int, head_sha: str, db_url: str | None, use_store: bool
) -> PreviousRound | None:
    """What `apply_round` continues from for `head_sha` of PR `pr` in `repo`."""
    if state is not None and state.repository in ("", repo) and state.pr in (None, pr):
        return _before(state) if state.head_sha == head_sha else state.previous_round()
    if not use_store:
        return None
    try:
        with Store.open(db_url) as store:
            previous, _ = previous_from_store(store, repo, pr, head_sha)
            return previous
    except StoreError as exc:
        log.warning("%s #%d: the rounds store is not usable (%s); starting from round 1", repo, pr, exc)
        return None


def dismissals_for(repo: str, pr: int, *, db_url: str | None, use_store: bool) -> dict[str, Dismissal]:
    """The PR's dismissed findings by fingerprint (the store keeps them; the comment's state does not)."""
    if not use_store:
        return {}
    try:
        with Store.open(db_url) as store:
            return dismissals_of(store.engine, repo, pr)
    except StoreError as exc:
        # The round goes on; the report then shows no dismissals, and the job says why in the log.
        log.warning("%s #%d: dismissals could not be read (%s)", repo, pr, exc)
        return {}


@dataclass(frozen=True)
class CommentHistory:
    """PR `pr` of `repository`: `state` decoded from the bot's comment (None: it has none), the store
    at `db_url` when `use_store`."""

    state: State | None
    repository: str
    pr: int
    db_url: str | None
    use_store: bool

    def previous(self, head_sha: str) -> PreviousRound | None:
        return previous_round(
            self.state,
            repo=self.repository,
            pr=self.pr,
            head_sha=head_sha,
            db_url=self.db_url,
            use_store=self.use_store,
        )

    def dismissals(self) -> Mapping[str, Dismissal]:
        return dismissals_for(self.repository, self.pr, db_url=self.db_url, use_store=self.use_store)
