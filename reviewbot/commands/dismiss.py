"""`reviewbot dismiss`: set a finding of a pull request aside, with a reason, for its later rounds.

reviewbot dismiss --pr 1361 3f2a9c1e --reason "covered by the integration suite"
reviewbot dismiss --pr 7 --repo acme/x --db postgresql://... 3f2a --reason "..."

The prefix is matched against the open findings of the PR's latest recorded round (at least 4 hex
digits; ambiguous or unknown: one line, exit 2). From the next round on the finding is shown as
dismissed with the reason and who dismissed it, and no longer counts toward BLOCKING or the check
run, while its fingerprint holds. On GitHub, `/reviewbot dismiss <prefix> <reason>` does the same.
"""

from __future__ import annotations

import argparse
import getpass

from reviewbot.commands.rounds import repository_of
from reviewbot.errors import UsageError

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prefix", metavar="FINGERPRINT", help="the finding's fingerprint or a prefix of it")
    parser.add_argument(
        "--reason", required=True, help="why the finding does not apply (shown in the report)"
    )
    parser.add_argument("--pr", type=int, required=True, help="pull request number")
    parser.add_argument(
        "--repo", help="OWNER/NAME as recorded (default: from the checkout's origin, else its path)"
    )
    parser.add_argument("--path", default=None, help="the checkout that names the repository (default: .)")
    parser.add_argument(
        "--db", help="rounds database URL (default: $REVIEWBOT_DB_URL or the state directory)"
    )
    parser.add_argument("--by", default=None, help="who dismisses it (default: the local user name)")


def main(args: argparse.Namespace) -> int:
    from reviewbot.commands.db import check_db_url, open_store
    from reviewbot.store.dismissals import match_prefix, record_dismissal

    if args.pr < 1:
        raise UsageError(f"--pr must be a pull request number (1 or more), not {args.pr}")
    if not args.reason.strip():
        raise UsageError("--reason is empty: say why the finding does not apply")
    if args.db is not None:
        check_db_url(args.db)
    repository = repository_of(args)
    by = args.by or getpass.getuser()
    with open_store(args.db) as store:
        latest = store.latest_round(repository, args.pr)
        if latest is None:
            raise UsageError(f"{repository} PR #{args.pr} has no rounds recorded in {store.url}")
        where = f"round {latest.round_index} of {repository} PR #{args.pr}"
        finding = match_prefix(latest.open_findings, args.prefix, where)
        dismissal = record_dismissal(
            store.engine, repository, args.pr, finding, reason=args.reason, by=by, source="cli"
        )
    print(
        f"dismissed {finding.fingerprint} [{finding.severity.value}] {finding.rule} @ "
        f"{finding.path}:{finding.line} by {dismissal.by}: {dismissal.reason} "
        f"(from the next round of {repository} PR #{args.pr} on)"
    )
    return 0
