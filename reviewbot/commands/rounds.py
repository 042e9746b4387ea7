"""`reviewbot rounds --pr N`: the round history of a pull request, or one round's report as it was.

reviewbot rounds --pr 1361                    history table (repository from the checkout's origin)
reviewbot rounds --pr 1361 --format json      history as JSON
reviewbot rounds --pr 1361 --round 1          round 1's stored markdown report, unchanged
reviewbot rounds --pr 1361 --round 1 --format json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewbot.errors import UsageError

if TYPE_CHECKING:
    from reviewbot.store.store import RoundSummary

__all__ = ["add_arguments", "main", "history_table"]


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


def history_table(repository: str, pr: int, rows: list[RoundSummary]) -> str:
    """The history as aligned text columns, one round a line."""
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
        "review",
        "reviewed at",
    )
    lines = [head] + [
        (
            str(r.round_index),
            r.head_sha[:12],
            r.status,
            *(str(r.summary.get(p, 0)) for p in ("P0", "P1", "P2", "P3")),
            str(r.new),
            str(r.fixed),
            str(r.still_open),
            "full (force-push)" if r.force_pushed else ("full" if r.full_review else "incremental"),
            r.reviewed_at,
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    out = [f"{repository} PR #{pr}: {len(rows)} round(s)"]
    out += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines]
    return "\n".join(out) + "\n"


def _repository(args: argparse.Namespace) -> str:
    if args.repo:
        return str(args.repo)
    from reviewbot.runner import repository_identity

    return repository_identity(Path(args.path or ".").resolve())


def main(args: argparse.Namespace) -> int:
    from reviewbot.service.job_records import jobs_table
    from reviewbot.service.jobs import jobs_of_pr
    from reviewbot.store.store import Store

    if args.round is not None and args.round < 1:
        raise UsageError(f"--round counts from 1, not {args.round}")
    if args.round is None and args.format == "markdown":
        raise UsageError("--format markdown prints one round's report: add --round K")
    if args.round is not None and args.format == "table":
        raise UsageError("--round K prints a stored report: use --format markdown or json")
    repository = _repository(args)
    with Store.open(args.db) as store:
        if args.round is not None:
            record = store.get_round(repository, args.pr, args.round)
            if record is None:
                known = [h.round_index for h in store.history(repository, args.pr)]
                raise UsageError(
                    f"{repository} PR #{args.pr} has no round {args.round}"
                    + (f" (recorded: {', '.join(map(str, known))})" if known else " (no rounds recorded)")
                    + f" in {store.url}"
                )
            text = record.report_json if args.format == "json" else record.report_markdown
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            return 0
        rows = store.history(repository, args.pr)
        # Jobs of the GitHub App worker: a round that failed for good is shown with its reason.
        jobs = jobs_of_pr(store.engine, repository, args.pr)
    if args.format == "json":
        doc: dict[str, Any] = {
            "repository": repository,
            "pr": args.pr,
            "rounds": [{**r.history_row(), "created_at": r.created_at.isoformat()} for r in rows],
            "jobs": [j.to_json() for j in jobs],
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    if rows:
        sys.stdout.write(history_table(repository, args.pr, rows))
    else:
        print(f"reviewbot: no rounds recorded for {repository} PR #{args.pr}", file=sys.stderr)
    if jobs:
        sys.stdout.write("\njobs:\n" + jobs_table(jobs))
    return 0
