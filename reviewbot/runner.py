"""One round of a pull request on a local clone: change -> review -> rounds -> report -> store.

`run_local_round` is what `reviewbot run --pr N --base B --head H` does: `review.round.run_round`
over the clone (`LocalClone`), the rounds store (`store.round_history.StoreHistory`, or no history)
and `LocalSink`, which renders the report once in the round's language and records it. The GitHub
round (`github.round`) runs the same `run_round` with its own source, history and sink; both fit
their report with `fit_round`.

Nothing here talks to GitHub.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from reviewbot.change.diff import load_change
from reviewbot.change.git import run_git
from reviewbot.config import RepoConfig
from reviewbot.model.budget import RoundBudget
from reviewbot.model.change import ChangeSet
from reviewbot.model.finding import Dismissal
from reviewbot.model.review import Review
from reviewbot.report.marker import State, encode_state
from reviewbot.report.render import ReportJson, render_json, render_markdown, stored_json
from reviewbot.report.shrink import Renderer, fit_report
from reviewbot.review.configured import CallerParts, configured
from reviewbot.review.pipeline import ReviewSettings
from reviewbot.review.progress import terminal_progress
from reviewbot.review.round import Code, Reviewed, continue_round, delta_between, run_round
from reviewbot.review.rounds import PreviousRound

if TYPE_CHECKING:  # the store (SQLAlchemy, 0.13 s to import) is loaded only by a round that records
    from reviewbot.store.round_history import StoreHistory
    from reviewbot.store.store import Store

__all__ = [
    "RoundOutcome",
    "run_local_round",
    "continue_round",
    "render_round",
    "fit_round",
    "stored_json",
    "delta_between",
    "repository_identity",
    "owner_name",
    "LocalClone",
    "LocalSink",
]

log = logging.getLogger(__name__)

# The settings of a change (to read its base revision's `.reviewbot.toml`), made by `configured` with
# the round's language (None: the repository's) and parts added to the caller's; None: the defaults
# (no `.reviewbot.toml` read).
Settings = Callable[[ChangeSet, str | None, CallerParts], ReviewSettings] | None


@dataclass(frozen=True)
class RoundOutcome:
    """What a local round came to: its review as reported, the report, whether it was recorded.

    Made by `LocalSink` (returned by `run_local_round`); read by commands.run, which writes the
    report in the format asked for. A GitHub round's is github.sink.PrRoundOutcome."""

    review: Review
    markdown: str  # in the requested language, with the hidden state marker at the end (as stored)
    json: ReportJson
    created: bool  # a new round was recorded (False: no store/PR, or this head was reviewed before)
    lang: str = "en"  # the report's language


def owner_name(url: str) -> str | None:
    """`owner/name` of a remote URL with a host (https, ssh, scp-like); None for local paths."""
    url = url.strip()
    if not url or url.startswith("file:"):
        return None
    m = re.match(r"^[A-Za-z][\w.+-]*://(?:[^@/]*@)?[^/]+/(?P<path>.+)$", url) or re.match(
        r"^(?:[^@/:]+@)?[^/:]+:(?P<path>[^/].*)$", url
    )
    if m is None:
        return None
    parts = [p for p in m["path"].split("/") if p]
    if len(parts) < 2:
        return None
    name = parts[-1].removesuffix(".git")
    return f"{parts[-2]}/{name}" if name else None


def repository_identity(repo: Path) -> str:
    """How rounds name a repository: origin's `owner/name` if it has one, else the absolute path."""
    proc = run_git(repo, ["config", "--get", "remote.origin.url"], ok_codes=(0, 1))
    return owner_name(proc.stdout.decode("utf-8", "replace")) or str(repo.resolve())


def _renderer(lang: str) -> Renderer:
    def as_markdown(review: Review) -> str:
        return render_markdown(review, lang, marker=encode_state(State.from_review(review)))

    return Renderer(render_json, stored_json, as_markdown)


def fit_round(
    review: Review, lang: str = "en", budget: RoundBudget | None = None
) -> tuple[Review, str, ReportJson]:
    """The round as reported: `review` cut to the stored-report size of `budget` (default: the one
    the round ran under) when it is over (a note says what went; see report/shrink.py), its markdown
    (with the state marker) and JSON."""
    limit = (budget or review.budget).report_bytes
    fitted, (markdown, doc, _) = fit_report(review, _renderer(lang), limit)
    return fitted, markdown, doc


def render_round(
    review: Review, lang: str = "en", budget: RoundBudget | None = None
) -> tuple[str, ReportJson]:
    """The markdown report (with the hidden state marker) and the JSON document of a round, within
    the budget's stored-report size."""
    _, markdown, doc = fit_round(review, lang, budget)
    return markdown, doc


@dataclass(frozen=True)
class LocalClone:
    """base...head of the clone at `repo`; `settings_of` makes the settings of its change (to read the
    base revision's `.reviewbot.toml`) with the round's parts: `lang` (unless None, it wins over the
    repository's), the change's timing, the terminal's progress and `budget` (unless None)."""

    repo: Path
    base: str
    head: str
    settings_of: Settings = None
    lang: str | None = "en"
    budget: RoundBudget | None = None

    def load(self) -> Code:
        clock = time.perf_counter()
        change = load_change(self.repo, self.base, self.head)
        return Code(change, self.repo, fetch_ms=(time.perf_counter() - clock) * 1000)

    def settings(self, code: Code) -> ReviewSettings:
        # Strengths and checklist labels are written by the core: in the report's language.
        parts: CallerParts = {
            "timings_ms": {"change": code.fetch_ms},
            "progress": terminal_progress(sys.stderr),
        }
        if self.budget is not None:
            parts["budget"] = self.budget
        if self.settings_of is None:
            return configured(RepoConfig(), lang=self.lang, **parts)
        return self.settings_of(code.change, self.lang, parts)


class NoHistory:
    """A round with nothing before it: no store (or no PR number) to continue from."""

    def __init__(self, repository: Callable[[], str], pr: int | None) -> None:
        self._name = repository
        self._pr = pr

    @cached_property
    def repository(self) -> str:
        return self._name()

    @property
    def pr(self) -> int | None:
        return self._pr

    def previous(self, head_sha: str) -> PreviousRound | None:
        return None

    def dismissals(self) -> Mapping[str, Dismissal]:
        return {}


@dataclass(frozen=True)
class LocalSink:
    """The report in the round's language (the stage timing of the rounds in its KPI), recorded in
    `store` when the round has a PR number."""

    store: Store | None

    def publish(self, reviewed: Reviewed) -> RoundOutcome:
        review = reviewed.review
        review.kpi.setdefault("timings_ms", {})["rounds"] = round(reviewed.rounds_ms, 1)
        review, markdown, doc = fit_round(review, reviewed.lang)
        created = False
        if self.store is not None and review.round.pr is not None:
            from reviewbot.store.round_history import save_review

            created = save_review(
                self.store, review, repository=review.round.repository, pr=review.round.pr, markdown=markdown,
                doc=doc,
            )  # fmt: skip
        return RoundOutcome(review, markdown, doc, created, reviewed.lang)


def _history(store: Store | None, name: Callable[[], str], pr: int | None) -> StoreHistory | NoHistory:
    if store is None or pr is None:
        return NoHistory(name, pr)
    from reviewbot.store.round_history import StoreHistory

    return StoreHistory(store, name, pr)


def run_local_round(
    repo_path: str | Path,
    base: str,
    head: str,
    pr: int | None,
    store: Store | None,
    settings: Settings = None,
    lang: str | None = "en",
    *,
    repository: str | None = None,
    budget: RoundBudget | None = None,
) -> RoundOutcome:
    """Review base...head of the clone at `repo_path` as the next round of PR `pr`.

    With a store and a PR number the round is recorded under (repository, pr); `repository` defaults
    to origin's owner/name, else the clone's absolute path. A head the PR already has a round for
    is reviewed and rendered again as that round (replaced in place, `created` False). The stored
    report is the one returned, in `lang`. `settings` makes the settings of the ChangeSet (to read
    the base revision's `.reviewbot.toml`) with the round's parts (`lang` unless None, `budget`
    unless None: they win over the repository's); None: the defaults. `budget` bounds the round
    (default: the defaults; see model/budget.py).
    """
    repo = Path(repo_path).resolve()
    history = _history(store, lambda: repository or repository_identity(repo), pr)
    outcome = run_round(LocalClone(repo, base, head, settings, lang, budget), history, LocalSink(store))
    existing = getattr(history, "existing", None)
    log.info(
        "%s %s round %d at %s: %s (%s)",
        history.repository,
        f"PR #{pr}" if pr is not None else f"{base}..{head}",  # a local review has no PR number
        outcome.review.round.round_index,
        outcome.review.head_sha[:12],
        outcome.review.status.value,
        "recorded" if outcome.created else ("re-rendered" if existing is not None else "not recorded"),
    )
    return outcome
