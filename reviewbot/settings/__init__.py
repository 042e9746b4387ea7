"""The process settings of reviewbot: one pydantic-settings model for the CLI, `serve` and `worker`.

Precedence (highest first), as `Settings.settings_customise_sources` orders pydantic-settings' own
sources (`sources.py`): environment variables (`REVIEWBOT_*`, and GitHub's own `GITHUB_TOKEN`), the
config file (`--config`, else $REVIEWBOT_CONFIG; YAML, or TOML when it ends in `.toml`), built-in
defaults (the XDG state and cache directories of that environment). A setting comes whole from the
first source that has it. `load_settings()` is the only reader of those sources: the rounds store,
the test sandbox and the GitHub client (`reviewbot.github.settings`, derived from these) take their
settings from here; `Settings(...)` takes exactly its arguments.

Secrets are `SecretStr` and passwords inside URLs are replaced by `***` in `repr`/`str`; errors name
where the value came from (the environment variable, or the file and key), never the value.
"""

from reviewbot.settings.model import (
    DEFAULT_API_URL,
    ENV_PREFIX,
    FILE_KEYS,
    MAX_WEBHOOK_BYTES,
    LeftOutConclusion,
    Settings,
    default_cache_dir,
    default_state_dir,
    env_var,
    load_settings,
    private_paths,
    redact_url,
    require_github_credentials,
    sqlite_file,
)

__all__ = [
    "DEFAULT_API_URL",
    "ENV_PREFIX",
    "FILE_KEYS",
    "MAX_WEBHOOK_BYTES",
    "LeftOutConclusion",
    "Settings",
    "default_cache_dir",
    "default_state_dir",
    "env_var",
    "load_settings",
    "private_paths",
    "redact_url",
    "require_github_credentials",
    "sqlite_file",
]
