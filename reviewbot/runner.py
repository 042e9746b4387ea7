"""One round of a pull request on a local clone: change -> review -> rounds -> report -> store.

`run_local_round` is what `reviewbot run --pr N --base B --head H` does. Its pieces serve the
GitHub worker too, which has a cached clone and, without a store, the previous round decoded from
its own comment (`report.marker.decode_state(body).previous_round()`):

    change = load_change(repo, base, head)
    review = review_change(change, settings)
    review = continue_round(repo, change, review, previous, repository=..., pr=...)
    markdown, doc = render_round(review, lang)

Nothing here talks to GitHub.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewbot.change.diff import load_change
from reviewbot.change.git import diff_patch_chunks, is_ancestor, run_git
from reviewbot.change.patch import parse_section
from reviewbot.errors import EnvironmentProblem
from reviewbot.model.budget import RoundBudget
from reviewbot.model.change import ChangeSet
from reviewbot.model.finding import Dismissal
from reviewbot.model.review import Review
from reviewbot.report.marker import State, encode_state
from reviewbot.report.render import render_json, render_markdown
from reviewbot.report.shrink import Renderer, fit_report
from reviewbot.review.pipeline import ReviewSettings, review_change
from reviewbot.review.progress import terminal_progress
from reviewbot.review.rounds import Delta, PreviousRound, apply_round

if TYPE_CHECKING:  # the store (SQLAlchemy, 0.13 s to import) is loaded only by a round that records
    from reviewbot.store.store import RoundRecord, Store

__all__ = [
    "RoundOutcome",
    "run_local_round",
    "continue_round",
    "previous_from_store",
    "render_round",
    "fit_round",
    "stored_json",
    "delta_between",
    "repository_identity",
    "owner_name",
]

log = logging.getLogger(__name__)

Settings = ReviewSettings | Callable[[ChangeSet], ReviewSettings] | None


@dataclass(frozen=True)
class RoundOutcome:
    review: Review
    markdown: str  # in the requested language, with the hidden state marker at the end (as stored)
    json: dict[str, Any]
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


def delta_between(repo: Path, a: str, b: str) -> Delta:
    """Files and head lines changed from commit a to commit b (no file texts are read)."""
    files: set[str] = set()
    lines: dict[str, frozenset[int]] = {}
    for raw in diff_patch_chunks(repo, a, b):
        section = parse_section(raw.decode("utf-8", "surrogateescape"))
        if section.path is None:
            continue
        files.add(section.path)
        if section.old_path:
            files.add(section.old_path)
        lines[section.path] = frozenset(n for h in section.hunks for n, _ in h.added)
    return Delta(frozenset(files), lines)


def _is_ancestor(repo: Path, a: str, b: str) -> bool:
    try:
        return is_ancestor(repo, a, b)
    except EnvironmentProblem:
        # The previous head is not in this clone any more (force-pushed away and pruned).
        return False


def continue_round(
    repo: Path,
    change: ChangeSet,
    review: Review,
    previous: PreviousRound | None,
    *,
    repository: str,
    pr: int | None,
    dismissals: Mapping[str, Dismissal] | None = None,
) -> Review:
    """The core's `review` made the round after `previous` (None: the first round); `dismissals`:
    the PR's dismissed findings by fingerprint (see store.dismissals)."""
    ancestor = False
    since: Delta | None = None
    if previous is not None:
        ancestor = _is_ancestor(repo, previous.head_sha, review.head_sha)
        if ancestor:
            since = delta_between(repo, previous.head_sha, review.head_sha)
    return apply_round(
        review,
        change,
        previous,
        previous_is_ancestor=ancestor,
        since_previous=since,
        repository=repository,
        pr=pr,
        dismissals=dismissals,
    )


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
    rows = [s.history_row() for s in store.history(repository, pr) if s.round_index <= before.round_index]
    previous = PreviousRound(before.round_index, before.head_sha, tuple(before.open_findings), tuple(rows))
    return previous, existing


def _renderer(lang: str) -> Renderer:
    def as_markdown(review: Review) -> str:
        return render_markdown(review, lang, marker=encode_state(State.from_review(review)))

    return Renderer(render_json, stored_json, as_markdown)


def stored_json(doc: dict[str, Any]) -> str:
    """The JSON document as the rounds store keeps it."""
    return json.dumps(doc, indent=2, ensure_ascii=False)


def fit_round(
    review: Review, lang: str = "en", budget: RoundBudget | None = None
) -> tuple[Review, str, dict[str, Any]]:
    """The round as reported: `review` cut to the stored-report size of `budget` (default: the one
    the round ran under) when it is over (a note says what went; see report/shrink.py), its markdown
    (with the state marker) and JSON."""
    limit = (budget or review.budget).report_bytes
    fitted, (markdown, doc, _) = fit_report(review, _renderer(lang), limit)
    return fitted, markdown, doc


def render_round(
    review: Review, lang: str = "en", budget: RoundBudget | None = None
) -> tuple[str, dict[str, Any]]:
    """The markdown report (with the hidden state marker) and the JSON document of a round, within
    the budget's stored-report size."""
    _, markdown, doc = fit_round(review, lang, budget)
    return markdown, doc


def _settings_for(settings: Settings, change: ChangeSet) -> ReviewSettings:
    if settings is None:
        return ReviewSettings()
    return settings if isinstance(settings, ReviewSettings) else settings(change)


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
    report is the one returned, in `lang`. `settings` may be a function of the ChangeSet (to read
    the base revision's `.reviewbot.toml`); its `lang` is replaced by `lang` unless that is None. `budget` bounds the
    round (default: the settings' own, else the defaults; see model/budget.py).
    """
    repo = Path(repo_path).resolve()
    clock = time.perf_counter()
    change = load_change(repo, base, head)
    try:
        change_ms = (time.perf_counter() - clock) * 1000
        chosen = _settings_for(settings, change)
        # Strengths and checklist labels are written by the core: in the report's language.
        chosen = replace(
            chosen,
            lang=lang or chosen.lang,
            timings_ms={**chosen.timings_ms, "change": change_ms},
            progress=chosen.progress or terminal_progress(sys.stderr),
            budget=budget or chosen.budget,
        )
        review = review_change(change, chosen)

        clock = time.perf_counter()
        name = repository or repository_identity(repo)
        previous, existing = (None, None)
        dismissed: dict[str, Dismissal] = {}
        if store is not None and pr is not None:
            from reviewbot.store.dismissals import dismissals_of

            previous, existing = previous_from_store(store, name, pr, change.head_sha)
            dismissed = dismissals_of(store.engine, name, pr)
        review = continue_round(repo, change, review, previous, repository=name, pr=pr, dismissals=dismissed)
        review.kpi.setdefault("timings_ms", {})["rounds"] = round((time.perf_counter() - clock) * 1000, 1)
    finally:
        change.close()

    lang = chosen.lang
    review, markdown, doc = fit_round(review, lang)
    created = False
    if store is not None and pr is not None:
        from reviewbot.store.store import RoundRecord

        record = RoundRecord.from_review(
            review,
            repository=name,
            pr=pr,
            report_markdown=markdown,
            report_json=stored_json(doc),
        )
        created = store.save_round(record).created
    log.info(
        "%s %s round %d at %s: %s (%s)",
        name,
        f"PR #{pr}" if pr is not None else f"{base}..{head}",  # a local review has no PR number
        review.round.round_index,
        review.head_sha[:12],
        review.status.value,
        "recorded" if created else ("re-rendered" if existing is not None else "not recorded"),
    )
    return RoundOutcome(review, markdown, doc, created, lang)
