"""`reviewbot run --pr N [--repo OWNER/NAME] [--post]`: review a GitHub pull request.

Without `--post` it is a dry run: it prints exactly what it would publish (the summary comment,
the review with its inline comments, the check run) and sends no write request. Credentials come
from the settings (reviewbot.settings: the environment over --config / $REVIEWBOT_CONFIG):
GITHUB_TOKEN, or REVIEWBOT_APP_ID + REVIEWBOT_PRIVATE_KEY_PATH for a GitHub App;
REVIEWBOT_API_URL / --api-url points at GitHub Enterprise Server.

Exit codes: 0 done (or skipped, said on stderr); 1 a finding at --fail-level or above (P1 with
--fail-on-blocking); 2 usage;
3 GitHub refused, or its rate limit stopped the round (INCOMPLETE; stderr says when to retry).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NotRequired, TypedDict

from reviewbot.commands.run import fail_level, failing, output_format
from reviewbot.errors import UsageError
from reviewbot.github.client import ApiKpi
from reviewbot.github.dryrun import PlanJson, plan_json, plan_text
from reviewbot.github.round import PrRoundOutcome, run_pr_round
from reviewbot.github.settings import GitHubSettings
from reviewbot.report.render import render_sarif
from reviewbot.report.terminal import render_github
from reviewbot.runner import owner_name
from reviewbot.settings import Settings

__all__ = ["main", "repo_from_checkout", "settings_from_args"]

EXIT_INCOMPLETE = 3


class PublishedJson(TypedDict):
    steps: list[str]
    notes: list[str]
    comment_url: str | None


class RunJson(TypedDict):
    """`reviewbot run --pr N --format json`: the round, its plan, what was published."""

    status: str  # github.sink.Publication
    repository: str
    pr: int
    head_sha: str | None
    api: ApiKpi
    code_source: str  # "" when the round never got to the code
    review: Mapping[str, object] | None  # the round's JSON document (reviewbot.report)
    plan: PlanJson | None
    published: NotRequired[PublishedJson]


def repo_from_checkout(path: Path) -> str:
    """OWNER/NAME of the checkout's `origin` remote (https, ssh or scp-like URL)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(path), "config", "--get", "remote.origin.url"], capture_output=True, text=True
        )
    except OSError:
        proc = None
    name = owner_name(proc.stdout) if proc is not None and proc.returncode == 0 else None
    if name is None:
        raise UsageError(
            f"cannot tell the GitHub repository: {path} has no origin remote of the form OWNER/NAME; "
            "give --repo OWNER/NAME"
        )
    return name


def settings_from_args(args: argparse.Namespace, settings: Settings) -> GitHubSettings:
    """The round's GitHub settings: the process settings, the command line over them. A person
    asked for this PR: a draft is reviewed, and a bad `.reviewbot.toml` is an error (exit 2)."""
    cache = getattr(args, "cache_dir", None)
    overrides = {
        "api_url": getattr(args, "api_url", None),
        "db_url": getattr(args, "db", None),
        "cache_dir": Path(cache).expanduser() if cache else None,
        "lang": getattr(args, "lang", None),
        "run_tests": False if getattr(args, "no_tests", False) else None,
        "extra_checklists": tuple(getattr(args, "checklist", None) or ()) or None,
    }
    # from_settings drops the None values: an option not given leaves the setting as it is.
    return GitHubSettings.from_settings(settings, review_drafts=True, repo_config_errors="raise", **overrides)


def _text(outcome: PrRoundOutcome, fmt: str) -> str:
    if fmt == "sarif":
        assert outcome.review is not None
        return json.dumps(render_sarif(outcome.review), indent=2) + "\n"
    if fmt == "github":
        assert outcome.review is not None
        return render_github(outcome.review)
    if fmt == "json":
        doc = RunJson(
            status=outcome.status,
            repository=outcome.repo,
            pr=outcome.pr,
            head_sha=outcome.head_sha,
            api=outcome.api,
            code_source=outcome.code_source or "",
            review=outcome.json,
            plan=plan_json(outcome.plan) if outcome.plan else None,
        )
        if outcome.published is not None:
            doc["published"] = PublishedJson(
                steps=outcome.published.steps,
                notes=outcome.published.notes,
                comment_url=outcome.published.comment.html_url if outcome.published.comment else None,
            )
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if outcome.status == "dry_run":
        assert outcome.plan is not None
        return plan_text(outcome.plan)
    published = outcome.published
    lines = [
        f"published round {outcome.round_index} of {outcome.repo}#{outcome.pr} "
        f"({outcome.review.status.value if outcome.review else '?'}):"
    ]
    lines += [f"  - {step}" for step in (published.steps if published else [])]
    lines += [f"  ! {note}" for note in (published.notes if published else [])]
    if published and published.comment:
        lines.append(f"  {published.comment.html_url}")
    a = outcome.api
    lines.append(
        f"  GitHub API: {a.get('api_calls')} request(s) ({a.get('api_reads')} reads, "
        f"{a.get('api_writes')} writes, {a.get('api_retries')} retries)"
    )
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace, settings: Settings) -> int:
    if getattr(args, "pr", None) is None:
        raise UsageError("give --pr N (the pull request number)")
    repo = args.repo or repo_from_checkout(Path(getattr(args, "path", None) or "."))
    if "/" not in repo or repo.count("/") != 1:
        raise UsageError(f"--repo must be OWNER/NAME, not {repo!r}")
    github = settings_from_args(args, settings)
    started = time.perf_counter()
    outcome = run_pr_round(github, repo, args.pr, post=bool(getattr(args, "post", False)))
    if outcome.status == "skipped":
        print(f"reviewbot: {repo}#{args.pr} skipped: {outcome.reason}", file=sys.stderr)
        return 0
    if outcome.status == "incomplete":
        print(f"reviewbot: {repo}#{args.pr} INCOMPLETE: {outcome.reason}", file=sys.stderr)
        return EXIT_INCOMPLETE
    # text and markdown alike: what the round posts (a dry run) or posted, in words.
    text = _text(outcome, output_format(args))
    if getattr(args, "output", None):
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if outcome.published is not None:
        for note in outcome.published.notes:
            print(f"reviewbot: {note}", file=sys.stderr)
    print(f"reviewbot: {outcome.status} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    review = outcome.review
    return 1 if review is not None and failing(review, fail_level(args)) else 0
