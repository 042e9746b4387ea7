"""The publication plan of a round: every body and payload reviewbot would send, built without I/O.

The same plan is printed by a dry run and executed by reviewbot.github.publish, so a dry run
shows exactly what `--post` sends. It holds:

- the summary comment (the round report with its hidden state marker), shortened with a note when
  over GitHub's 65,536-character limit — the marker is always kept;
- a review with inline comments at file:line for findings new this round whose line is part of the
  diff (at most `max_inline`); the others are named in the summary; a mechanical fix
  (`Finding.replacement`) becomes a GitHub suggestion block; a finding that already has an open
  review thread of the bot's gets no second comment (reviewbot.github.threads);
- the review threads to resolve: the open ones of findings fixed this round;
- the check run: failure when blocking, neutral when incomplete, success otherwise, with one
  annotation per open finding sent in batches of 50. A round that left out a changed file that
  could hold a derivation (`held_back`: over the file or diff limits, too large to read or parse)
  concludes `failure` (or `action_required`, `LEFT_OUT_CONCLUSIONS`) and says why on top of the
  comment and in the check run, never `neutral`: branch protection reads neutral as passing, and
  padding a pull request past the limits must not turn its failing check into a passing one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reviewbot.github.checkrun import (
    ANNOTATION_BATCH,
    CheckRunPlan,
    annotated,
    batch_count,
    check_run,
    held_back_line,
)
from reviewbot.github.limits import COMMENT_LIMIT, STATE_LINE, fit_body
from reviewbot.github.payloads import ReviewBody, ReviewCommentBody
from reviewbot.github.settings import LEFT_OUT_CONCLUSIONS
from reviewbot.github.threads import ReviewThread, finding_marker
from reviewbot.model.change import ChangeSet, FileStatus
from reviewbot.model.finding import Finding
from reviewbot.model.messages import catalogue
from reviewbot.model.review import Review
from reviewbot.report import sanitize
from reviewbot.report.render import render_finding

__all__ = [
    "ANNOTATION_BATCH",
    "LEFT_OUT_CONCLUSIONS",
    "held_back_line",
    "COMMENT_LIMIT",
    "InlineComment",
    "ReviewPlan",
    "CheckRunPlan",
    "PublicationPlan",
    "build_plan",
    "planned_writes",
    "inline_split",
    "commentable_lines",
    "fit_body",
    "suggestion_block",
    "review_marker",
]

# The texts GitHub shows besides the report (templates/messages.yaml, `github.*`). `shortened` is filled
# in two steps (check, pr, repo here; the count by `fit_body` once it is known), so these are templates.
_TEXT_KEYS = ("not_inline", "over_limit", "off_diff", "shortened", "review_body")


def _t(lang: str) -> dict[str, str]:
    texts, english = catalogue(lang), catalogue("en")
    keys = {k: "github." + k.replace("_", "-") for k in _TEXT_KEYS}
    return {k: texts.get(key) or english[key] for k, key in keys.items()}


def review_marker(head_sha: str) -> str:
    """Hidden line in reviewbot's reviews: which head a review was posted for (for idempotency)."""
    return f"<!-- reviewbot:review head={head_sha} -->"


@dataclass(frozen=True)
class InlineComment:
    path: str
    line: int
    body: str
    fingerprint: str

    def to_json(self) -> ReviewCommentBody:
        return ReviewCommentBody(path=self.path, line=self.line, side="RIGHT", body=self.body)


@dataclass(frozen=True)
class ReviewPlan:
    commit_id: str
    body: str
    comments: tuple[InlineComment, ...]

    def payload(self) -> ReviewBody:
        # COMMENT, never REQUEST_CHANGES or APPROVE: the check run is the gate, the review carries text.
        return ReviewBody(
            commit_id=self.commit_id,
            body=self.body,
            event="COMMENT",
            comments=[c.to_json() for c in self.comments],
        )


@dataclass(frozen=True)
class PublicationPlan:
    repo: str
    pr: int
    head_sha: str
    summary_body: str
    summary_action: str  # "create" | "update" | "unchanged"
    summary_comment_id: int | None
    review: ReviewPlan | None
    check_run: CheckRunPlan
    not_inline: tuple[Finding, ...] = ()
    shortened: bool = False
    notes: tuple[str, ...] = field(default=())
    resolve_threads: tuple[ReviewThread, ...] = ()  # open threads of findings fixed this round

    @property
    def write_calls(self) -> int:
        """Requests the plan makes when nothing fails."""
        summary = 0 if self.summary_action == "unchanged" else 1
        review = 1 if self.review else 0
        return summary + review + len(self.resolve_threads) + len(self.check_run.batches())


def commentable_lines(change: ChangeSet) -> dict[str, frozenset[int]]:
    """Head lines a review comment may target (RIGHT side): every line inside a hunk of the diff."""
    out: dict[str, frozenset[int]] = {}
    for f in change.files:
        if f.status is FileStatus.DELETED or not f.hunks:
            continue
        out[f.path] = frozenset(
            n for h in f.hunks for n in range(h.target_start, h.target_start + h.target_length)
        )
    return out


def suggestion_block(replacement: str) -> str:
    """A GitHub suggestion for the commented line; the fence outgrows any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", replacement)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}suggestion\n{replacement.rstrip(chr(10))}\n{fence}"


def _inline_body(f: Finding, lang: str) -> str:
    body = render_finding(f, lang).rstrip("\n")
    if f.replacement is not None:
        body += "\n\n" + suggestion_block(f.replacement)
    return f"{body}\n\n{finding_marker(f.fingerprint)}"


def _not_inline_section(items: Sequence[tuple[Finding, str]], lang: str) -> str:
    t = _t(lang)
    lines = [f"<details><summary>{t['not_inline'].format(n=len(items))}</summary>", ""]
    for f, why in items:
        lines.append(
            f"- [{f.severity.value}] {sanitize.inline(f.title, 160)} @ {sanitize.code_span(f'{f.path}:{f.line}')} — {why}"
        )
    return "\n".join(lines + ["", "</details>", ""])


def _with_section(markdown: str, section: str) -> str:
    markers = list(STATE_LINE.finditer(markdown))
    if not markers:
        return markdown.rstrip("\n") + "\n\n" + section
    at = markers[-1].start()
    return markdown[:at].rstrip("\n") + "\n\n" + section + "\n" + markdown[at:]


def inline_split(
    review: Review, lines: Mapping[str, frozenset[int]], threads: Sequence[ReviewThread], max_inline: int
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """The findings new this round commented on inline, and the others with why not ("off_diff",
    "over_limit")."""
    # A finding with an open thread is not commented on again, even when it reads as new (its state
    # was lost with an edited or deleted summary comment): the thread is where the discussion is.
    threaded = {th.fingerprint for th in threads if not th.resolved}
    inline: list[Finding] = []
    skipped: list[tuple[Finding, str]] = []
    for f in review.findings:
        if f.state != "new" or f.dismissal is not None or f.fingerprint in threaded:
            continue
        if f.line not in lines.get(f.path, frozenset()):
            skipped.append((f, "off_diff"))
        elif len(inline) >= max_inline:
            skipped.append((f, "over_limit"))
        else:
            inline.append(f)
    return inline, skipped


def _to_resolve(review: Review, threads: Sequence[ReviewThread]) -> tuple[ReviewThread, ...]:
    """The bot's open threads of findings fixed this round."""
    fixed = {f.fingerprint for f in review.round.fixed}
    return tuple(th for th in threads if th.fingerprint in fixed and not th.resolved)


def planned_writes(
    review: Review,
    *,
    lines: Mapping[str, frozenset[int]],
    threads: Sequence[ReviewThread],
    max_inline: int,
    review_exists: bool,
) -> int:
    """The writes `build_plan` plans for `review`, known before its report is rendered (the report's
    KPI counts them): the summary comment, the review when a new finding sits on the diff, the
    threads to resolve and the check run with its annotation batches."""
    inline, _ = inline_split(review, lines, threads, max_inline)
    batches = batch_count(len(annotated(review)))
    return 1 + (1 if inline and not review_exists else 0) + len(_to_resolve(review, threads)) + batches


def build_plan(
    review: Review,
    markdown: str,
    *,
    repo: str,
    pr: int,
    lines: Mapping[str, frozenset[int]],
    existing_comment: tuple[int, str] | None = None,
    review_exists: bool = False,
    max_inline: int = 30,
    check_name: str = "reviewbot",
    lang: str = "en",
    threads: Sequence[ReviewThread] = (),
    held_back: Sequence[str] = (),
    held_back_conclusion: str = "failure",
) -> PublicationPlan:
    """Everything to publish for `review`, whose report is `markdown` (with its state marker).

    `lines`: the head lines of each file that belong to the diff (see `commentable_lines`).
    `existing_comment`: (id, body) of the bot's summary comment on the PR, if it has one.
    `review_exists`: a review for this head was posted before (a re-run): post no second one.
    `threads`: the bot's review threads on the PR (reviewbot.github.threads.list_bot_threads).
    `held_back`: changed files that could hold a derivation and were left out (see the module doc);
    the check run then concludes `held_back_conclusion` unless it fails anyway.
    """
    if held_back_conclusion not in LEFT_OUT_CONCLUSIONS:
        raise ValueError(f"held_back_conclusion must be one of {LEFT_OUT_CONCLUSIONS}")
    t = _t(lang)
    inline, skipped_why = inline_split(review, lines, threads, max_inline)
    skipped = [(f, t[why].format(limit=max_inline)) for f, why in skipped_why]
    resolve = _to_resolve(review, threads)
    body = _with_section(markdown, _not_inline_section(skipped, lang)) if skipped else markdown
    check = check_run(
        review,
        markdown,
        repo=repo,
        pr=pr,
        name=check_name,
        note="",
        held_back=held_back,
        held_back_conclusion=held_back_conclusion,
    )
    if held_back:
        body = held_back_line(held_back, check_name, check.conclusion) + "\n\n" + body
    note = t["shortened"].replace("{check}", check_name).replace("{pr}", str(pr)).replace("{repo}", repo)
    body, shortened = fit_body(body, COMMENT_LIMIT, note)

    plan_review = None
    if inline and not review_exists:
        comments = tuple(InlineComment(f.path, f.line, _inline_body(f, lang), f.fingerprint) for f in inline)
        text = t["review_body"].format(round=review.round.round_index, n=len(inline))
        plan_review = ReviewPlan(review.head_sha, f"{text}\n\n{review_marker(review.head_sha)}", comments)

    if existing_comment is None:
        action, comment_id = "create", None
    else:
        comment_id = existing_comment[0]
        action = "unchanged" if existing_comment[1] == body else "update"
    return PublicationPlan(
        repo=repo,
        pr=pr,
        head_sha=review.head_sha,
        summary_body=body,
        summary_action=action,
        summary_comment_id=comment_id,
        review=plan_review,
        check_run=check_run(
            review,
            markdown,
            repo=repo,
            pr=pr,
            name=check_name,
            note=note,
            held_back=held_back,
            held_back_conclusion=held_back_conclusion,
        ),
        not_inline=tuple(f for f, _ in skipped),
        shortened=shortened,
        resolve_threads=resolve,
    )
