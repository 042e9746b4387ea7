"""The message catalogue: every sentence a user reads has an id, arguments and a text per language.

Rules and stages build `Message`s (`msg("missing-tests.title", what="new", ...)`); the renderer picks the
language (`Message.render("zh")`). The texts live in `templates/messages.yaml`, one section per language
with the same keys and the same placeholders (a test holds every key to that). Arguments are rendered too:
a nested `Message` in the same language, a list joined the way the language joins lists. Identifiers,
code and paths are arguments, so they stay as they are in every language.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from reviewbot import DATA_DIR
from reviewbot.model.yamltext import load_yaml

__all__ = [
    "LANGS",
    "Message",
    "msg",
    "listing",
    "clauses",
    "catalogue",
    "render",
    "placeholders",
    "texts_of",
    "CATALOGUE_PATH",
    "code_span",
]

LANGS = ("en", "zh")
CATALOGUE_PATH = DATA_DIR / "templates" / "messages.yaml"
_LIST_SEP = {"en": ", ", "zh": "、"}


@dataclass(frozen=True)
class Message:
    key: str
    args: tuple[tuple[str, object], ...] = ()

    def render(self, lang: str = "en") -> str:
        return render(self, lang)

    def __str__(self) -> str:
        return self.render("en")


def msg(key: str, **args: object) -> Message:
    """A message; list arguments become tuples so the record stays hashable and comparable."""
    fixed = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in args.items()))
    return Message(key, fixed)


def listing(items: Sequence[object], shown: int = 3) -> Message | tuple[object, ...]:
    """`a, b, c and 4 more`: the first `shown` items, then a count of the rest (in every language)."""
    head = tuple(items[:shown])
    rest = len(items) - shown
    return msg("common.and-more", items=head, rest=rest) if rest > 0 else head


def clauses(parts: Sequence[Message | str]) -> Message | str:
    """Parts joined the way a language joins clauses of one sentence (`a; b; c`)."""
    if len(parts) == 1:
        return parts[0]
    return msg("common.clauses", first=parts[0], rest=clauses(parts[1:])) if parts else ""


@lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, dict[str, str]]:
    data = load_yaml(path.read_text(encoding="utf-8")) or {}
    return {lang: {str(k): str(v) for k, v in (data.get(lang) or {}).items()} for lang in LANGS}


def catalogue(lang: str, path: Path = CATALOGUE_PATH) -> Mapping[str, str]:
    texts = _load(path)
    return texts.get(lang) or texts["en"]


def _arg(value: object, lang: str) -> str:
    if isinstance(value, Message):
        return render(value, lang)
    if isinstance(value, tuple):
        return _LIST_SEP.get(lang, ", ").join(_arg(v, lang) for v in value)
    return str(value)


# A code span of a catalogue text: `{name}`, `{name}={sample}`, `if envs.{name}.get():`.
_TEMPLATE_SPAN = re.compile(r"`([^`\n]*\{[^`\n]*)`")
_BACKTICKS = re.compile(r"`+")


def code_span(value: str) -> str:
    """`value` as one CommonMark code span: fenced by a backtick run longer than any inside it, and
    padded when it starts or ends with a backtick, so a name with backticks reads back exactly."""
    run = "`" * (max((len(m) for m in _BACKTICKS.findall(value)), default=0) + 1)
    if value[:1] == "`" or value[-1:] == "`" or (value[:1] == value[-1:] == " " and value.strip()):
        value = f" {value} "
    return f"{run}{value}{run}"


def _fill(template: str, args: Mapping[str, str]) -> str:
    """`template` with `args`; each code span of the template is fenced for what was put in it (an
    identifier, a path or a code line from a pull request may hold backticks of its own)."""
    out: list[str] = []
    at = 0
    for m in _TEMPLATE_SPAN.finditer(template):
        out.append(template[at : m.start()].format(**args))
        out.append(code_span(m.group(1).format(**args)))
        at = m.end()
    out.append(template[at:].format(**args))
    return "".join(out)


def render(message: Message, lang: str = "en") -> str:
    """The message's text in `lang` (English when the language lacks the key; the key itself when the
    catalogue lacks it altogether, so a missing text shows up in tests, never as a crash)."""
    texts = catalogue(lang)
    template = texts.get(message.key) or catalogue("en").get(message.key)
    if template is None:
        return message.key
    return _fill(template, {k: _arg(v, lang) for k, v in message.args})


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def texts_of(parts: Sequence[Message | str], lang: str) -> tuple[str, ...]:
    return tuple(p.render(lang) if isinstance(p, Message) else p for p in parts)
