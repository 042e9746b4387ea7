"""Where a GitHub round gets the code from, and the review settings that go with it
(`PullRequestCode`, the `review.round.CodeSource` of a GitHub round).

Normally the cached git workspace (whole files, the whole repository for the index); when git is
unavailable or the fetch fails, the API's patches (reviewbot.github.fallback), and the report says
what that could not see.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from reviewbot.change.diff import load_change
from reviewbot.config import RepoConfig, RepoConfigError
from reviewbot.errors import EnvironmentProblem, GitError
from reviewbot.github.api import PullRequestInfo, RestApi
from reviewbot.github.fallback import change_from_api
from reviewbot.github.permissions import WRITE_ROLES
from reviewbot.github.settings import GitHubSettings
from reviewbot.github.workspace import GitWorkspace
from reviewbot.lang.cache import open_cache
from reviewbot.model.change import Note, SkipReason
from reviewbot.report.templating import cache_templates
from reviewbot.review.configured import configured, repo_config
from reviewbot.review.pipeline import ReviewSettings
from reviewbot.review.round import Code, CodeOrigin

__all__ = ["Code", "PullRequestCode", "load_code", "review_settings"]

log = logging.getLogger(__name__)


def load_code(settings: GitHubSettings, api: RestApi, pr: PullRequestInfo, git_token: str | None) -> Code:
    """The PR's change from the cached clone, or from the API when git cannot get it."""
    reason = "git is turned off for this round"
    if settings.use_git:
        started = time.perf_counter()
        try:
            checkout = GitWorkspace(settings.cache_root, timeout=settings.git_timeout).prepare(
                api_url=settings.api_url,
                repo=pr.repo,
                clone_url=pr.clone_url,
                pr_number=pr.number,
                base_sha=pr.base_sha,
                head_sha=pr.head_sha,
                base_ref=pr.base_ref,
                token=git_token,
            )
            change = load_change(checkout.path, pr.base_sha, pr.head_sha)
            fetch_ms = (time.perf_counter() - started) * 1000
            return Code(change, checkout.path, CodeOrigin.GIT, checkout.partial, fetch_ms)
        except (EnvironmentProblem, GitError) as exc:
            reason = str(exc)
            log.warning(
                "%s #%d: git could not provide the code (%s); using the API's patches",
                pr.repo,
                pr.number,
                reason,
            )
    return Code(change_from_api(api, pr, reason), None, CodeOrigin.API)


def review_settings(
    settings: GitHubSettings,
    code: Code,
    pr: PullRequestInfo,
    author_role: Callable[[str], str] | None = None,
) -> ReviewSettings:
    """The core's settings: the base revision's `.reviewbot.toml`, plus test execution when allowed.

    The PR's code runs only for authors with write permission on the repository, as GitHub answers
    it (`author_role`: github.permissions, asked only when tests would run; without it, as for
    callers that cannot ask, `trusted_associations` of the payload), only from a git checkout, and
    only in a confining sandbox (bwrap or unshare; never unconfined), with the App key, the clone
    cache and the store hidden.
    """
    try:
        cfg = repo_config(code.change.base_tree)
        notes: tuple[Note, ...] = ()
    except RepoConfigError as exc:
        if settings.repo_config_errors == "raise":
            raise
        # Never silently ignored: the defaults review the PR, the report says why, the verdict is
        # INCOMPLETE (a neutral check run) and no test runs on a [tests] table nobody could read.
        cfg = RepoConfig()
        notes = (Note(SkipReason.BAD_CONFIG, f"{exc}; this round used the defaults and ran no tests."),)
    facts = open_cache(settings.cache_root, settings.facts_cache_mb)
    cache_templates(settings.cache_root if facts is not None else None)
    out = configured(
        cfg,
        lang=settings.lang,  # the operator's choice, else the repository's
        extra_checklists=settings.extra_checklists,
        notes=notes,
        timings_ms={"fetch": round(code.fetch_ms, 1)} if code.fetch_ms else {},
        facts_cache=facts,
        budget=settings.budget,
    )
    if settings.now is not None:
        out = replace(out, now=settings.now)
    if settings.run_tests and code.repo_path is not None and not notes:
        from reviewbot.execution.execute import ExecSettings, executor
        from reviewbot.execution.sandbox import CONFINING_SANDBOXES, hide_from_sandbox, sqlite_file

        # Paths these settings name beyond the environment's (which the sandbox hides anyway).
        hide_from_sandbox([settings.private_key_path, settings.cache_root, sqlite_file(settings.db_url)])

        if author_role is not None:
            role = author_role(pr.user)
            trusted = role in WRITE_ROLES
            why = (
                f"the PR author {pr.user} has {role} permission on the repository; "
                "tests run only for authors with write permission"
            )
        else:
            trusted = pr.author_association in settings.trusted_associations
            why = (
                f"the PR author's association with the repository is {pr.author_association}; "
                f"tests run only for {', '.join(sorted(settings.trusted_associations))}"
            )
        # The author's code must never run unconfined here: an unconfined test could read the worker's
        # environment (/proc) and files, the App key among them, and reach the network.
        exec_settings = ExecSettings(
            trusted=trusted,
            not_trusted_reason=why,
            allowed_sandboxes=CONFINING_SANDBOXES,
            repo_config=cfg,
            env_allowed=frozenset(settings.tests_env),  # the operator's, never the repository's alone
        )
        out = replace(out, execute=executor(code.repo_path, exec_settings))
    return out


@dataclass(frozen=True)
class PullRequestCode:
    """PR `pr`'s code (`load_code`) with its settings (`review_settings`; `author_role` asks GitHub
    who the author is when tests would run)."""

    github: GitHubSettings
    api: RestApi
    pr: PullRequestInfo
    git_token: str | None
    author_role: Callable[[str], str] | None = None

    def load(self) -> Code:
        return load_code(self.github, self.api, self.pr, self.git_token)

    def settings(self, code: Code) -> ReviewSettings:
        return review_settings(self.github, code, self.pr, self.author_role)
