"""How a GitHub round talks to GitHub: credentials, endpoints, retry and rate-limit policy, limits.

Built from the process settings (`GitHubSettings.from_settings`: the App worker, and `reviewbot run
--pr` through `from_env`), or directly in tests. The environment and the config file are read only
by `reviewbot.settings.load_settings`. Secrets never appear in `repr`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reviewbot.errors import UsageError
from reviewbot.model.budget import DEFAULT_BUDGET, RoundBudget
from reviewbot.settings import (
    DEFAULT_API_URL,
    Settings,
    load_settings,
    redact_url,
    require_github_credentials,
)

__all__ = ["GitHubSettings", "DEFAULT_API_URL", "LEFT_OUT_CONCLUSIONS", "REPO_CONFIG_ERRORS"]

TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
# What a bad .reviewbot.toml does to a round: "note" (the App) reviews with the defaults, says so in
# the report and concludes the check run neutral; "raise" (the command line) fails with the problem.
REPO_CONFIG_ERRORS = ("note", "raise")
# What `left_out_conclusion` may be (reviewbot.github.plan applies it).
LEFT_OUT_CONCLUSIONS = ("failure", "action_required")


@dataclass(frozen=True, repr=False)
class GitHubSettings:
    api_url: str = DEFAULT_API_URL
    token: str | None = None  # GITHUB_TOKEN: a personal, OAuth or Actions token
    app_id: int | None = None  # with a private key: authenticate as a GitHub App installation
    private_key_path: Path | None = None
    private_key: str | None = None  # PEM text; wins over private_key_path (secret stores, tests)
    bot_login: str | None = None  # the bot's login when it cannot be asked (e.g. an Actions token)
    db_url: str | None = None  # rounds store; None: the store's default (SQLite in the state dir)
    record_rounds: bool = True  # record published rounds in the store
    cache_dir: Path | None = None  # cached clones; None: the settings' cache directory
    facts_cache_mb: int = 256  # the parsed-facts cache in the cache directory; 0: none
    budget: RoundBudget = DEFAULT_BUDGET  # the bounds of one round (model/budget.py)
    lang: str | None = None  # None: the base revision's `[review] lang` (.reviewbot.toml), else "en"
    use_git: bool = True  # False: review from the API's patches only
    run_tests: bool = True  # run the repository's tests (only for trusted authors, see below)
    tests_env: tuple[str, ...] = ()  # names a repository's [tests] env may pass to its tests
    trusted_associations: frozenset[str] = TRUSTED_ASSOCIATIONS
    review_drafts: bool = True
    extra_checklists: tuple[str, ...] = ()  # on top of the base revision's .reviewbot.toml
    repo_config_errors: str = "note"  # see REPO_CONFIG_ERRORS
    now: Callable[[], datetime] | None = None  # the review's clock (None: the core's default, UTC now)
    # HTTP behaviour
    timeout: float = 30.0
    max_attempts: int = 4  # per request: the first try and up to three retries
    backoff_base: float = 1.0  # seconds; doubles per retry (5xx, timeouts)
    backoff_max: float = 30.0
    rate_limit_wait: float = 60.0  # wait for a primary-limit reset at most this far away, else give up
    secondary_wait_max: float = 300.0  # longest retry-after honoured before giving up
    seconds_between_requests: float = 0.25  # PyGithub's throttle, as GitHub recommends
    seconds_between_writes: float = 1.0
    # GitHub ends a request that runs past its own limit (10 s on github.com). A write that failed
    # without an answer (timeout, dropped connection, 5xx) may still land until the client's timeout
    # and that limit have both passed: `late_write_window`, derived, never set apart, so the two
    # cannot disagree.
    # Until then the client looks for it (every `reconcile_interval`) before sending it again.
    github_request_limit: float = 10.0
    reconcile_interval: float = 2.0
    git_timeout: float = 900.0
    # Publishing
    max_inline_comments: int = 30
    check_name: str = "reviewbot"
    # The check run of a round that left out a changed file that could hold a derivation (over the
    # limits): "failure" or "action_required", never neutral (github.plan): a round that
    # did not see a derivation must not read as a pass.
    left_out_conclusion: str = "failure"

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise UsageError("max_attempts must be at least 1")
        if self.timeout <= 0 or self.github_request_limit < 0:
            raise UsageError("timeout must be positive and github_request_limit not negative")
        if self.max_inline_comments < 0:
            raise UsageError("max_inline_comments must not be negative")
        if not self.api_url.startswith(("http://", "https://")):
            raise UsageError(f"the GitHub API URL must start with http:// or https://, not {self.api_url!r}")
        if self.api_url.startswith("http://") and not _loopback(self.api_url):
            # GitHub Enterprise Server redirects http:// to https://, and a redirected POST arrives as a
            # GET (PyGithub then raises RuntimeError on every write): a configuration error, not a
            # transient one. Plain HTTP is allowed on this machine only (a proxy, the tests' fake).
            raise UsageError(
                f"the GitHub API URL {redact_url(self.api_url)} uses http://; use https:// "
                "(GitHub Enterprise Server: https://HOST/api/v3)"
            )
        if self.left_out_conclusion not in LEFT_OUT_CONCLUSIONS:
            raise UsageError(
                f"left_out_conclusion must be one of {', '.join(LEFT_OUT_CONCLUSIONS)}, "
                f"not {self.left_out_conclusion!r}"
            )
        if self.repo_config_errors not in REPO_CONFIG_ERRORS:
            raise UsageError(f"repo_config_errors must be one of {', '.join(REPO_CONFIG_ERRORS)}")

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("token", "private_key") and value is not None:
                value = "***"
            elif f.name.endswith("_url") and isinstance(value, str):
                value = redact_url(value)  # a database URL may carry a password
            shown.append(f"{f.name}={value!r}")
        return f"GitHubSettings({', '.join(shown)})"

    @property
    def effective_timeout(self) -> float:
        """The timeout a request really gets: PyGithub takes whole seconds, at least one."""
        return float(max(1, int(round(self.timeout))))

    @property
    def late_write_window(self) -> float:
        """How long after it was sent an unanswered write may still land: the client waited up to its
        timeout for the answer, and GitHub may go on with the request for up to its own limit after
        that (a proxy that stalled the write counts within the timeout). A write sent longer ago than
        this has landed or never will, so only then is it sent again."""
        return self.effective_timeout + self.github_request_limit

    @property
    def uses_app(self) -> bool:
        return self.app_id is not None and (self.private_key is not None or self.private_key_path is not None)

    @property
    def cache_root(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else load_settings().cache_dir

    def require_credentials(self) -> None:
        """Fail before any request when there is nothing to authenticate with."""
        require_github_credentials(
            token=self.token,
            app_id=self.app_id,
            has_private_key=self.private_key is not None or self.private_key_path is not None,
        )

    def app_private_key(self) -> str:
        """The App's PEM private key, read from `private_key_path` when not given inline."""
        if self.private_key is not None:
            return self.private_key
        assert self.private_key_path is not None
        try:
            return self.private_key_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"cannot read the App private key {self.private_key_path}: {exc.strerror}; "
                "check REVIEWBOT_PRIVATE_KEY_PATH"
            ) from exc

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> GitHubSettings:
        """The GitHub part of the process settings; `overrides` (not None) win."""
        values: dict[str, Any] = {
            "api_url": settings.api_url,
            "token": settings.token(),
            "app_id": settings.app_id,
            "private_key_path": settings.private_key_path,
            "bot_login": settings.bot_login,
            "db_url": settings.database_url,
            "cache_dir": settings.cache_dir,
            "facts_cache_mb": settings.facts_cache_mb,
            "budget": settings.budget,
            "review_drafts": settings.review_drafts,
            "seconds_between_requests": settings.request_interval,
            "seconds_between_writes": settings.write_interval,
            "timeout": settings.github_timeout_seconds,
            "github_request_limit": settings.github_request_limit_seconds,
            "tests_env": tuple(settings.tests_env),
            "left_out_conclusion": settings.left_out_conclusion,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**{k: v for k, v in values.items() if v is not None})

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, config_path: str | Path | None = None, **overrides: Any
    ) -> GitHubSettings:
        """A command-line round: the settings of `env` (default os.environ) over the config file
        (`config_path`, else $REVIEWBOT_CONFIG). A person asked for this PR, so a draft is reviewed,
        and a bad `.reviewbot.toml` is an error; `overrides` (not None) win."""
        defaults: dict[str, Any] = {"review_drafts": True, "repo_config_errors": "raise"}
        return cls.from_settings(load_settings(config_path, env), **{**defaults, **overrides})

    def with_(self, **changes: Any) -> GitHubSettings:
        return replace(self, **changes)


def _loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")
