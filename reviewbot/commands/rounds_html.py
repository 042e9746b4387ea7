"""`reviewbot rounds --pr N --html FILE [--lang zh]`: the round history as one self-contained HTML page.

The page (report.history_html) is the one `reviewbot serve` shows at /prs/{owner}/{repo}/{n}. The file is
checked for writability before the store is read; a PR without rounds writes nothing (exit 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reviewbot.commands.rounds import repository_of
from reviewbot.errors import EnvironmentProblem, UsageError

__all__ = ["write_page"]


def _check_html(output: str) -> None:
    """One line and exit 2 before any work when the page could not be written."""
    path = Path(output).expanduser()
    if path.is_dir():
        raise UsageError(f"--html {output}: is a directory; name the file to write the page to")
    if not path.parent.is_dir():
        raise UsageError(f"--html {output}: the directory {path.parent} does not exist")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise UsageError(f"--html {output}: not writable")


def write_page(args: argparse.Namespace) -> int:
    """Write the PR's history page to `args.html` in `args.lang`."""
    from reviewbot.report.history_html import render_history_html
    from reviewbot.store.history_page import load_history
    from reviewbot.store.store import Store

    if args.round is not None or args.format is not None:
        raise UsageError("--html writes the whole history as one page: leave out --round and --format")
    _check_html(args.html)
    repository = repository_of(args)
    with Store.open(args.db) as store:
        history = load_history(store, repository, args.pr)
        where = store.url
    if history is None:
        raise UsageError(f"{repository} PR #{args.pr} has no rounds recorded in {where}; no page written")
    try:
        Path(args.html).expanduser().write_text(render_history_html(history, args.lang), encoding="utf-8")
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write the page to {args.html}: {exc.strerror or exc}") from exc
    print(
        f"reviewbot: wrote {len(history.rounds)} round(s) of {repository} PR #{args.pr} to {args.html}",
        file=sys.stderr,
    )
    return 0
