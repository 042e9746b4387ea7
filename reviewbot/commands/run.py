"""`reviewbot run`: review base...head of a local repository, or a GitHub pull request (`--pr`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from reviewbot.change.git import run_git
from reviewbot.change.staged import staged_commit, upstream_or_head
from reviewbot.commands.db import check_db_url, open_store
from reviewbot.config import CONFIG_PATH
from reviewbot.errors import EnvironmentProblem, UsageError
from reviewbot.execution.execute import ExecSettings, executor
from reviewbot.execution.sandbox import hide_from_sandbox
from reviewbot.lang.cache import FactsCache, open_cache
from reviewbot.model.change import ChangeSet
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.review import Review
from reviewbot.report.render import LANGS, render_json, render_markdown, render_sarif
from reviewbot.report.templating import cache_templates
from reviewbot.report.terminal import render_github, render_text
from reviewbot.review.configured import CallerParts, configured, repo_config
from reviewbot.review.pipeline import ReviewSettings
from reviewbot.runner import RoundOutcome, run_local_round
from reviewbot.settings import Settings, load_settings

__all__ = [
    "add_arguments",
    "main",
    "review_local",
    "emit",
    "render",
    "check_arguments",
    "output_format",
    "fail_level",
    "failing",
]


log = logging.getLogger(__name__)

FORMATS = ("text", "markdown", "json", "sarif", "github")
FAIL_LEVELS = tuple(s.value for s in Severity)


def add_arguments(parser: argparse.ArgumentParser, *, local_only: bool = False) -> None:
    """`reviewbot run`'s options; `local_only` leaves out those that name a change or GitHub
    (`reviewbot example` builds its own change and publishes nothing)."""
    if not local_only:
        parser.add_argument(
            "--path", default=None, help="the git repository (default: the current directory)"
        )
        parser.add_argument("--base", help="base revision (the PR's target)")
        parser.add_argument("--head", help="head revision (the PR's last commit)")
        parser.add_argument(
            "--staged",
            action="store_true",
            help="review the staged change (the index on top of HEAD; for pre-commit); "
            "--base defaults to the branch's upstream, else HEAD",
        )
        parser.add_argument(
            "--pr", type=int, help="pull request number: records rounds, or reviews it on GitHub"
        )
        parser.add_argument("--repo", help="OWNER/NAME on GitHub (default: from the checkout's remote)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text: one line per finding (the default on a terminal); markdown: the PR comment with its "
        "state marker (the default otherwise); json, sarif: everything, for machines; github: GitHub "
        "Actions workflow commands (annotations)",
    )
    parser.add_argument(
        "--lang", choices=LANGS, default=None, help="report language (default: [review] lang, else en)"
    )
    parser.add_argument("--output", "-o", help="write the report to this file instead of stdout")
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="FORMAT=FILE",
        help="also write the report in FORMAT to FILE (repeatable; e.g. sarif=reviewbot.sarif): "
        "one review, several reports",
    )
    parser.add_argument(
        "--fail-level",
        choices=FAIL_LEVELS,
        default=None,
        help="exit 1 when an open finding is at this severity or above (P1: what blocks)",
    )
    parser.add_argument(
        "--fail-on-blocking",
        action="store_true",
        help="exit 1 when the status is BLOCKING (= --fail-level P1)",
    )
    parser.add_argument("--no-tests", action="store_true", help="do not execute the repository's tests")
    parser.add_argument(
        "--checklist", action="append", default=[], help="extra checklist (bundled name or YAML path)"
    )
    if not local_only:
        parser.add_argument("--db", help="rounds database URL (default: db_url of the settings, else SQLite)")
        parser.add_argument("--post", action="store_true", help="publish to GitHub (default: dry run)")
        parser.add_argument("--api-url", help="GitHub API URL (GitHub Enterprise Server)")
    parser.add_argument("--cache-dir", help="where cached clones and parsed facts live")
    parser.add_argument(
        "--no-cache", action="store_true", help="parse every file afresh (no facts cache read or written)"
    )
    parser.add_argument(
        "--config", help="settings file, YAML or .toml (default: $REVIEWBOT_CONFIG); the environment wins"
    )


def settings_for(
    change: ChangeSet,
    args: argparse.Namespace,
    repo: Path,
    facts_cache: FactsCache | None = None,
    lang: str | None = None,
    parts: CallerParts | None = None,
) -> ReviewSettings:
    """Review settings from the base revision's `.reviewbot.toml` (parsed once, here; a bad one is
    a UsageError, exit 2) plus the command line, the round's `lang` (else --lang) and its `parts`
    (runner.LocalClone)."""
    cfg = repo_config(change.base_tree)
    # A local run trusts its user: the repository's tests run unless --no-tests.
    exec_settings = ExecSettings(run_tests=not args.no_tests, trusted=True, repo_config=cfg)
    more: CallerParts = {
        **(parts or {}),
        "execute": executor(repo, exec_settings),
        "facts_cache": facts_cache,
    }
    # --lang wins over the repository's `[review] lang`
    return configured(cfg, lang=lang or args.lang, extra_checklists=args.checklist, **more)


def check_output(output: str) -> None:
    """`-o FILE` must be writable before any work starts: a report lost at the end is an hour lost."""
    path = Path(output).expanduser()
    if path.is_dir():
        raise UsageError(f"-o {output}: is a directory; name the file to write the report to")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"-o {output}: the directory {parent} does not exist")
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise UsageError(f"-o {output}: {target} is not writable")


def check_path(path: str | None) -> None:
    """`--path` names an existing directory (a missing one is not "not a git repository")."""
    if path is None:
        return
    where = Path(path).expanduser()
    if not where.exists():
        raise UsageError(f"--path {path}: no such directory")
    if not where.is_dir():
        raise UsageError(f"--path {path}: not a directory; give the repository's directory")


def check_staged_config(repo: Path, base: str, head: str) -> None:
    """A commit that changes `.reviewbot.toml` gets it checked as `reviewbot config check` does (the
    review itself reads the base's file: a mistake in the new one would show only once merged).
    pre-commit stashes what is not staged, so the working tree's file is the one being committed."""
    changed = run_git(repo, ["diff", "--name-only", base, head, "--", CONFIG_PATH]).stdout.strip()
    if changed and (repo / CONFIG_PATH).is_file():
        from reviewbot.commands.config import check_config

        check_config(str(repo))


def check_arguments(args: argparse.Namespace) -> None:
    """What would fail late, or be ignored silently, is refused before the analysis starts: one line,
    exit 2, nothing written."""
    check_path(getattr(args, "path", None))
    if args.pr is not None and args.pr < 1:
        raise UsageError(f"--pr must be a pull request number (1 or more), not {args.pr}")
    if args.post and (args.base or args.head):
        raise UsageError(
            "--post publishes a pull request's review on GitHub: give --pr N (and --repo OWNER/NAME) "
            "without --base/--head"
        )
    if args.output:
        check_output(args.output)
    for _fmt, file in also_outputs(args):
        check_output(file)
    if args.db is not None:
        check_db_url(args.db)


def also_outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """`--also FORMAT=FILE` pairs; a bad one is a UsageError (exit 2) before any work."""
    out: list[tuple[str, str]] = []
    for spec in getattr(args, "also", None) or []:
        fmt, sep, file = spec.partition("=")
        if not sep or fmt not in FORMATS or not file:
            raise UsageError(f"--also {spec}: give FORMAT=FILE, FORMAT one of {', '.join(FORMATS)}")
        out.append((fmt, file))
    return out


def review_local(args: argparse.Namespace, settings: Settings | None = None) -> RoundOutcome:
    """One local review; with --pr it is recorded as the next round of that PR in the store."""
    repo = Path(args.path or ".").resolve()
    settings = settings if settings is not None else load_settings(getattr(args, "config", None))
    store = open_store(args.db or settings.database_url) if args.pr is not None else None
    cache_dir = Path(args.cache_dir).expanduser() if getattr(args, "cache_dir", None) else settings.cache_dir
    facts = None if getattr(args, "no_cache", False) else open_cache(cache_dir, settings.facts_cache_mb)
    cache_templates(cache_dir if facts is not None else None)
    try:
        return run_local_round(
            repo,
            args.base,
            args.head,
            args.pr,
            store,
            lambda change, lang, parts: settings_for(change, args, repo, facts, lang, parts),
            args.lang,  # None: the repository's `[review] lang`, else en
            repository=args.repo,
            budget=settings.budget,
        )
    finally:
        if store is not None:
            store.close()


def output_format(args: argparse.Namespace, stream: TextIO | None = None) -> str:
    """--format, else by destination: `text` on a terminal, the markdown comment anywhere else (a
    file, a pipe, CI logs: what earlier versions always wrote)."""
    if getattr(args, "format", None):
        return str(args.format)
    stream = stream if stream is not None else sys.stdout
    return "text" if not getattr(args, "output", None) and _isatty(stream) else "markdown"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_colour(args: argparse.Namespace, stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    stream = stream if stream is not None else sys.stdout
    if getattr(args, "output", None) or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def fail_level(args: argparse.Namespace) -> Severity | None:
    """The least severe level that fails the run: --fail-level, else P1 with --fail-on-blocking (the
    more inclusive of the two when both are given)."""
    levels = [Severity(args.fail_level)] if getattr(args, "fail_level", None) else []
    if getattr(args, "fail_on_blocking", False):
        levels.append(Severity.P1)
    return max(levels, key=lambda s: s.rank) if levels else None


def failing(review: Review, level: Severity | None) -> list[Finding]:
    """The open (not dismissed) findings at `level` or above."""
    if level is None:
        return []
    return [f for f in review.findings if f.dismissal is None and f.severity.rank <= level.rank]


def render(review: Review, fmt: str, lang: str, markdown: str | None = None, *, colour: bool = False) -> str:
    """The report in `fmt` (one of FORMATS)."""
    if fmt == "json":
        return json.dumps(render_json(review), indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        return json.dumps(render_sarif(review), indent=2) + "\n"
    if fmt == "text":
        return render_text(review, lang, colour=colour)
    if fmt == "github":
        return render_github(review, lang)
    return markdown if markdown is not None else render_markdown(review, lang)


def emit(
    review: Review, args: argparse.Namespace, markdown: str | None = None, lang: str | None = None
) -> int:
    clock = time.perf_counter()
    fmt = output_format(args)
    text = render(review, fmt, lang or args.lang or "en", markdown, colour=fmt == "text" and use_colour(args))
    review.kpi.setdefault("timings_ms", {})["render"] = round((time.perf_counter() - clock) * 1000, 1)
    log_timings(review, args)
    if args.output:
        _write(args.output, text)
    else:
        sys.stdout.write(text)
    for other, file in also_outputs(args):
        _write(file, render(review, other, lang or args.lang or "en", markdown))
    return 1 if failing(review, fail_level(args)) else 0


def _write(file: str, text: str) -> None:
    try:
        Path(file).expanduser().write_text(text, encoding="utf-8")
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write the report to {file}: {exc.strerror or exc}") from exc


def reviewed(args: argparse.Namespace) -> str:
    """What was reviewed, for a log line: `PR #12 (base..head)`, or the range alone."""
    span = f"{args.base}..{args.head}" if getattr(args, "base", None) else ""
    if getattr(args, "pr", None) is not None:
        return f"PR #{args.pr}" + (f" ({span})" if span else "")
    return span or "the change"


def log_timings(review: Review, args: argparse.Namespace) -> None:
    """`-v`: one line with what was reviewed, the verdict and each stage's time (stderr)."""
    if not log.isEnabledFor(logging.INFO):
        return
    timings = review.kpi.get("timings_ms", {})
    stages = ", ".join(f"{k} {v:.0f} ms" for k, v in timings.items() if isinstance(v, int | float))
    total = sum(v for v in timings.values() if isinstance(v, int | float)) / 1000
    log.info(
        "reviewed %s: %s, %d finding(s) in %.1f s (%s)",
        reviewed(args),
        review.status.value,
        len(review.findings),
        total,
        stages,
    )


def main(args: argparse.Namespace) -> int:
    # The process settings (environment over --config / $REVIEWBOT_CONFIG), checked before any work.
    settings = load_settings(args.config)
    # The repository's tests run in a sandbox: it must not see what the settings name (key, store...).
    hide_from_sandbox(settings.private_paths())
    check_arguments(args)
    if getattr(args, "staged", False):
        if args.head or args.pr is not None:
            raise UsageError("--staged reviews the index: give no --head or --pr with it")
        repo = Path(args.path or ".").resolve()
        args.head = staged_commit(repo)
        args.base = args.base or upstream_or_head(repo)
        check_staged_config(repo, args.base, args.head)
    if args.base or args.head:
        if not (args.base and args.head):
            raise UsageError("give both --base and --head (or --pr N for a GitHub pull request)")
        outcome = review_local(args, settings)
        return emit(outcome.review, args, outcome.markdown, outcome.lang)
    if args.pr is not None:
        from reviewbot.commands import github_run

        return github_run.main(args, settings)
    raise UsageError("nothing to review: give --base REV --head REV, or --pr N")
