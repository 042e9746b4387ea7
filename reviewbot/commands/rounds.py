"""`reviewbot rounds --pr N`: the round history of a pull request, or one round's report as it was.

reviewbot rounds --pr 1361                    history table (repository from the checkout's origin)
reviewbot rounds --pr 1361 --format json      history as JSON
reviewbot rounds --pr 1361 --round 1          round 1's stored markdown report, unchanged
reviewbot rounds --pr 1361 --round 1 --format json
reviewbot rounds --pr 1361 --html out.html    the history as one self-contained HTML page (rounds_html)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from reviewbot.errors import UsageError
from reviewbot.extras import require_extras
from reviewbot.model.finding import DismissalJson
from reviewbot.model.messages import LANGS
from reviewbot.model.round import RoundRow, RoundRowJson

if TYPE_CHECKING:
    from reviewbot.store.store import Store

__all__ = ["add_arguments", "main", "history_table", "repository_of"]


class DismissedJson(TypedDict):
    """A dismissed finding of a round, as that round recorded it."""

    round: int
    fingerprint: str
    rule: str
    severity: str
    path: str
    line: int
    state: str
    dismissal: DismissalJson


class HistoryJson(TypedDict):
    """`reviewbot rounds --pr N --format json`."""

    repository: str
    pr: int
    rounds: list[RoundRowJson]  # with `created_at`
    dismissed: list[DismissedJson]
    jobs: list[Mapping[str, object]]  # the App worker's jobs of the PR (service.job_records)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pr", type=int, required=True, help="pull request number")
    parser.add_argument(
        "--repo", help="OWNER/NAME as recorded (default: from the checkout's origin, else its path)"
    )
    parser.add_argument("--path", default=None, help="the checkout that names the repository (default: .)")
    parser.add_argument(
        "--format",
        choices=("table", "json", "markdown"),
        default=None,
        help="history: table (default) or json; --round: markdown (default) or json",
    )
    parser.add_argument("--round", type=int, default=None, metavar="K", help="print round K's stored report")
    parser.add_argument(
        "--db", help="rounds database URL (default: $REVIEWBOT_DB_URL or the state directory)"
    )
    parser.add_argument(
        "--html", metavar="FILE", help="write the history as one self-contained HTML page to FILE"
    )
    parser.add_argument("--lang", choices=LANGS, default="en", help="language of the --html page")


def history_table(
    repository: str,
    pr: int,
    rows: list[RoundRow],
    dismissed: Mapping[int, Sequence[DismissedJson]] | None = None,
) -> str:
    """The history as aligned text columns, one round a line, then the dismissed findings.

    `dismissed`: round index -> the dismissed findings of that round (see `dismissed_findings`)."""
    dismissed = dismissed or {}
    head = (
        "round",
        "commit",
        "status",
        "P0",
        "P1",
        "P2",
        "P3",
        "new",
        "fixed",
        "open",
        "dismissed",
        "review",
        "reviewed at",
    )
    lines = [head] + [
        (
            str(r.round),
            r.head_sha[:12],
            r.status,
            *(str(r.summary.get(p, 0)) for p in ("P0", "P1", "P2", "P3")),
            str(r.new),
            str(r.fixed),
            str(r.still_open),
            str(len(dismissed.get(r.round, ()))),
            "full (force-push)" if r.force_pushed else ("full" if r.full_review else "incremental"),
            r.reviewed_at,
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    out = [f"{repository} PR #{pr}: {len(rows)} round(s)"]
    if rows and rows[0].round > 1:  # a PR's rounds start at 1: the earlier ones were pruned
        first = rows[0].round
        out[0] += f" (round{'s 1-' if first > 2 else ' '}{first - 1} no longer kept: retention)"
    out += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines]
    last = dismissed.get(rows[-1].round, ()) if rows else ()
    if last:
        out += ["", f"dismissed in round {rows[-1].round}:"]
        out += [
            f"  {d['fingerprint']}  [{d['severity']}] {d['rule']} @ {d['path']}:{d['line']}  "
            f"by {d['dismissal']['by']} at {d['dismissal']['at']}: {d['dismissal']['reason']}"
            for d in last
        ]
    return "\n".join(out) + "\n"


def dismissed_findings(
    store: Store, repository: str, pr: int, rows: list[RoundRow]
) -> dict[int, list[DismissedJson]]:
    """Round index -> its dismissed findings (fingerprint, rule, severity, path, line, dismissal),
    as each round recorded them."""
    out: dict[int, list[DismissedJson]] = {}
    for row in rows:
        record = store.get_round(repository, pr, row.round)
        if record is None:
            continue
        out[row.round] = [
            {
                "round": row.round,
                "fingerprint": f.fingerprint,
                "rule": f.rule,
                "severity": f.severity,
                "path": f.path,
                "line": f.line,
                "state": f.state,
                "dismissal": dismissal.copy(),
            }
            for f in record.findings
            if isinstance(dismissal := f.data.get("dismissal"), dict)
        ]
    return out


def _with_created_at(row: RoundRow) -> RoundRowJson:
    doc = row.to_json()
    if row.created_at is not None:  # always, for a row the store read
        doc["created_at"] = row.created_at.isoformat()
    return doc


def repository_of(args: argparse.Namespace) -> str:
    """The repository as rounds record it: --repo, else the checkout's origin (also `dismiss`)."""
    if args.repo:
        return str(args.repo)
    from reviewbot.runner import repository_identity

    return repository_identity(Path(args.path or ".").resolve())


def main(args: argparse.Namespace) -> int:
    from reviewbot.service.job_records import jobs_table
    from reviewbot.service.jobs import jobs_of_pr
    from reviewbot.store.store import Store

    if args.html is not None:
        from reviewbot.commands.rounds_html import write_page

        return write_page(args)
    if args.round is not None and args.round < 1:
        raise UsageError(f"--round counts from 1, not {args.round}")
    if args.round is None and args.format == "markdown":
        raise UsageError("--format markdown prints one round's report: add --round K")
    if args.round is not None and args.format == "table":
        raise UsageError("--round K prints a stored report: use --format markdown or json")
    repository = repository_of(args)
    require_extras(db_url=args.db or os.environ.get("REVIEWBOT_DB_URL"))
    with Store.open(args.db) as store:
        if args.round is not None:
            record = store.get_round(repository, args.pr, args.round)
            if record is None:
                known = [h.round for h in store.history(repository, args.pr)]
                raise UsageError(
                    f"{repository} PR #{args.pr} has no round {args.round}"
                    + (f" (recorded: {', '.join(map(str, known))})" if known else " (no rounds recorded)")
                    + f" in {store.url}"
                )
            text = record.report_json if args.format == "json" else record.report_markdown
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            return 0
        rows = store.history(repository, args.pr)
        dismissed = dismissed_findings(store, repository, args.pr, rows)
        # Jobs of the GitHub App worker: a round that failed for good is shown with its reason.
        jobs = jobs_of_pr(store.engine, repository, args.pr)
    if args.format == "json":
        doc: HistoryJson = {
            "repository": repository,
            "pr": args.pr,
            "rounds": [_with_created_at(r) for r in rows],
            # Each round's dismissed findings with reason, who and when (as that round recorded them).
            "dismissed": [d for _, found in sorted(dismissed.items()) for d in found],
            "jobs": [j.to_json() for j in jobs],
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not rows and not jobs:
        # As `--round K`, `--html` and `dismiss` say it: nothing recorded is the caller's to fix (exit 2).
        raise UsageError(f"{repository} PR #{args.pr} has no rounds recorded in {store.url}")
    if rows:
        sys.stdout.write(history_table(repository, args.pr, rows, dismissed))
    else:
        print(f"reviewbot: no rounds recorded for {repository} PR #{args.pr}", file=sys.stderr)
    if jobs:
        sys.stdout.write("\njobs:\n" + jobs_table(jobs))
    return 0
