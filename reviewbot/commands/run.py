"""`reviewbot run`: review base...head of a local repository, or a GitHub pull request (`--pr`)."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reviewbot.change.staged import staged_commit, upstream_or_head
from reviewbot.checks.registry import KNOWN_RULES
from reviewbot.config import load_repo_config
from reviewbot.errors import EnvironmentProblem, StoreError, UsageError
from reviewbot.execution.execute import ExecSettings, executor
from reviewbot.execution.sandbox import hide_from_sandbox
from reviewbot.lang.cache import FactsCache, open_cache
from reviewbot.model.change import ChangeSet
from reviewbot.model.review import Review, Status
from reviewbot.report.render import LANGS, render_json, render_markdown, render_sarif
from reviewbot.report.templating import cache_templates
from reviewbot.review.checklist import bundled_names
from reviewbot.review.pipeline import ReviewSettings
from reviewbot.runner import RoundOutcome, run_local_round
from reviewbot.settings import Settings, load_settings

if TYPE_CHECKING:
    from reviewbot.store.store import Store

__all__ = ["add_arguments", "main", "review_local", "emit", "check_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--path", default=None, help="the git repository (default: the current directory)")
    parser.add_argument("--base", help="base revision (the PR's target)")
    parser.add_argument("--head", help="head revision (the PR's last commit)")
    parser.add_argument(
        "--staged",
        action="store_true",
        help="review the staged change (the index on top of HEAD; for pre-commit); "
        "--base defaults to the branch's upstream, else HEAD",
    )
    parser.add_argument("--pr", type=int, help="pull request number: records rounds, or reviews it on GitHub")
    parser.add_argument("--repo", help="OWNER/NAME on GitHub (default: from the checkout's remote)")
    parser.add_argument("--format", choices=("markdown", "json", "sarif"), default="markdown")
    parser.add_argument("--lang", choices=LANGS, default="en")
    parser.add_argument("--output", "-o", help="write the report to this file instead of stdout")
    parser.add_argument("--fail-on-blocking", action="store_true", help="exit 1 when the status is BLOCKING")
    parser.add_argument("--no-tests", action="store_true", help="do not execute the repository's tests")
    parser.add_argument(
        "--checklist", action="append", default=[], help="extra checklist (bundled name or YAML path)"
    )
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
    change: ChangeSet, args: argparse.Namespace, repo: Path, facts_cache: FactsCache | None = None
) -> ReviewSettings:
    """Review settings from the base revision's `.reviewbot.toml` (parsed once, here; a bad one is
    a UsageError, exit 2) plus the command line."""
    cfg = load_repo_config(change.base_tree, rules=KNOWN_RULES, checklists=bundled_names())
    names = list(dict.fromkeys([*cfg.checklists, *args.checklist]))
    # A local run trusts its user: the repository's tests run unless --no-tests.
    exec_settings = ExecSettings(run_tests=not args.no_tests, trusted=True, repo_config=cfg)
    return ReviewSettings(
        lang=args.lang,
        checklists=names,
        checklist_texts=dict(cfg.repo_checklists),
        disabled_rules=cfg.disabled,
        exclude=cfg.exclude,
        execute=executor(repo, exec_settings),
        facts_cache=facts_cache,
    )


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


def check_db_url(url: str) -> None:
    """`--db` names a database by URL; a bare word is refused, not made a SQLite file in the cwd."""
    if "://" not in url:
        raise UsageError(
            f"--db wants a database URL such as sqlite:///PATH/rounds.db or postgresql://USER@HOST/DB, "
            f"not {url!r}"
        )
    from reviewbot.store.db import engine_url  # SQLAlchemy: loaded only when a database is named

    try:
        parsed = engine_url(url)
    except StoreError as exc:
        raise UsageError(str(exc)) from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise UsageError(f"--db: {backend} databases are not supported; use sqlite:/// or postgresql://")
    if backend == "sqlite" and parsed.database not in (None, "", ":memory:"):
        file = Path(str(parsed.database)).expanduser()
        if file.is_dir():
            raise UsageError(f"--db {url}: {file} is a directory, not a database file")
        if not file.parent.is_dir():
            raise UsageError(f"--db {url}: the directory {file.parent} does not exist")
        if file.exists():
            _probe_sqlite(url, file)


def _probe_sqlite(url: str, file: Path) -> None:
    """Read an existing SQLite file's schema without writing to it: a file that is not a database
    fails here, before the review, whichever path (local or GitHub) opens it later."""
    try:
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            conn.execute("PRAGMA schema_version").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise EnvironmentProblem(f"cannot open the rounds database {url}: {exc}") from exc


def open_store(url: str) -> Store:
    """The rounds store; one that cannot be opened is the user's to fix (exit 2), not a crash."""
    from reviewbot.store.store import Store

    try:
        return Store.open(url)
    except StoreError as exc:
        raise EnvironmentProblem(str(exc)) from exc


def check_arguments(args: argparse.Namespace) -> None:
    """What would fail late, or be ignored silently, is refused before the analysis starts: one line,
    exit 2, nothing written."""
    if args.pr is not None and args.pr < 1:
        raise UsageError(f"--pr must be a pull request number (1 or more), not {args.pr}")
    if args.post and (args.base or args.head):
        raise UsageError(
            "--post publishes a pull request's review on GitHub: give --pr N (and --repo OWNER/NAME) "
            "without --base/--head"
        )
    if args.output:
        check_output(args.output)
    if args.db is not None:
        check_db_url(args.db)


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
            lambda change: settings_for(change, args, repo, facts),
            args.lang,
            repository=args.repo,
            budget=settings.budget,
        )
    finally:
        if store is not None:
            store.close()


def emit(review: Review, args: argparse.Namespace, markdown: str | None = None) -> int:
    clock = time.perf_counter()
    if args.format == "json":
        text = json.dumps(render_json(review), indent=2, ensure_ascii=False) + "\n"
    elif args.format == "sarif":
        text = json.dumps(render_sarif(review), indent=2) + "\n"
    else:
        text = markdown if markdown is not None else render_markdown(review, args.lang)
    review.kpi.setdefault("timings_ms", {})["render"] = round((time.perf_counter() - clock) * 1000, 1)
    if args.output:
        try:
            Path(args.output).expanduser().write_text(text, encoding="utf-8")
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot write the report to {args.output}: {exc.strerror or exc}"
            ) from exc
    else:
        sys.stdout.write(text)
    if args.fail_on_blocking and review.status is Status.BLOCKING:
        return 1
    return 0


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
    if args.base or args.head:
        if not (args.base and args.head):
            raise UsageError("give both --base and --head (or --pr N for a GitHub pull request)")
        outcome = review_local(args, settings)
        return emit(outcome.review, args, outcome.markdown)
    if args.pr is not None:
        from reviewbot.commands import github_run

        return github_run.main(args, settings)
    raise UsageError("nothing to review: give --base REV --head REV, or --pr N")
