"""Command line: parse arguments and dispatch; errors become exit codes in one place.

Exit codes: 0 report produced; 1 a finding at --fail-level or above (--fail-on-blocking: P1); 2 usage
or environment error; 3 reviewbot error; 130 interrupted (SIGINT), 143 terminated (SIGTERM). Either signal kills
every running test sandbox first (`reviewbot.execution.reaper`): they run in their own session.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys
from collections.abc import Sequence

from reviewbot import __version__
from reviewbot.errors import ReviewbotError
from reviewbot.execution.reaper import killed_on_signals

__all__ = ["main"]

# name -> (module, help). Modules are imported on use so `reviewbot run` does not load the web stack.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("reviewbot.commands.run", "review a change (local --base/--head, or a GitHub PR with --pr)"),
    "example": ("reviewbot.commands.example", "build the bundled example and review it"),
    "rounds": ("reviewbot.commands.rounds", "show the round history of a pull request"),
    "dismiss": ("reviewbot.commands.dismiss", "dismiss a finding of a pull request, with a reason"),
    "rules": ("reviewbot.commands.rules", "list the checks or print one rule's documentation"),
    "config": ("reviewbot.commands.config", "check a working tree's .reviewbot.toml (`config check [PATH]`)"),
    "serve": ("reviewbot.commands.serve", "run the GitHub App webhook server"),
    "worker": ("reviewbot.commands.worker", "run the queue worker"),
}


def _parser(only: str | None) -> tuple[argparse.ArgumentParser, dict[str, object]]:
    """The argument parser; only the module of the command `only` names is imported (none for
    `reviewbot --help`, which lists the commands: the web stack and the store load in seconds)."""
    parser = argparse.ArgumentParser(
        prog="reviewbot", description="Deterministic review of config-derivation code."
    )
    parser.add_argument("--version", action="version", version=f"reviewbot {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules: dict[str, object] = {}
    for name, (module_name, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if name != only:
            continue
        module = importlib.import_module(module_name)
        modules[name] = module
        module.add_arguments(command)
    return parser, modules


def _command_in(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


# The cyclic garbage collector's youngest generation is collected every 700 allocations by default;
# a review allocates millions of small objects that form no cycles (facts unpickled from the cache,
# tree-sitter walks), and those collections took half of the time of unpickling a warm review's
# facts (0.15 s -> 0.07 s with the collector off). A larger first threshold, as mypy sets for the
# same reason, leaves collection on but rare: PR #1361 warm 0.84 s -> 0.80 s.
GC_THRESHOLDS = (200_000, 30, 30)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Ctrl-C while the command's modules load (before its own handler is in place): no traceback.
        print("reviewbot: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    gc.set_threshold(*GC_THRESHOLDS)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, modules = _parser(_command_in(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help exits 0, bad usage exits 2
        return int(exc.code or 0)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    try:
        with killed_on_signals():
            return int(modules[args.command].main(args))  # type: ignore[attr-defined]
    except ReviewbotError as exc:
        print(f"reviewbot: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        code = int(getattr(exc, "exit_code", 130))
        print("reviewbot: interrupted" if code == 130 else "reviewbot: terminated", file=sys.stderr)
        return code


if __name__ == "__main__":
    raise SystemExit(main())
