"""The round-history page as one self-contained HTML document (templates/history.html.j2), en or zh.

The page has no external assets and no scripts: the CSS is inline and a Content-Security-Policy meta
tag forbids the browser to load anything else, so the file reads the same offline, from disk or served.

Its own sentences are in templates/history.yaml (one section per language, like strings.yaml); finding
texts are shown as the rounds stored them. Every `{{ expression }}` is HTML-escaped by jinja2's
autoescape and has control and direction characters shown as escapes (`\\u202e`), so text from the pull
request can neither add markup nor reorder what the page shows. `rich` renders a finding's sentence
with its backtick spans as <code>; `block` keeps the newlines of command output in a <pre>.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2
from markupsafe import Markup, escape

from reviewbot.model.untrusted import escape_controls
from reviewbot.model.yamltext import load_yaml
from reviewbot.report.history_page import STATES, PrHistory
from reviewbot.report.sanitize import segments
from reviewbot.report.templating import LANGS, TEMPLATES, Chrome

__all__ = ["PageTexts", "page_texts", "render_history_html", "CSP"]

# What the page may load: nothing but its own inline style. No script runs.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


class PageTexts(Chrome):
    """The page's sentences in one language: `t.key`, or `t("key", **args)` with the arguments escaped
    for HTML (the report's `Chrome` escapes them for markdown)."""

    def __call__(self, key: str, **args: object) -> Markup:
        return Markup(self._strings[key]).format(**{k: _safe_arg(v) for k, v in args.items()})


def _shown(value: object) -> str:
    return escape_controls(str(value))


def _safe_arg(value: object) -> object:
    if isinstance(value, Markup) or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    return escape(_shown(value))


def _finalize(value: object) -> object:
    """Every `{{ expression }}`: controls shown as escapes (autoescape then escapes the markup)."""
    return value if isinstance(value, Markup) or value is None else _shown(value)


def _rich(value: object) -> Markup:
    """A finding's sentence: its backtick spans as <code>, the rest as text."""
    return Markup("").join(
        Markup("<code>{}</code>").format(s.text) if s.code else escape(s.text) for s in segments(value)
    )


def _block(value: object) -> Markup:
    """Lines of output for a <pre>: newlines kept, other controls shown as escapes."""
    return escape(escape_controls(str(value), keep="\n"))


def _cell(value: object) -> str:
    """A truth-table input value as the JSON report holds it (true/false as C++ and JSON write them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "—" if value is None else _shown(value)


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["rich"] = _rich
    env.filters["cell"] = _cell
    env.filters["block"] = _block
    return env


@lru_cache(maxsize=1)
def _strings() -> dict[str, dict[str, str]]:
    data = load_yaml((TEMPLATES / "history.yaml").read_text(encoding="utf-8"))
    return {lang: {str(k): str(v) for k, v in (data.get(lang) or {}).items()} for lang in LANGS}


def page_texts(lang: str) -> PageTexts:
    strings = _strings()
    return PageTexts({**strings["en"], **strings.get(lang, {})}, lang)


def render_history_html(history: PrHistory, lang: str = "en") -> str:
    """The page of `history` in `lang` (en or zh): one HTML document, nothing external."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; one of {', '.join(LANGS)}")
    return (
        _env()
        .get_template("history.html.j2")
        .render(
            h=history if lang == "en" else history.in_lang(lang),
            t=page_texts(lang),
            lang=lang,
            csp=CSP,
            states=STATES,
            severities=("P0", "P1", "P2", "P3"),
        )
    )
