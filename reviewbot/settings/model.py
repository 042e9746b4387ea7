"""The settings model: every setting a reviewbot process reads, its validation, and `load_settings`.

The sources and their order are `reviewbot.settings.sources`; the package docstring says the
precedence.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from reviewbot.errors import UsageError, validation_problem
from reviewbot.model.budget import RoundBudget
from reviewbot.settings import sources as _sources
from reviewbot.settings.sources import default_cache_dir, default_state_dir

__all__ = [
    "Settings",
    "load_settings",
    "private_paths",
    "redact_url",
    "require_github_credentials",
    "sqlite_file",
    "default_cache_dir",
    "default_state_dir",
    "DEFAULT_API_URL",
    "MAX_WEBHOOK_BYTES",
    "ENV_PREFIX",
    "FILE_KEYS",
    "LeftOutConclusion",
    "env_var",
]

DEFAULT_API_URL = "https://api.github.com"
MAX_WEBHOOK_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
ENV_PREFIX = "REVIEWBOT_"

_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.\-]*://[^:/@]*):[^@/]*@")
_URL_FIELDS = frozenset({"queue_url", "db_url", "api_url"})
_QUEUE_SCHEMES = ("redis://", "rediss://", "unix://", "sqlite://")
# The check run of a round that left out a changed file that could hold a derivation.
LeftOutConclusion = Literal["failure", "action_required"]


def redact_url(url: str | None) -> str | None:
    """`url` with any password replaced by `***` (postgresql://u:pw@h/db -> postgresql://u:***@h/db)."""
    if url is None:
        return None
    return _PASSWORD.sub(r"\g<head>:***@", url)


def sqlite_file(url: str | None) -> Path | None:
    """The file of a `sqlite:///FILE` URL; None for any other URL."""
    if url and url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        return Path(url[len("sqlite:///") :].split("?", 1)[0])
    return None


def require_github_credentials(*, token: str | None, app_id: int | None, has_private_key: bool) -> None:
    """Fail before any request when there is nothing to authenticate to GitHub with.

    Shared by the settings and GitHubSettings, so both word the missing setting alike.
    """
    if token or (app_id is not None and has_private_key):
        return
    if app_id is not None or has_private_key:
        raise UsageError(
            "a GitHub App needs both REVIEWBOT_APP_ID and REVIEWBOT_PRIVATE_KEY_PATH; set the missing one"
        )
    raise UsageError(
        "no GitHub credentials: set GITHUB_TOKEN, "
        "or REVIEWBOT_APP_ID and REVIEWBOT_PRIVATE_KEY_PATH for a GitHub App"
    )


class Settings(BaseSettings):
    """Everything a reviewbot process needs. Build with `load_settings()`; `Settings(...)` takes exactly
    its arguments (no environment, no file): tests build it directly and change it with `with_()`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="forbid", frozen=True, populate_by_name=True
    )

    webhook_secret: SecretStr | None = None
    # Bearer token of the read-only round-history pages (GET /prs/{owner}/{repo}/{n}); unset: no pages.
    history_token: SecretStr | None = None
    # GitHub's own name for a token (Actions sets it); REVIEWBOT_GITHUB_TOKEN is not read.
    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GITHUB_TOKEN", "github_token")
    )
    app_id: int | None = Field(default=None, ge=0)
    private_key_path: Path | None = None
    api_url: str = DEFAULT_API_URL
    bot_login: str | None = None  # the bot's login when it cannot be asked (e.g. an Actions token)
    queue_url: str | None = None  # None: a SQLite file in state_dir
    queue_name: str = "reviewbot"
    db_url: str | None = None  # None: a SQLite file in state_dir (`database_url`)
    cache_dir: Path = Field(default_factory=default_cache_dir)  # cached clones, the facts cache
    facts_cache_mb: int = Field(default=256, ge=0)  # bound of the parsed-facts cache; 0: no cache
    state_dir: Path = Field(default_factory=default_state_dir)  # rounds store, queue
    review_drafts: bool = False  # the App skips drafts; `reviewbot run --pr` reviews one (a person asked)
    post: bool = True  # False: rounds are computed and stored but nothing is published
    command: str = "/reviewbot review"
    max_attempts: int = Field(default=5, ge=1)
    retry_base_seconds: float = Field(default=5.0, ge=0)
    retry_max_seconds: float = Field(default=300.0, ge=0)
    job_lease_seconds: float = Field(default=60.0, ge=0)
    lock_retry_seconds: float = Field(default=1.0, ge=0)
    max_body_bytes: int = Field(default=MAX_WEBHOOK_BYTES, ge=0)
    # The webhook server's deadlines for a request's line and headers, then its body (docs/security.md).
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_timeout_s: float = Field(default=30.0, gt=0)
    # PyGithub's pause between requests / writes; None keeps GitHub's recommended pacing.
    request_interval: float | None = Field(default=None, ge=0)
    write_interval: float | None = Field(default=None, ge=0)
    # The GitHub client's timeout for one request, and GitHub's own limit on one (10 s on github.com;
    # raise it for a GitHub Enterprise Server behind a proxy that lets requests run longer). An
    # unanswered write is looked for until both have passed before it is sent again: that window is
    # their sum, derived, not a setting of its own (docs/reliability.md).
    github_timeout_seconds: float = Field(default=30.0, gt=0)
    github_request_limit_seconds: float = Field(default=10.0, ge=0)
    # The check run of a round that left out a changed file that could hold a derivation: "failure" or
    # "action_required" (never neutral, which branch protection reads as passing; docs/reliability.md).
    left_out_conclusion: LeftOutConclusion = "failure"
    # Retention (service/retention.py), in days (0: keep for good); the worker prunes every interval.
    keep_deliveries_days: float = Field(default=30.0, ge=0)  # deliveries that queued a round
    keep_ignored_days: float = Field(default=3.0, ge=0)  # the rest (ignored events, duplicates, pings)
    keep_jobs_days: float = Field(default=30.0, ge=0)  # finished jobs
    keep_rounds_days: float = Field(default=365.0, ge=0)  # rounds, but never a PR's newest two
    prune_interval_seconds: float = Field(default=3600.0, ge=0)  # 0: never prune
    tests_env: list[str] = Field(default_factory=list)  # the App: names a repo's [tests] env may pass
    # One round's bounds (model/budget.py): REVIEWBOT_BUDGET='{"files": 500}', `budget: {files: 500}`.
    budget: RoundBudget = Field(default_factory=RoundBudget)
    # The file these settings were read from ($REVIEWBOT_CONFIG / --config); not a key of the file.
    config: Path | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The arguments, then the environment, the config file and the default directories that
        # `load_settings` reads (its environment need not be os.environ); outside `load_settings`
        # there are no others: `Settings(...)` takes exactly its arguments.
        reading = _sources.READING.get()
        if reading is None:
            return (init_settings,)
        return (init_settings, *_sources.sources(settings_cls, reading))

    @field_validator("private_key_path", "cache_dir", "state_dir", "config")
    @classmethod
    def _expand_home(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("queue_url")
    @classmethod
    def _queue_scheme(cls, value: str | None) -> str | None:
        if value and not value.startswith(_QUEUE_SCHEMES):
            raise ValueError(
                "must be redis://HOST:PORT/DB (RedisHuey) or sqlite:///FILE (SqliteHuey); "
                f"got a URL starting with {value.split(':', 1)[0]!r}"
            )
        return value

    def __repr_args__(self) -> Iterator[tuple[str | None, object]]:
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name in _URL_FIELDS and isinstance(value, str) else value

    def with_(self, **changes: object) -> Settings:
        """A copy with `changes`, validated like the original."""
        return type(self).model_validate({**self.model_dump(), **changes})

    @property
    def queue_file(self) -> Path:
        """The SqliteHuey file used when no queue URL is configured."""
        return self.state_dir / "queue.sqlite3"

    @property
    def database_url(self) -> str:
        """The rounds store: `db_url`, else a SQLite file in the state directory."""
        return self.db_url or f"sqlite:///{self.state_dir / 'reviewbot.sqlite3'}"

    @property
    def uses_app(self) -> bool:
        """True when reviewbot authenticates as a GitHub App (app id + private key)."""
        return self.app_id is not None and self.private_key_path is not None

    def token(self) -> str | None:
        """The GitHub token in clear, for the client that sends it."""
        return self.github_token.get_secret_value() if self.github_token is not None else None

    def secret_values(self) -> tuple[str, ...]:
        """The secrets in clear, for scrubbing them out of messages."""
        return tuple(
            s.get_secret_value()
            for s in (self.webhook_secret, self.github_token, self.history_token)
            if s and s.get_secret_value()
        )

    def require_secret(self) -> bytes:
        """The webhook secret as bytes; a server without one would accept forged deliveries."""
        if self.webhook_secret is None or not self.webhook_secret.get_secret_value():
            raise UsageError(
                "no webhook secret configured: set REVIEWBOT_WEBHOOK_SECRET (or webhook_secret in the "
                "config file) to the secret entered when registering the GitHub App"
            )
        return self.webhook_secret.get_secret_value().encode("utf-8")

    def require_credentials(self) -> None:
        """Fail early when the worker could not talk to GitHub at all."""
        require_github_credentials(
            token=self.token(), app_id=self.app_id, has_private_key=self.private_key_path is not None
        )

    def private_paths(self) -> list[Path]:
        """What these settings name that a test sandbox must not see: the App key, this file, the
        clone cache, the state directory and the SQLite files of the store and the queue."""
        named = [self.private_key_path, self.config, self.cache_dir, self.state_dir]
        named += [sqlite_file(self.db_url), sqlite_file(self.queue_url)]
        return [p for p in named if p is not None]


FILE_KEYS: tuple[str, ...] = _sources.file_keys(Settings)
# The settings that place secrets and state (see `private_paths`).
_PLACES = ("private_key_path", "cache_dir", "state_dir", "db_url", "queue_url")
_HINTS = {"app_id": " (the App's numeric id)"}


def env_var(name: str) -> str:
    """The environment variable of a setting (GITHUB_TOKEN for the token)."""
    return _sources.env_var(Settings, name)


def _usage_error(exc: ValidationError, origin: Mapping[str, str]) -> UsageError:
    first = exc.errors()[0]
    name = _sources.field_of(Settings, str(first["loc"][0])) if first["loc"] else ""
    more = exc.error_count() - 1
    tail = f" (and {more} more problem(s))" if more else ""
    return UsageError(f"{origin.get(name, name)} {validation_problem(first)}{_HINTS.get(name, '')}{tail}")


def load_settings(
    config_path: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from `environ` (default: os.environ) over the config file `config_path` (default:
    $REVIEWBOT_CONFIG, if set). Raises UsageError naming where a bad value came from, never the value."""
    env = os.environ if environ is None else environ
    path = config_path or env.get("REVIEWBOT_CONFIG") or None
    reading = _sources.Reading(env, Path(path) if path else None)
    if path:
        reading.origin["config"] = "--config / REVIEWBOT_CONFIG"  # named here, never read from a source
    token = _sources.READING.set(reading)
    try:
        return Settings(config=Path(path)) if path else Settings()
    except ValidationError as exc:
        raise _usage_error(exc, reading.origin) from None
    finally:
        _sources.READING.reset(token)


def _settings_to_hide(env: Mapping[str, str]) -> Settings:
    """The settings of `env` for hiding their paths; a bad file or value must not hide less."""
    try:
        return load_settings(environ=env)
    except UsageError:
        pass  # the process that uses these settings fails on them by itself; hide what is known
    config = env.get("REVIEWBOT_CONFIG") or None
    named = {env_var(f) for f in _PLACES}
    paths_only = {k: v for k, v in env.items() if k in named or not k.startswith(ENV_PREFIX)}
    try:
        settings = load_settings(environ=paths_only)
    except UsageError:
        settings = Settings(state_dir=default_state_dir(env), cache_dir=default_cache_dir(env))
    return settings.with_(config=config) if config else settings


def private_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """reviewbot's own secrets and state, for test sandboxes to hide: what the settings of `environ`
    (default os.environ) name, and the default state and cache directories (another reviewbot
    process on this host may use them)."""
    env = os.environ if environ is None else environ
    settings = _settings_to_hide(env)
    candidates = [settings.private_key_path, settings.config, settings.cache_dir, default_cache_dir(env)]
    candidates += [settings.state_dir, default_state_dir(env)]
    candidates += [sqlite_file(settings.db_url), sqlite_file(settings.queue_url)]
    return list(dict.fromkeys(p for p in candidates if p is not None))
