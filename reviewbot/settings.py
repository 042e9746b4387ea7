"""Service configuration: the environment, over an optional YAML file, validated when loaded.

Precedence (highest first): environment variables, the config file (`--config`, else
$REVIEWBOT_CONFIG), built-in defaults. Secrets (webhook secret, token, passwords inside URLs) never
appear in `repr`, logs or error messages: `Settings.__repr__` redacts them and errors name the key,
never its value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

from reviewbot.errors import UsageError

__all__ = [
    "Settings",
    "load_settings",
    "redact_url",
    "require_github_credentials",
    "DEFAULT_API_URL",
    "MAX_WEBHOOK_BYTES",
]

DEFAULT_API_URL = "https://api.github.com"
MAX_WEBHOOK_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB

_SECRET_FIELDS = frozenset({"webhook_secret", "github_token"})
_URL_FIELDS = frozenset({"queue_url", "db_url", "api_url"})
_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.\-]*://[^:/@]*):[^@/]*@")


def redact_url(url: str | None) -> str | None:
    """`url` with any password replaced by `***` (postgresql://u:pw@h/db -> postgresql://u:***@h/db)."""
    if url is None:
        return None
    return _PASSWORD.sub(r"\g<head>:***@", url)


def require_github_credentials(*, token: str | None, app_id: int | None, has_private_key: bool) -> None:
    """Fail before any request when there is nothing to authenticate to GitHub with.

    Shared by the service settings and GitHubSettings, so both word the missing setting alike.
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


def _default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "reviewbot"


@dataclass(frozen=True, repr=False)
class Settings:
    """Everything `serve` and `worker` need. Build with `load_settings()`; tests may use `replace()`."""

    webhook_secret: str | None = None
    github_token: str | None = None
    app_id: int | None = None
    private_key_path: Path | None = None
    api_url: str = DEFAULT_API_URL
    queue_url: str | None = None  # None: a SQLite file in state_dir
    queue_name: str = "reviewbot"
    db_url: str | None = None  # None: the rounds store's default (SQLite in the state directory)
    cache_dir: Path | None = None
    state_dir: Path = _default_state_dir()
    review_drafts: bool = False
    post: bool = True  # False: rounds are computed and stored but nothing is published
    command: str = "/reviewbot review"
    max_attempts: int = 5
    retry_base_seconds: float = 5.0
    retry_max_seconds: float = 300.0
    job_lease_seconds: float = 60.0
    lock_retry_seconds: float = 1.0
    max_body_bytes: int = MAX_WEBHOOK_BYTES
    # PyGithub's pause between requests / writes; None keeps GitHub's recommended pacing.
    request_interval: float | None = None
    write_interval: float | None = None

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _SECRET_FIELDS:
                shown = "None" if value is None else "'***'"
            elif f.name in _URL_FIELDS and isinstance(value, str):
                shown = repr(redact_url(value))
            else:
                shown = repr(value)
            parts.append(f"{f.name}={shown}")
        return f"Settings({', '.join(parts)})"

    __str__ = __repr__

    @property
    def queue_file(self) -> Path:
        """The SqliteHuey file used when no queue URL is configured."""
        return self.state_dir / "queue.sqlite3"

    @property
    def uses_app(self) -> bool:
        """True when reviewbot authenticates as a GitHub App (app id + private key)."""
        return self.app_id is not None and self.private_key_path is not None

    def require_secret(self) -> bytes:
        """The webhook secret as bytes; a server without one would accept forged deliveries."""
        if not self.webhook_secret:
            raise UsageError(
                "no webhook secret configured: set REVIEWBOT_WEBHOOK_SECRET (or webhook_secret in the "
                "config file) to the secret entered when registering the GitHub App"
            )
        return self.webhook_secret.encode("utf-8")

    def require_credentials(self) -> None:
        """Fail early when the worker could not talk to GitHub at all."""
        require_github_credentials(
            token=self.github_token, app_id=self.app_id, has_private_key=self.private_key_path is not None
        )


def _to_bool(key: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise UsageError(f"{key} must be true or false, not {raw!r}")


def _to_int(key: str, raw: Any) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise UsageError(f"{key} must be a whole number") from None
    if value < 0:
        raise UsageError(f"{key} must not be negative")
    return value


def _to_float(key: str, raw: Any) -> float:
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise UsageError(f"{key} must be a number of seconds") from None
    if value < 0:
        raise UsageError(f"{key} must not be negative")
    return value


def _to_path(_key: str, raw: Any) -> Path:
    return Path(str(raw)).expanduser()


def _to_str(_key: str, raw: Any) -> str:
    return str(raw)


# field -> (environment variable, converter). GITHUB_TOKEN is GitHub's own name for a token.
_SOURCES: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "webhook_secret": ("REVIEWBOT_WEBHOOK_SECRET", _to_str),
    "github_token": ("GITHUB_TOKEN", _to_str),
    "app_id": ("REVIEWBOT_APP_ID", _to_int),
    "private_key_path": ("REVIEWBOT_PRIVATE_KEY_PATH", _to_path),
    "api_url": ("REVIEWBOT_API_URL", _to_str),
    "queue_url": ("REVIEWBOT_QUEUE_URL", _to_str),
    "queue_name": ("REVIEWBOT_QUEUE_NAME", _to_str),
    "db_url": ("REVIEWBOT_DB_URL", _to_str),
    "cache_dir": ("REVIEWBOT_CACHE_DIR", _to_path),
    "state_dir": ("REVIEWBOT_STATE_DIR", _to_path),
    "review_drafts": ("REVIEWBOT_REVIEW_DRAFTS", _to_bool),
    "post": ("REVIEWBOT_POST", _to_bool),
    "command": ("REVIEWBOT_COMMAND", _to_str),
    "max_attempts": ("REVIEWBOT_MAX_ATTEMPTS", _to_int),
    "retry_base_seconds": ("REVIEWBOT_RETRY_BASE_SECONDS", _to_float),
    "retry_max_seconds": ("REVIEWBOT_RETRY_MAX_SECONDS", _to_float),
    "job_lease_seconds": ("REVIEWBOT_JOB_LEASE_SECONDS", _to_float),
    "lock_retry_seconds": ("REVIEWBOT_LOCK_RETRY_SECONDS", _to_float),
    "max_body_bytes": ("REVIEWBOT_MAX_BODY_BYTES", _to_int),
    "request_interval": ("REVIEWBOT_REQUEST_INTERVAL", _to_float),
    "write_interval": ("REVIEWBOT_WRITE_INTERVAL", _to_float),
}


def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(
            f"cannot read the config file {path}: {exc.strerror}; check --config / REVIEWBOT_CONFIG"
        ) from exc
    except yaml.YAMLError as exc:
        # The YAML error quotes the offending text, which may be a secret: give the position only.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"the config file {path} is not valid YAML{where}; fix it and retry") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"the config file {path} must be a mapping of keys to values (e.g. `app_id: 123`)")
    unknown = sorted(str(k) for k in data if k not in _SOURCES)
    if unknown:
        raise UsageError(
            f"unknown key(s) {', '.join(unknown)} in {path}; valid keys: {', '.join(sorted(_SOURCES))}"
        )
    return data


def load_settings(
    config_path: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from `environ` (default: os.environ) over the YAML file `config_path` (default:
    $REVIEWBOT_CONFIG, if set). Raises UsageError naming the bad key (never its value)."""
    env = os.environ if environ is None else environ
    path = config_path or env.get("REVIEWBOT_CONFIG")
    values: dict[str, Any] = {}
    if path:
        for key, raw in _read_file(Path(path)).items():
            if raw is not None:
                values[key] = _SOURCES[key][1](f"{key} (in {path})", raw)
    for key, (var, convert) in _SOURCES.items():
        raw_env = env.get(var)
        if raw_env is not None and raw_env != "":
            values[key] = convert(var, raw_env)
    if "state_dir" not in values and env.get("XDG_STATE_HOME"):
        values["state_dir"] = Path(env["XDG_STATE_HOME"]) / "reviewbot"
    settings = replace(Settings(), **values)
    if settings.max_attempts < 1:
        raise UsageError("max_attempts must be at least 1 (REVIEWBOT_MAX_ATTEMPTS)")
    if settings.queue_url and not settings.queue_url.startswith(
        ("redis://", "rediss://", "unix://", "sqlite://")
    ):
        raise UsageError(
            "REVIEWBOT_QUEUE_URL must be redis://HOST:PORT/DB (RedisHuey) or sqlite:///FILE (SqliteHuey); "
            f"got a URL starting with {settings.queue_url.split(':', 1)[0]!r}"
        )
    return settings
