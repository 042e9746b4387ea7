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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewbot.github.settings import LEFT_OUT_CONCLUSIONS
from reviewbot.github.threads import ReviewThread, finding_marker
from reviewbot.model.change import ChangeSet, FileStatus
from reviewbot.model.finding import Finding
from reviewbot.model.messages import catalogue
from reviewbot.model.review import Review, Status
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
    "commentable_lines",
    "fit_body",
    "suggestion_block",
    "review_marker",
]

COMMENT_LIMIT = 65536  # GitHub refuses longer comment bodies (422)
CHECK_TEXT_LIMIT = 65535  # check run output summary / text
ANNOTATION_BATCH = 50  # annotations per check-run request
_STATE_LINE = re.compile(r"^<!-- reviewbot:state v\d+ ", re.MULTILINE)
_CONCLUSION = {
    Status.BLOCKING: "failure",
    Status.INCOMPLETE: "neutral",
    Status.LGTM: "success",
    Status.NO_CHANGE: "success",
}
_HELD_BACK_SHOWN = 3
_LEVEL = {"P0": "failure", "P1": "failure", "P2": "warning", "P3": "notice"}
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

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "side": "RIGHT", "body": self.body}


@dataclass(frozen=True)
class ReviewPlan:
    commit_id: str
    body: str
    comments: tuple[InlineComment, ...]

    def payload(self) -> dict[str, Any]:
        # COMMENT, never REQUEST_CHANGES or APPROVE: the check run is the gate, the review carries text.
        return {
            "commit_id": self.commit_id,
            "body": self.body,
            "event": "COMMENT",
            "comments": [c.to_json() for c in self.comments],
        }


@dataclass(frozen=True)
class CheckRunPlan:
    name: str
    head_sha: str
    conclusion: str
    title: str
    summary: str
    text: str
    annotations: tuple[dict[str, Any], ...]
    external_id: str

    def batches(self) -> list[list[dict[str, Any]]]:
        a = list(self.annotations)
        return [a[i : i + ANNOTATION_BATCH] for i in range(0, len(a), ANNOTATION_BATCH)] or [[]]

    def _output(self, annotations: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "summary": self.summary, "text": self.text}
        if annotations:
            out["annotations"] = annotations
        return out

    def create_payload(self, details_url: str | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "name": self.name,
            "head_sha": self.head_sha,
            "status": "completed",
            "conclusion": self.conclusion,
            "external_id": self.external_id,
            "output": self._output(self.batches()[0]),
        }
        if details_url:
            payload["details_url"] = details_url
        return payload

    def update_payloads(self) -> list[dict[str, Any]]:
        """The PATCH bodies that append the annotations beyond the first 50."""
        return [{"output": self._output(batch)} for batch in self.batches()[1:]]

    def output_with(self, annotations: list[dict[str, Any]]) -> dict[str, Any]:
        """The run's output carrying `annotations` (appended by GitHub to those it has)."""
        return self._output(annotations)


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
    markers = list(_STATE_LINE.finditer(body))
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


def _not_inline_section(items: Sequence[tuple[Finding, str]], lang: str) -> str:
    t = _t(lang)
    lines = [f"<details><summary>{t['not_inline'].format(n=len(items))}</summary>", ""]
    for f, why in items:
        lines.append(
            f"- [{f.severity.value}] {sanitize.inline(f.title, 160)} @ {sanitize.code_span(f'{f.path}:{f.line}')} — {why}"
        )
    return "\n".join(lines + ["", "</details>", ""])


def _with_section(markdown: str, section: str) -> str:
    markers = list(_STATE_LINE.finditer(markdown))
    if not markers:
        return markdown.rstrip("\n") + "\n\n" + section
    at = markers[-1].start()
    return markdown[:at].rstrip("\n") + "\n\n" + section + "\n" + markdown[at:]


def _annotation(f: Finding) -> dict[str, Any]:
    message = f.title + (f"\n\n{f.suggestion}" if f.suggestion else "")
    a: dict[str, Any] = {
        "path": f.path,
        "start_line": max(f.line, 1),
        "end_line": max(f.line, 1),
        # A dismissed finding stays visible but must not read as a failure of the check.
        "annotation_level": _LEVEL[f.severity.value] if f.dismissal is None else "notice",
        "title": f"[{f.severity.value}] {f.rule}{' (dismissed)' if f.dismissal else ''}"[:255],
        "message": message[:60_000],
    }
    if f.evidence:
        a["raw_details"] = "\n".join(f.evidence)[:60_000]
    return a


def held_back_line(held_back: Sequence[str], check_name: str, conclusion: str) -> str:
    """The line on top of the summary comment (and in the check run) of a round that left out files
    that could hold a derivation: how many, the first few, and what the check concludes for it."""
    shown = ", ".join(sanitize.code_span(p) for p in held_back[:_HELD_BACK_SHOWN])
    more = f" and {len(held_back) - _HELD_BACK_SHOWN:,} more" if len(held_back) > _HELD_BACK_SHOWN else ""
    return (
        f"> **reviewbot left out {len(held_back):,} changed source file(s) that could hold a derivation** "
        f"({shown}{more}): over the round's limits, so they were not reviewed. The check run "
        f"{sanitize.code_span(check_name)} concludes `{conclusion}` until they are: split the pull request, "
        "or raise the budget (`files`) for this repository."
    )


def _check_run(
    review: Review,
    markdown: str,
    *,
    repo: str,
    pr: int,
    name: str,
    note: str,
    held_back: Sequence[str] = (),
    held_back_conclusion: str = "failure",
) -> CheckRunPlan:
    counts = review.summary()
    title = f"{review.status.value} — " + " · ".join(f"{k} {v}" for k, v in counts.items())
    new = sum(1 for f in review.findings if f.state == "new")
    summary = (
        f"**{review.status.value}** · round {review.round.round_index} · head `{review.head_sha[:12]}`\n\n"
        f"Summary: {' · '.join(f'{k}/{v}' for k, v in counts.items())} · new {new} · "
        f"fixed {len(review.round.fixed)}\n"
    )
    conclusion = _CONCLUSION[review.status]
    if held_back and conclusion != "failure":
        # Never neutral (read as passing) when what was left out may hold the change that matters.
        conclusion = held_back_conclusion
    if held_back:
        title = f"{len(held_back):,} source file(s) left out — {title}"
        summary += "\n" + held_back_line(held_back, name, conclusion) + "\n"
    markers = list(_STATE_LINE.finditer(markdown))
    report = markdown[: markers[-1].start()].rstrip() + "\n" if markers else markdown
    text, _ = fit_body(report, CHECK_TEXT_LIMIT, note)
    return CheckRunPlan(
        name=name,
        head_sha=review.head_sha,
        conclusion=conclusion,
        title=title[:255],
        summary=summary,
        text=text,
        annotations=tuple(_annotation(f) for f in review.findings if f.state in ("new", "still_open")),
        external_id=f"{repo}#{pr}@{review.head_sha}",
    )


def build_plan(
    review: Review,
    markdown: str,
    *,
    repo: str,
    pr: int,
    lines: dict[str, frozenset[int]],
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
    # A finding with an open thread is not commented on again, even when it reads as new (its state
    # was lost with an edited or deleted summary comment): the thread is where the discussion is.
    threaded = {th.fingerprint for th in threads if not th.resolved}
    new = [
        f
        for f in review.findings
        if f.state == "new" and f.dismissal is None and f.fingerprint not in threaded
    ]
    fixed = {f.fingerprint for f in review.round.fixed}
    resolve = tuple(th for th in threads if th.fingerprint in fixed and not th.resolved)
    inline: list[Finding] = []
    skipped: list[tuple[Finding, str]] = []
    for f in new:
        if f.line not in lines.get(f.path, frozenset()):
            skipped.append((f, t["off_diff"]))
        elif len(inline) >= max_inline:
            skipped.append((f, t["over_limit"].format(limit=max_inline)))
        else:
            inline.append(f)
    body = _with_section(markdown, _not_inline_section(skipped, lang)) if skipped else markdown
    check = _check_run(
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
        check_run=_check_run(
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
