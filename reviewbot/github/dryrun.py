"""A publication plan shown instead of sent: the exact bodies and payloads, as text or JSON."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from reviewbot.github.payloads import CheckRunCreateBody, CheckRunUpdateBody, ReviewBody
from reviewbot.github.plan import PublicationPlan

__all__ = ["PlanJson", "plan_text", "plan_json"]

_RULE = "=" * 100


class SummaryCommentJson(TypedDict):
    action: str  # create | update | unchanged
    body: str
    comment_id: NotRequired[int]  # the comment edited or left as it is


class CheckRunRequestsJson(TypedDict):
    create: CheckRunCreateBody
    updates: list[CheckRunUpdateBody]  # the annotations beyond the first 50


class ThreadToResolveJson(TypedDict):
    thread_id: str
    fingerprint: str
    path: str
    line: int | None


class PlanJson(TypedDict):
    """A dry run's plan in `--format json`: every request `--post` would send."""

    repository: str
    pr: int
    head_sha: str
    summary_comment: SummaryCommentJson
    review: ReviewBody | None
    check_run: CheckRunRequestsJson
    not_inline: list[str]
    resolve_threads: list[ThreadToResolveJson]
    shortened: bool
    write_calls: int


def plan_json(plan: PublicationPlan) -> PlanJson:
    """Every request `--post` would send for this plan (the check run's details_url aside)."""
    summary = SummaryCommentJson(action=plan.summary_action, body=plan.summary_body)
    if plan.summary_comment_id is not None:
        summary["comment_id"] = plan.summary_comment_id
    return PlanJson(
        repository=plan.repo,
        pr=plan.pr,
        head_sha=plan.head_sha,
        summary_comment=summary,
        review=plan.review.payload() if plan.review else None,
        check_run=CheckRunRequestsJson(
            create=plan.check_run.create_payload(),
            updates=plan.check_run.update_payloads(),
        ),
        not_inline=[f"{f.path}:{f.line}" for f in plan.not_inline],
        resolve_threads=[
            ThreadToResolveJson(thread_id=th.id, fingerprint=th.fingerprint, path=th.path, line=th.line)
            for th in plan.resolve_threads
        ],
        shortened=plan.shortened,
        write_calls=plan.write_calls,
    )


def plan_text(plan: PublicationPlan) -> str:
    """The plan for a terminal: each body verbatim between headers."""
    out: list[str] = [
        _RULE,
        f"DRY RUN — nothing was posted to {plan.repo}#{plan.pr} (head {plan.head_sha[:12]}); "
        f"--post would make {plan.write_calls} write request(s):",
        _RULE,
    ]
    where = f" {plan.summary_comment_id}" if plan.summary_comment_id is not None else ""
    action = {
        "create": "create a new comment",
        "update": f"edit comment{where}",
        "unchanged": f"leave comment{where} as it is (same body)",
    }[plan.summary_action]
    out += [
        f"--- summary comment: {action} ({len(plan.summary_body):,} characters) ---",
        plan.summary_body.rstrip(),
    ]
    if plan.review is None:
        out.append(
            "--- review: none (no new finding on a line of the diff, or this head has one already) ---"
        )
    else:
        out.append(f"--- review (COMMENT) with {len(plan.review.comments)} inline comment(s) ---")
        out.append(plan.review.body)
        for c in plan.review.comments:
            out += [f"--- inline comment at {c.path}:{c.line} (RIGHT) ---", c.body.rstrip()]
    for th in plan.resolve_threads:
        where = f"{th.path}:{th.line}" if th.line is not None else f"{th.path} (outdated)"
        out.append(
            f"--- resolve review thread {th.id} at {where}: finding {th.fingerprint[:12]} is fixed ---"
        )
    run = plan.check_run
    batches = len(run.batches())
    out += [
        f"--- check run `{run.name}` on {run.head_sha[:12]}: {run.conclusion} — {run.title} ---",
        run.summary.rstrip(),
        f"annotations: {len(run.annotations)} in {batches} request(s) (at most 50 each)",
    ]
    out += [
        f"  {a['annotation_level']:<8} {a['path']}:{a['start_line']}  {a.get('title', '')}"
        for a in run.annotations
    ]
    return "\n".join(out) + "\n"
