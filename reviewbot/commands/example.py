"""`reviewbot example`: build the bundled example repository and review its pull request."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from reviewbot.commands import run
from reviewbot.example import build_example


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run.add_arguments(parser)
    parser.add_argument("--round", type=int, choices=(1, 2), default=1, help="which head of the example PR")
    parser.add_argument("--dest", help="build the example repository here (default: a temporary directory)")


def main(args: argparse.Namespace) -> int:
    dest = Path(args.dest) if args.dest else Path(tempfile.mkdtemp(prefix="reviewbot-example-")) / "repo"
    example = build_example(dest)
    args.path = str(example.path)
    args.base = example.base
    args.head = example.round1 if args.round == 1 else example.round2
    print(
        f"reviewbot: example repository at {example.path} (base {example.base[:12]}, head {args.head[:12]})",
        file=sys.stderr,
    )
    return run.main(args)
