"""How a GitHub round talks to GitHub: the process settings it is derived from, and a round's own choices.

`GitHubSettings.process` is the one settings model (`reviewbot.settings.Settings`: credentials,
endpoint, store, cache, pacing, timeouts, budget, whether drafts are reviewed), read by the GitHub
code under its own names (`token`, `timeout`, `seconds_between_requests`, ...; `PROCESS_NAMES`) and
never copied, so each has one default. The fields here are what a round chooses: the report's
language, whether tests run, the retry policy, the publishing limits.

Built from the process settings (`from_settings`: the App worker with them as they are; `reviewbot
run --pr` with `review_drafts=True` and `repo_config_errors="raise"`, since a person asked for that
PR), or directly in tests, where the process settings may be given by their GitHub names. The
environment and the config file are read only by `reviewbot.settings.load_settings`. Secrets never
appear in `repr`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Literal, TypedDict, Unpack, get_args
from urllib.parse import urlsplit

from pydantic import ValidationError

from reviewbot.errors import UsageError, validation_problem
from reviewbot.model.budget import RoundBudget
from reviewbot.settings import (
    DEFAULT_API_URL,
    LeftOutConclusion,
    Settings,
    load_settings,
    redact_url,
    require_github_credentials,
)

__all__ = [
    "DEFAULT_API_URL",
    "GitHubSettings",
    "LEFT_OUT_CONCLUSIONS",
    "PROCESS_NAMES",
    "REPO_CONFIG_ERRORS",
    "GitHubOptions",
]

TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
# What a bad .reviewbot.toml does to a round: "note" (the App) reviews with the defaults, says so in
# the report and concludes the check run neutral; "raise" (the command line) fails with the problem.
RepoConfigErrors = Literal["note", "raise"]
REPO_CONFIG_ERRORS: tuple[str, ...] = get_args(RepoConfigErrors)
# What `left_out_conclusion` may be (reviewbot.github.plan applies it).
LEFT_OUT_CONCLUSIONS: tuple[str, ...] = get_args(LeftOutConclusion)
# GitHub's recommended pacing, used while the settings leave request_interval / write_interval unset.
REQUEST_PACING = 0.25
WRITE_PACING = 1.0

# The process settings under the names the GitHub code reads them by: name here -> Settings field.
PROCESS_NAMES: Mapping[str, str] = {
    "api_url": "api_url",
    "token": "github_token",
    "app_id": "app_id",
    "private_key_path": "private_key_path",
    "bot_login": "bot_login",
    "db_url": "db_url",
    "cache_dir": "cache_dir",
    "facts_cache_mb": "facts_cache_mb",
    "budget": "budget",
    "review_drafts": "review_drafts",
    "tests_env": "tests_env",
    "seconds_between_requests": "request_interval",
    "seconds_between_writes": "write_interval",
    "timeout": "github_timeout_seconds",
    "github_request_limit": "github_request_limit_seconds",
    "left_out_conclusion": "left_out_conclusion",
}


class GitHubOptions(TypedDict, total=False):
    """What `GitHubSettings(...)` may be given by name; None is "not given"."""

    # The process settings, by their GitHub names (PROCESS_NAMES): they change `process`.
    api_url: str | None
    token: str | None
    app_id: int | None
    private_key_path: Path | None
    bot_login: str | None
    db_url: str | None
    cache_dir: Path | None
    facts_cache_mb: int | None
    budget: RoundBudget | None
    review_drafts: bool | None
    tests_env: Sequence[str] | None
    seconds_between_requests: float | None
    seconds_between_writes: float | None
    timeout: float | None
    github_request_limit: float | None
    left_out_conclusion: str | None
    # A round's own choices (the fields of GitHubSettings).
    private_key: str | None
    record_rounds: bool | None
    lang: str | None
    use_git: bool | None
    run_tests: bool | None
    trusted_associations: frozenset[str] | None
    extra_checklists: tuple[str, ...] | None
    repo_config_errors: RepoConfigErrors | None
    now: Callable[[], datetime] | None
    max_attempts: int | None
    backoff_base: float | None
    backoff_max: float | None
    rate_limit_wait: float | None
    secondary_wait_max: float | None
    reconcile_interval: float | None
    git_timeout: float | None
    max_inline_comments: int | None
    check_name: str | None


@dataclass(frozen=True, repr=False, init=False)
class GitHubSettings:
    process: Settings  # the process settings (default: `Settings()`, exactly its defaults)
    private_key: str | None = None  # the App's PEM text; wins over private_key_path (secret stores, tests)
    record_rounds: bool = True  # record published rounds in the store
    lang: str | None = None  # None: the base revision's `[review] lang` (.reviewbot.toml), else "en"
    use_git: bool = True  # False: review from the API's patches only
    run_tests: bool = True  # run the repository's tests (only for trusted authors)
    trusted_associations: frozenset[str] = TRUSTED_ASSOCIATIONS
    extra_checklists: tuple[str, ...] = ()  # on top of the base revision's .reviewbot.toml
    repo_config_errors: RepoConfigErrors = "note"
    now: Callable[[], datetime] | None = None  # the review's clock (None: the core's default, UTC now)
    # HTTP behaviour
    max_attempts: int = 4  # per request: the first try and up to three retries
    backoff_base: float = 1.0  # seconds; doubles per retry (5xx, timeouts)
    backoff_max: float = 30.0
    rate_limit_wait: float = 60.0  # wait for a primary-limit reset at most this far away, else give up
    secondary_wait_max: float = 300.0  # longest retry-after honoured before giving up
    # An unanswered write may still land until `late_write_window` has passed; until then the client
    # looks for it (every `reconcile_interval`) before sending it again.
    reconcile_interval: float = 2.0
    git_timeout: float = 900.0
    # Publishing
    max_inline_comments: int = 30
    check_name: str = "reviewbot"

    def __init__(self, process: Settings | None = None, **options: Unpack[GitHubOptions]) -> None:
        self._set(process if process is not None else Settings(), _given(options), None)

    def _set(self, process: Settings, given: Mapping[str, object], base: GitHubSettings | None) -> None:
        """Fill a new instance: `process` with the process settings of `given`, the round's own from
        `given`, else `base`'s, else their defaults."""
        object.__setattr__(self, "process", _derived(process, given))
        for f in fields(self)[1:]:
            kept = f.default if base is None else getattr(base, f.name)
            object.__setattr__(self, f.name, given.get(f.name, kept))
        self._check()

    def _check(self) -> None:
        if self.max_attempts < 1:
            raise UsageError("max_attempts must be at least 1")
        if self.max_inline_comments < 0:
            raise UsageError("max_inline_comments must not be negative")
        if self.api_url.startswith("http://") and not _loopback(self.api_url):
            # GitHub Enterprise Server redirects http:// to https://, and a redirected POST arrives as a
            # GET (PyGithub then raises RuntimeError on every write): a configuration error, not a
            # transient one. Plain HTTP is allowed on this machine only (a proxy, the tests' fake).
            raise UsageError(
                f"the GitHub API URL {redact_url(self.api_url)} uses http://; use https:// "
                "(GitHub Enterprise Server: https://HOST/api/v3)"
            )
        if self.repo_config_errors not in REPO_CONFIG_ERRORS:
            raise UsageError(f"repo_config_errors must be one of {', '.join(REPO_CONFIG_ERRORS)}")

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            shown.append(
                f"{f.name}={'***' if f.name == 'private_key' and value is not None else repr(value)}"
            )
        return f"GitHubSettings({', '.join(shown)})"  # `process` hides its own secrets

    # The process settings, by the names the GitHub code reads them by (PROCESS_NAMES).
    @property
    def api_url(self) -> str:
        return self.process.api_url

    @property
    def token(self) -> str | None:
        """GITHUB_TOKEN: a personal, OAuth or Actions token, in clear for the client that sends it."""
        return self.process.token()

    @property
    def app_id(self) -> int | None:
        return self.process.app_id

    @property
    def private_key_path(self) -> Path | None:
        return self.process.private_key_path

    @property
    def bot_login(self) -> str | None:
        return self.process.bot_login

    @property
    def db_url(self) -> str:
        """The rounds store: the settings' database URL, else SQLite in their state directory."""
        return self.process.database_url

    @property
    def cache_dir(self) -> Path:
        return self.process.cache_dir

    @property
    def cache_root(self) -> Path:
        return self.process.cache_dir

    @property
    def facts_cache_mb(self) -> int:
        return self.process.facts_cache_mb

    @property
    def budget(self) -> RoundBudget:
        return self.process.budget

    @property
    def review_drafts(self) -> bool:
        return self.process.review_drafts

    @property
    def tests_env(self) -> tuple[str, ...]:
        return tuple(self.process.tests_env)

    @property
    def seconds_between_requests(self) -> float:
        interval = self.process.request_interval
        return REQUEST_PACING if interval is None else interval

    @property
    def seconds_between_writes(self) -> float:
        interval = self.process.write_interval
        return WRITE_PACING if interval is None else interval

    @property
    def timeout(self) -> float:
        return self.process.github_timeout_seconds

    @property
    def github_request_limit(self) -> float:
        """How long GitHub goes on with a request (10 s on github.com)."""
        return self.process.github_request_limit_seconds

    @property
    def left_out_conclusion(self) -> LeftOutConclusion:
        """The check run of a round that left out a changed file that could hold a derivation:
        never neutral (github.plan), a round that did not see a derivation must not read as a pass."""
        return self.process.left_out_conclusion

    @property
    def effective_timeout(self) -> float:
        """The timeout a request really gets: PyGithub takes whole seconds, at least one."""
        return float(max(1, int(round(self.timeout))))

    @property
    def late_write_window(self) -> float:
        """How long after it was sent an unanswered write may still land: the client waited up to its
        timeout for the answer, and GitHub may go on with the request for up to its own limit after
        that (a proxy that stalled the write counts within the timeout). A write sent longer ago than
        this has landed or never will, so only then is it sent again. Derived, never a setting of its
        own, so the two cannot disagree."""
        return self.effective_timeout + self.github_request_limit

    @property
    def uses_app(self) -> bool:
        return self.app_id is not None and (self.private_key is not None or self.private_key_path is not None)

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
    def from_settings(cls, settings: Settings, **overrides: object) -> GitHubSettings:
        """The GitHub round of the process settings; `overrides` (by the names of GitHubOptions; None:
        not given) win."""
        return cls(settings).with_(**overrides)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, config_path: str | Path | None = None, **overrides: object
    ) -> GitHubSettings:
        """A command-line round: the settings of `env` (default os.environ) over the config file
        (`config_path`, else $REVIEWBOT_CONFIG). A person asked for this PR, so a draft is reviewed,
        and a bad `.reviewbot.toml` is an error; `overrides` (not None) win."""
        chosen: dict[str, object] = {"review_drafts": True, "repo_config_errors": "raise"}
        return cls.from_settings(load_settings(config_path, env), **{**chosen, **overrides})

    def with_(self, **changes: object) -> GitHubSettings:
        """A copy with `changes` (by the names of GitHubOptions; None: not given)."""
        copy = object.__new__(type(self))
        copy._set(self.process, _given(changes), self)
        return copy


_OPTIONS = frozenset(GitHubOptions.__annotations__)


def _given(options: Mapping[str, object]) -> dict[str, object]:
    """The options given (not None); an unknown name is a TypeError, as for any other call."""
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise TypeError(f"GitHubSettings got unexpected option(s) {', '.join(unknown)}")
    return {k: v for k, v in options.items() if v is not None}


def _derived(process: Settings, given: Mapping[str, object]) -> Settings:
    """`process` with the process settings among `given` (by their GitHub names), validated as the
    settings validate them; a bad one is a UsageError naming it as it was given."""
    changes = {PROCESS_NAMES[k]: v for k, v in given.items() if k in PROCESS_NAMES}
    if not changes:
        return process
    conclusion = given.get("left_out_conclusion")
    if conclusion is not None and conclusion not in LEFT_OUT_CONCLUSIONS:
        raise UsageError(
            f"left_out_conclusion must be one of {', '.join(LEFT_OUT_CONCLUSIONS)}, not {conclusion!r}"
        )
    try:
        return process.with_(**changes)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        name = next((k for k, v in PROCESS_NAMES.items() if v == field), field)
        raise UsageError(f"{name} {validation_problem(first)}") from None


def _loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")
