"""Repository configuration: `.reviewbot.toml`, one model, parsed once, always from the BASE revision.

Reading it from the base keeps a pull request from changing how it is itself reviewed (for example
turning off a rule, or choosing the command that runs in the sandbox).

    [review]
    checklists = ["general", "rtp-llm"]     # bundled names or repository paths to YAML files
    disabled = ["formatting-noise"]         # rule ids (`reviewbot rules` lists them)
    enabled = ["flag-removed-without-alias"]  # opt-in rules, off unless named here
    exclude = ["third_party/**"]            # globs of paths never searched (vendored trees)
    lang = "zh"                             # the report's language (en, zh); --lang wins

    [cpp]
    macros = ["MY_API"]                     # the repository's attribute-like macros, blanked before parsing

    [tests]
    command = "sh run_tests.sh"             # run with `sh -c` at the repository root
    timeout = 120                           # seconds per run (default 600)
    junit = "build/*.xml"                   # JUnit XML files (default: any XML the run writes)

Unknown sections and keys are refused, and so are rule ids and checklist names reviewbot does not
know: a typo must never turn a setting off silently. Every problem is one `RepoConfigError` line
naming the file, the key and what is allowed. The rule ids and the bundled checklist names come
from the caller (`checks` and `review` sit above this module in the layers).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator

from reviewbot.errors import UsageError
from reviewbot.model.change import RepoTree
from reviewbot.model.untrusted import refused_env_names

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails  # pydantic's own dependency, for the type only

__all__ = [
    "CONFIG_PATH",
    "RepoConfig",
    "RepoConfigError",
    "ReviewTable",
    "TestConfig",
    "load_repo_config",
    "parse_repo_config",
    "parse_tests_table",
]

CONFIG_PATH = ".reviewbot.toml"
BASE_ORIGIN = f"{CONFIG_PATH} (base)"
DEFAULT_TIMEOUT = 600.0
DEFAULT_JUNIT = "**/*.xml"


class RepoConfigError(UsageError):
    """`.reviewbot.toml` is not what reviewbot understands (exit 2 on the command line)."""


def _relative_glob(value: str) -> str:
    if not value or value.startswith("/") or ".." in value.split("/"):
        raise ValueError("must be a relative glob")
    return value


_Glob = Annotated[StrictStr, AfterValidator(_relative_glob)]
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReviewTable(_Table):
    """`[review]`."""

    checklists: tuple[StrictStr, ...] = ("general",)
    disabled: frozenset[StrictStr] = frozenset()
    enabled: frozenset[StrictStr] = frozenset()  # opt-in rules to run (`reviewbot rules` marks them)
    exclude: tuple[_Glob, ...] = ()
    lang: Literal["en", "zh"] | None = None  # the report's language (the command line's --lang wins)

    @field_validator("checklists", "disabled", "enabled", "exclude", mode="before")
    @classmethod
    def _a_list(cls, value: object) -> object:
        # A bare string would otherwise be read as a sequence of letters.
        if not isinstance(value, list):
            raise ValueError("not a list")
        return value


class TestConfig(_Table):
    """`[tests]`: how the repository's tests run (read by the execution stage)."""

    __test__ = False  # not a pytest test class

    command: StrictStr
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, strict=True)
    junit: _Glob = DEFAULT_JUNIT
    junit_configured: bool = Field(default=False, exclude=True)  # set when the table names `junit`
    # Names of reviewbot's environment the test process may see beyond PATH, locale and TZ (the
    # sandbox's allow-list); never reviewbot's own or a credential's (refused here, loudly).
    env: tuple[StrictStr, ...] = ()

    @field_validator("env", mode="before")
    @classmethod
    def _env_names(cls, value: object) -> object:
        if not isinstance(value, list):
            raise ValueError("not a list")
        bad = [v for v in value if not isinstance(v, str) or not _ENV_NAME.fullmatch(v)]
        if bad:
            raise ValueError(f"not an environment variable name: {bad[0]!r}")
        refused = refused_env_names(value)
        if refused:
            raise ValueError(f"{refused[0]} is reviewbot's own or a credential; a test never gets it")
        return value

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("blank")
        return value


_MACRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class CppTable(_Table):
    """`[cpp]`: how the repository's C++ is read."""

    # Attribute-like macros of the repository (export macros, qualifiers) that expand to nothing a
    # parser needs: blanked before parsing, as the bundled list of CUDA/c10/export macros is.
    macros: tuple[StrictStr, ...] = ()

    @field_validator("macros", mode="before")
    @classmethod
    def _identifiers(cls, value: object) -> object:
        if not isinstance(value, list):
            raise ValueError("not a list")
        bad = [v for v in value if not isinstance(v, str) or not _MACRO_NAME.fullmatch(v)]
        if bad:
            raise ValueError(f"not a C++ identifier: {bad[0]!r}")
        return value


class _File(_Table):
    review: ReviewTable = ReviewTable()
    tests: TestConfig | None = None
    cpp: CppTable = CppTable()


class RepoConfig(BaseModel):
    """The base revision's `.reviewbot.toml` (the defaults when it has none)."""

    model_config = ConfigDict(frozen=True)

    review: ReviewTable = ReviewTable()
    tests: TestConfig | None = None  # None: no [tests] table, the tests are not run
    cpp: CppTable = CppTable()
    repo_checklists: dict[str, str] = Field(default_factory=dict)  # repository path -> YAML text
    source: str = ""  # where it was read from, for the report

    @property
    def checklists(self) -> tuple[str, ...]:
        return self.review.checklists

    @property
    def disabled(self) -> frozenset[str]:
        return self.review.disabled

    @property
    def enabled(self) -> frozenset[str]:
        return self.review.enabled

    @property
    def exclude(self) -> tuple[str, ...]:
        return self.review.exclude


# What each key allows, for the one-line error ("[tests] timeout must be ...").
_ALLOWED = {
    ("review", "checklists"): "a list of bundled checklist names or repository paths to YAML files",
    ("review", "disabled"): "a list of rule ids",
    ("review", "enabled"): "a list of rule ids (the opt-in rules to run)",
    ("review", "exclude"): 'a list of relative globs such as "third_party/**"',
    ("review", "lang"): 'the report\'s language, "en" or "zh"',
    ("cpp", "macros"): 'a list of C++ identifiers such as ["MY_API", "MY_DEVICE_INLINE"]',
    ("tests", "timeout"): "a positive number of seconds",
    ("tests", "junit"): 'a relative glob such as "build/*.xml"',
    ("tests", "command"): 'the shell command that runs the tests, e.g. "make test"',
    ("tests", "env"): 'a list of variable names such as ["CC", "CUDA_HOME"], none of reviewbot\'s own '
    "(REVIEWBOT_*, GITHUB_*) or a credential's (*TOKEN*, *PASS*, *KEY*, *SECRET*, ...)",
}
_SECTIONS: dict[str, type[BaseModel]] = {"review": ReviewTable, "tests": TestConfig, "cpp": CppTable}


def _keys(section: str) -> list[str]:
    model = _SECTIONS[section]
    return [k for k, f in model.model_fields.items() if not f.exclude]


def _unknown(data: Mapping[str, object]) -> str | None:
    """Every unknown section or key at once: a typo is rarely alone."""
    allowed = ", ".join(f"[{s}]" for s in _SECTIONS)
    sections = sorted(f"[{k}]" for k, v in data.items() if k not in _SECTIONS and isinstance(v, dict))
    if sections:
        return f"unknown section(s) {', '.join(sections)}; allowed: {allowed}"
    keys = sorted(k for k in data if k not in _SECTIONS)
    if keys:
        return f"unknown top-level key(s) {', '.join(keys)}; keys belong in a section: {allowed}"
    for section in _SECTIONS:
        table = data.get(section)
        if not isinstance(table, dict):
            continue
        keys = sorted(k for k in table if k not in _keys(section))
        if keys:
            return f"unknown key(s) in [{section}]: {', '.join(keys)}; allowed: {', '.join(_keys(section))}"
    return None


def _problem(error: ErrorDetails) -> str:
    loc = tuple(str(p) for p in error["loc"])
    if len(loc) == 1:
        return f"[{loc[0]}] must be a table, e.g. [{loc[0]}] on a line of its own"
    section, key = loc[0], loc[1]
    if (section, key) == ("tests", "command"):
        return '[tests] needs `command = "..."`, the shell command that runs the tests'
    value = error.get("input")
    if (section, key) == ("tests", "env") and isinstance(value, list):
        value = next(
            (
                v
                for v in value
                if not isinstance(v, str) or refused_env_names([v]) or not _ENV_NAME.fullmatch(v)
            ),
            None,
        )
    shown = f", not {value!r}" if not isinstance(value, (dict, list, tuple)) and value is not None else ""
    return f"[{section}] {key} must be {_ALLOWED.get((section, key), 'valid')}{shown}"


def _check_names(
    review: ReviewTable, rules: Collection[str] | None, checklists: Collection[str] | None
) -> str | None:
    both = sorted(review.disabled & review.enabled)
    if both:  # which one wins would be a guess: say it instead of deciding silently
        return f"[review] {', '.join(both)} is both enabled and disabled; name each rule in one list only"
    if rules is not None:
        for key, named in (("disabled", review.disabled), ("enabled", review.enabled)):
            unknown = sorted(named - set(rules))
            if unknown:
                return (
                    f"[review] {key}: unknown rule id(s) {', '.join(unknown)}; "
                    f"known: {', '.join(sorted(rules))}"
                )
    if checklists is not None:
        names = [c for c in review.checklists if not c.endswith((".yaml", ".yml")) and c not in checklists]
        if names:
            return (
                f"[review] checklists: unknown checklist(s) {', '.join(names)}; bundled: "
                f"{', '.join(sorted(checklists))}, or a repository path ending in .yaml"
            )
    return None


def parse_repo_config(
    text: str,
    origin: str = CONFIG_PATH,
    *,
    rules: Collection[str] | None = None,
    checklists: Collection[str] | None = None,
) -> RepoConfig:
    """The model of a `.reviewbot.toml` text. `rules` (rule ids) and `checklists` (bundled names),
    when given, are what `disabled` and `checklists` may name. Raises RepoConfigError (one line)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RepoConfigError(f"{origin}: not valid TOML ({exc})") from None
    return _validate(data, origin, rules, checklists)


def parse_tests_table(tests: Mapping[str, object], origin: str = CONFIG_PATH) -> TestConfig | None:
    """A `[tests]` table on its own (None when empty); RepoConfigError names what to fix."""
    return _validate({"tests": tests}, origin, None, None).tests if tests else None


def _validate(
    data: Mapping[str, object], origin: str, rules: Collection[str] | None, checklists: Collection[str] | None
) -> RepoConfig:
    problem = _unknown(data)
    if problem is None:
        tests = data.get("tests")
        if isinstance(tests, dict):
            # An explicit `junit` glob changes what missing JUnit output means.
            data = {**data, "tests": {**tests, "junit_configured": "junit" in tests}}
        try:
            parsed = _File.model_validate(data)
        except ValidationError as exc:
            problem = _problem(exc.errors()[0])
        else:
            problem = _check_names(parsed.review, rules, checklists)
    if problem is not None:
        raise RepoConfigError(f"{origin}: {problem}")
    return RepoConfig(review=parsed.review, tests=parsed.tests, cpp=parsed.cpp, source=origin)


def load_repo_config(
    base_tree: RepoTree | None,
    *,
    rules: Collection[str] | None = None,
    checklists: Collection[str] | None = None,
    origin: str = BASE_ORIGIN,
    revision: str = "the base revision",
) -> RepoConfig:
    """The base revision's `.reviewbot.toml`, or the defaults when there is none. Repository
    checklists (paths ending in .yaml/.yml) are read from the base too and must exist there.
    (`reviewbot config check` reads a working tree: `origin` and `revision` name it in the errors.)"""
    if base_tree is None:
        return RepoConfig()
    text = base_tree.read(CONFIG_PATH)
    if text is None:
        return RepoConfig()
    cfg = parse_repo_config(text, origin, rules=rules, checklists=checklists)
    texts: dict[str, str] = {}
    for name in cfg.checklists:
        if name.endswith((".yaml", ".yml")):
            body = base_tree.read(name)
            if body is None:
                raise RepoConfigError(
                    f"{origin}: [review] checklists: {name} is not in {revision}; "
                    "give a path from the repository root"
                )
            texts[name] = body
    return cfg.model_copy(update={"repo_checklists": texts})
