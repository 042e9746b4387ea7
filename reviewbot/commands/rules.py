"""`reviewbot rules [ID]`: list the checks, or print one rule's documentation."""

from __future__ import annotations

import argparse

from reviewbot.checks.registry import CHECKS, OPT_IN, doc
from reviewbot.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", nargs="?", help="a rule id; without it, list every rule")


def main(args: argparse.Namespace) -> int:
    if args.rule:
        if args.rule not in CHECKS:
            raise UsageError(f"unknown rule {args.rule!r}; `reviewbot rules` lists them")
        print(doc(args.rule))
        return 0
    width = max(len(r) for r in CHECKS)
    for rid, module in CHECKS.items():
        # The severity stays the second word (bench/accuracy.py reads it); an opt-in rule says so after it.
        opt_in = "  (opt-in: off unless [review] enabled names it)" if rid in OPT_IN else ""
        print(f"{rid:<{width}}  {module.severity.value}  {module.summary}{opt_in}")
    return 0
