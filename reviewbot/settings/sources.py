"""Where the settings are read from: pydantic-settings' own sources, as `load_settings` sets them up.

`Settings.settings_customise_sources` orders them (highest first): the environment (over a given
mapping, not necessarily os.environ), the config file (pydantic-settings' TOML or YAML source), the
default state and cache directories of that environment. Each is wrapped in `Recorded`, which keeps
where every value came from, for an error that names the variable or the file and key (never the
value), and gives a setting only when no source above it did.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    TomlConfigSettingsSource,
    YamlConfigSettingsSource,
)

from reviewbot.errors import UsageError

__all__ = [
    "READING",
    "Reading",
    "default_cache_dir",
    "default_state_dir",
    "env_var",
    "field_of",
    "file_keys",
    "home_of",
    "sources",
]

# The setting that names the config file: given by --config / REVIEWBOT_CONFIG, never by the file.
CONFIG_KEY = "config"


def home_of(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_STATE_HOME/reviewbot, else ~/.local/state/reviewbot (of `env`, default os.environ)."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_STATE_HOME") or home_of(env) / ".local" / "state") / "reviewbot"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_CACHE_HOME/reviewbot, else ~/.cache/reviewbot (of `env`, default os.environ)."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME") or home_of(env) / ".cache") / "reviewbot"


def env_var(settings_cls: type[BaseSettings], name: str) -> str:
    """The environment variable of a setting (its alias, e.g. GITHUB_TOKEN, when it has one)."""
    alias = settings_cls.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return f"{settings_cls.model_config.get('env_prefix') or ''}{name.upper()}"


def field_of(settings_cls: type[BaseSettings], key: str) -> str:
    """The field a source's key stands for (the environment source answers with an alias)."""
    for name, info in settings_cls.model_fields.items():
        alias = info.validation_alias
        if key == name or (isinstance(alias, AliasChoices) and key in alias.choices):
            return name
    return key


def file_keys(settings_cls: type[BaseSettings]) -> tuple[str, ...]:
    """Keys a config file may hold: every setting but the one naming the file."""
    return tuple(sorted(set(settings_cls.model_fields) - {CONFIG_KEY}))


def _is_path(info: FieldInfo) -> bool:
    return info.annotation is Path or Path in get_args(info.annotation)


def _expand_tilde(value: object, home: Path) -> object:
    """'~/x' under the home of the environment being read (it may not be this process's)."""
    if isinstance(value, str) and (value == "~" or value.startswith("~/")):
        return str(home / value[2:]) if value != "~" else str(home)
    return value


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # As the base class reads os.environ: names without regard to case, empty values left out.
        return {k.lower(): v for k, v in self._environ.items() if v != ""}

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except ValueError:
            # A list or a mapping is JSON here; the decoder's message quotes the text (maybe a secret).
            name = env_var(self.settings_cls, field_name)
            raise UsageError(f"{name} must be JSON, e.g. '[\"CC\"]' or '{{\"files\": 500}}'") from None


def _checked(data: object, path: Path, keys: tuple[str, ...]) -> dict[str, object]:
    """The file's mapping of setting -> value; UsageError for anything else or an unknown key."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"the config file {path} must be a mapping of keys to values (e.g. `app_id: 123`)")
    unknown = sorted(str(k) for k in data if k not in keys)
    if unknown:
        raise UsageError(f"unknown key(s) {', '.join(unknown)} in {path}; valid keys: {', '.join(keys)}")
    return {str(k): v for k, v in data.items()}


class _TomlFile(TomlConfigSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self._keys = file_keys(settings_cls)  # the base class reads the file as it starts
        super().__init__(settings_cls, toml_file=path)

    def _read_file(self, file_path: Path) -> dict[str, object]:
        try:
            return _checked(super()._read_file(file_path), file_path, self._keys)
        except tomllib.TOMLDecodeError as exc:
            # tomllib's message gives the position, never the text (which may hold a secret).
            raise UsageError(
                f"the config file {file_path} is not valid TOML ({exc}); fix it and retry"
            ) from None


class _YamlFile(YamlConfigSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self._keys = file_keys(settings_cls)  # the base class reads the file as it starts
        super().__init__(settings_cls, yaml_file=path, yaml_file_encoding="utf-8")

    def _read_file(self, file_path: Path) -> dict[str, object]:
        try:
            return _checked(super()._read_file(file_path), file_path, self._keys)
        except yaml.YAMLError as exc:
            # The YAML error quotes the offending text, which may be a secret: give the position only.
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise UsageError(
                f"the config file {file_path} is not valid YAML{where}; fix it and retry"
            ) from None


def _config_file(settings_cls: type[BaseSettings], path: Path) -> PydanticBaseSettingsSource:
    """pydantic-settings' TOML (a name ending in .toml) or YAML source of the config file. The file
    must be readable: their sources pass over a missing file, and this one was named on purpose."""
    try:
        path.open("rb").close()
    except OSError as exc:
        raise UsageError(
            f"cannot read the config file {path}: {exc.strerror}; check --config / REVIEWBOT_CONFIG"
        ) from exc
    return _TomlFile(settings_cls, path) if path.suffix == ".toml" else _YamlFile(settings_cls, path)


class _Directories(PydanticBaseSettingsSource):
    """The default state and cache directories of the environment being read (the fields' own
    defaults are os.environ's)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ gives both at once

    def __call__(self) -> dict[str, object]:
        return {"state_dir": default_state_dir(self._environ), "cache_dir": default_cache_dir(self._environ)}


@dataclass
class Reading:
    """What one `load_settings` reads, and where each setting's value came from (field -> words
    naming its source), filled in as the sources are read."""

    environ: Mapping[str, str]
    config: Path | None
    origin: dict[str, str] = field(default_factory=dict)


class Recorded(PydanticBaseSettingsSource):
    """A source that records where each value it gives came from, and gives a setting only when no
    source above it did: a setting comes whole from one place (a `budget` in the environment is not
    merged with the file's), and that place is the one an error names. Paths starting with `~` are
    taken under the home of the environment being read."""

    def __init__(self, inner: PydanticBaseSettingsSource, where: Callable[[str], str], reading: Reading):
        super().__init__(inner.settings_cls)
        self._inner, self._where, self._reading = inner, where, reading

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, object]:
        # pydantic-settings calls the sources highest first, so `origin` holds what is already given.
        given: dict[str, object] = {}
        home = home_of(self._reading.environ)
        fields = self.settings_cls.model_fields
        for key, value in self._inner().items():
            name = field_of(self.settings_cls, key)
            if value is None or name in self._reading.origin:
                continue  # a file's `key:` without a value is no setting
            self._reading.origin[name] = self._where(name)
            given[name] = _expand_tilde(value, home) if name in fields and _is_path(fields[name]) else value
        return given


# The reading under way: `load_settings` sets it while it builds a Settings (a ContextVar, so each
# thread reads its own); outside it `Settings(...)` has no source but its arguments.
READING: ContextVar[Reading | None] = ContextVar("reviewbot_settings_reading", default=None)


def sources(settings_cls: type[BaseSettings], reading: Reading) -> tuple[PydanticBaseSettingsSource, ...]:
    """The sources below the arguments, highest first: environment, config file, directories."""
    found: list[PydanticBaseSettingsSource] = [
        Recorded(_Environment(settings_cls, reading.environ), lambda f: env_var(settings_cls, f), reading)
    ]
    path = reading.config
    if path is not None:
        found.append(Recorded(_config_file(settings_cls, path), lambda f: f"{f} (in {path})", reading))
    found.append(Recorded(_Directories(settings_cls, reading.environ), lambda f: f"{f} (default)", reading))
    return tuple(found)
