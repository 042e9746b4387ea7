"""The check run a round publishes: the gate (its conclusion), the report, one annotation per open
finding (sent in batches of 50).

Failure when blocking, neutral when incomplete, success otherwise. A round that left out a changed
file that could hold a derivation (`held_back`) concludes `failure` (or `action_required`) and says
why, never `neutral`: branch protection reads neutral as passing (see github.plan).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reviewbot.github.limits import CHECK_TEXT_LIMIT, STATE_LINE, fit_body
from reviewbot.github.payloads import (
    AnnotationBody,
    CheckRunCreateBody,
    CheckRunOutputBody,
    CheckRunUpdateBody,
)
from reviewbot.model.finding import Finding
from reviewbot.model.review import Review, Status
from reviewbot.report import sanitize

__all__ = [
    "ANNOTATION_BATCH",
    "CheckRunPlan",
    "annotated",
    "batch_count",
    "check_run",
    "external_id",
    "held_back_line",
]

ANNOTATION_BATCH = 50  # annotations per check-run request
_CONCLUSION = {
    Status.BLOCKING: "failure",
    Status.INCOMPLETE: "neutral",
    Status.LGTM: "success",
    Status.NO_CHANGE: "success",
}
_HELD_BACK_SHOWN = 3
_LEVEL = {"P0": "failure", "P1": "failure", "P2": "warning", "P3": "notice"}


def batch_count(annotations: int) -> int:
    """Requests that create a check run with `annotations` and append the rest (`CheckRunPlan.batches`)."""
    return max(1, -(-annotations // ANNOTATION_BATCH))


def external_id(repo: str, pr: int, head_sha: str) -> str:
    """How reviewbot tells its check run of a head from any other (a re-run finds it by this)."""
    return f"{repo}#{pr}@{head_sha}"


@dataclass(frozen=True)
class CheckRunPlan:
    name: str
    head_sha: str
    conclusion: str
    title: str
    summary: str
    text: str
    annotations: tuple[AnnotationBody, ...]
    external_id: str

    def batches(self) -> list[list[AnnotationBody]]:
        a = list(self.annotations)
        return [a[i : i + ANNOTATION_BATCH] for i in range(0, len(a), ANNOTATION_BATCH)] or [[]]

    def _output(self, annotations: list[AnnotationBody]) -> CheckRunOutputBody:
        out = CheckRunOutputBody(title=self.title, summary=self.summary, text=self.text)
        if annotations:
            out["annotations"] = annotations
        return out

    def create_payload(self, details_url: str | None = None) -> CheckRunCreateBody:
        payload = CheckRunCreateBody(
            name=self.name,
            head_sha=self.head_sha,
            status="completed",
            conclusion=self.conclusion,
            external_id=self.external_id,
            output=self._output(self.batches()[0]),
        )
        if details_url:
            payload["details_url"] = details_url
        return payload

    def in_place_payload(self, details_url: str | None = None) -> CheckRunUpdateBody:
        """The PATCH body that makes an earlier run of this head this plan's run: the create payload
        without the head and external_id (they are the run's already) and without annotations
        (GitHub appends them: those it has would be listed twice)."""
        payload = CheckRunUpdateBody(
            name=self.name,
            status="completed",
            conclusion=self.conclusion,
            output=self._output([]),
        )
        if details_url:
            payload["details_url"] = details_url
        return payload

    def update_payloads(self) -> list[CheckRunUpdateBody]:
        """The PATCH bodies that append the annotations beyond the first 50."""
        return [CheckRunUpdateBody(output=self._output(batch)) for batch in self.batches()[1:]]

    def output_with(self, annotations: list[AnnotationBody]) -> CheckRunOutputBody:
        """The run's output carrying `annotations` (appended by GitHub to those it has)."""
        return self._output(annotations)


def annotated(review: Review) -> list[Finding]:
    return [f for f in review.findings if f.state in ("new", "still_open")]


def _annotation(f: Finding) -> AnnotationBody:
    message = f.title + (f"\n\n{f.suggestion}" if f.suggestion else "")
    a = AnnotationBody(
        path=f.path,
        start_line=max(f.line, 1),
        end_line=max(f.line, 1),
        # A dismissed finding stays visible but must not read as a failure of the check.
        annotation_level=_LEVEL[f.severity.value] if f.dismissal is None else "notice",
        title=f"[{f.severity.value}] {f.rule}{' (dismissed)' if f.dismissal else ''}"[:255],
        message=message[:60_000],
    )
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


def check_run(
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
    markers = list(STATE_LINE.finditer(markdown))
    report = markdown[: markers[-1].start()].rstrip() + "\n" if markers else markdown
    text, _ = fit_body(report, CHECK_TEXT_LIMIT, note)
    return CheckRunPlan(
        name=name,
        head_sha=review.head_sha,
        conclusion=conclusion,
        title=title[:255],
        summary=summary,
        text=text,
        annotations=tuple(_annotation(f) for f in annotated(review)),
        external_id=external_id(repo, pr, review.head_sha),
    )
