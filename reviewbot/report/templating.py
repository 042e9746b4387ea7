"""The jinja2 environment of the markdown report: autoescape, a sanitising `finalize`, the chrome strings.

Every `{{ expression }}` in templates/ goes through `sanitize.inline` (markdown and HTML escaped, code
spans re-fenced) unless a filter or reviewbot's own chrome marked it safe (Markup): a template cannot
forget to sanitise PR-controlled text. Filters: `inline(limit)` (rule texts, cut to `limit` characters),
`plain` (names with no markdown of their own), `code` (a whole code span), `fence(lang)` (a whole fenced
block), `cell` (a table cell), `outcome(lang)` (a truth-table outcome's cell text, report.truth_tables);
`executed_counts`, `executed_rows`, `ran_on_base`, `tables_counts`: an executed table's rows and counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from reviewbot import DATA_DIR
from reviewbot.model.yamltext import load_yaml
from reviewbot.report import sanitize
from reviewbot.report.truth_tables import executed_counts, executed_rows, ran_on_base, shown, tables_counts

__all__ = ["Chrome", "LANGS", "TEMPLATES", "cache_templates", "chrome", "macros", "plain_strings", "tidy"]

TEMPLATES = DATA_DIR / "templates"
LANGS = ("en", "zh")


class Chrome:
    """The report's own sentences in one language (templates/strings.yaml), marked safe.

    `t.key` and `t["key"]` give a string; `t("key", **args)` formats one, sanitising text arguments.
    """

    def __init__(self, strings: Mapping[str, str], lang: str) -> None:
        self._strings = strings
        self.lang = lang

    def __getitem__(self, key: str) -> Markup:
        return Markup(self._strings[key])

    def __getattr__(self, key: str) -> Markup:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __call__(self, key: str, **args: object) -> Markup:
        return Markup(self._strings[key].format(**{k: _arg(v) for k, v in args.items()}))


def _arg(value: object) -> object:
    if isinstance(value, Markup) or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value  # numbers keep their format specs ({n:,})
    return Markup(sanitize.inline(value))


def _finalize(value: object) -> object:
    """Every `{{ expression }}`: sanitised unless a filter or reviewbot's chrome marked it safe."""
    return value if isinstance(value, Markup) else Markup(sanitize.inline(value))


def _safe(fn: Any) -> Any:
    return lambda value, *args: Markup(fn(value, *args))


def _cell(value: object) -> Markup:
    if isinstance(value, Markup):  # already rendered (a code span): only the pipes need escaping
        return Markup(str(value).replace("|", "\\|"))
    return Markup(sanitize.cell(value))


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=True,
        finalize=_finalize,
    )
    env.filters["inline"] = _safe(sanitize.inline)
    env.filters["plain"] = _safe(sanitize.plain)
    env.filters["code"] = _safe(sanitize.code_span)
    env.filters["fence"] = _safe(sanitize.fence_block)
    env.filters["cell"] = _cell
    env.filters["outcome"] = shown
    env.filters["executed_counts"] = executed_counts
    env.filters["executed_rows"] = executed_rows
    env.filters["ran_on_base"] = ran_on_base
    env.filters["tables_counts"] = tables_counts
    return env


def cache_templates(directory: Path | None) -> None:
    """Keep the templates' compiled code in `directory` (None: compile them in every process).

    Compiling the report's templates costs about 0.1 s, a tenth of a warm review of a real pull request;
    jinja2's bytecode cache keys each template by name and source checksum, so an edited template (or
    another jinja2) compiles again."""
    env = _env()
    if directory is None:
        env.bytecode_cache = None
        return
    try:
        target = directory / "templates"
        target.mkdir(parents=True, exist_ok=True)
    except OSError:
        env.bytecode_cache = None  # an unwritable cache directory only costs the compile
        return
    env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(target))


@lru_cache(maxsize=1)
def _strings() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = load_yaml((TEMPLATES / "strings.yaml").read_text(encoding="utf-8"))
    return data


def plain_strings(lang: str) -> dict[str, str]:
    """The chrome strings of `lang` as plain text (no markdown escaping: the terminal's output)."""
    strings = _strings()
    return {**strings["en"], **strings.get(lang, {})}


def chrome(lang: str) -> Chrome:
    strings = _strings()
    return Chrome({**strings["en"], **strings.get(lang, {})}, lang)


def macros(name: str) -> Any:
    """The macros of one template (`macros("report.md.j2").header(...)`)."""
    return _env().get_template(name).module


def tidy(text: str) -> str:
    """At most one blank line in a row and no trailing spaces outside code fences; no outer blank lines."""
    out: list[str] = []
    blank = False
    fence = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence:
            out.append(line)
            if stripped.rstrip() and set(stripped.rstrip()) == {"`"} and len(stripped.rstrip()) >= len(fence):
                fence = ""
            continue
        if stripped.startswith("```"):
            fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        if not line.strip():
            if blank:
                continue
            blank = True
        else:
            blank = False
        out.append(line.rstrip())
    return "\n".join(out).strip("\n")
