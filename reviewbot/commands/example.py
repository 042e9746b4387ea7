"""`reviewbot example`: build the bundled example repository and review its pull request.

The repository is built in a temporary directory that is removed afterwards, unless `--dest DIR`
names where to keep it. It takes `reviewbot run`'s report options, not those that name a change or
GitHub (the example is its own change and publishes nothing).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from reviewbot.commands import run
from reviewbot.example import build_example


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run.add_arguments(parser, local_only=True)
    parser.add_argument("--round", type=int, choices=(1, 2), default=1, help="which head of the example PR")
    parser.add_argument(
        "--dest", help="build the example repository here and keep it (default: a temporary one)"
    )


def main(args: argparse.Namespace) -> int:
    # What `run` reads of the options the example does not offer: a local review, nothing recorded.
    for name, value in {"pr": None, "repo": None, "db": None, "post": False, "api_url": None}.items():
        setattr(args, name, value)
    args.staged = False
    temporary = None if args.dest else Path(tempfile.mkdtemp(prefix="reviewbot-example-"))
    try:
        dest = Path(args.dest) if temporary is None else temporary / "repo"
        example = build_example(dest)
        args.path = str(example.path)
        args.base = example.base
        args.head = example.round1 if args.round == 1 else example.round2
        where = str(example.path) if args.dest else "a temporary directory (--dest DIR keeps it)"
        print(
            f"reviewbot: example repository in {where} (base {example.base[:12]}, head {args.head[:12]})",
            file=sys.stderr,
        )
        return run.main(args)
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
