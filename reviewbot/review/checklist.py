"""Checklists: YAML lists of items, each failed by the findings of the rules it names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reviewbot import DATA_DIR
from reviewbot.errors import UsageError
from reviewbot.model.finding import Finding
from reviewbot.model.review import ChecklistItemResult, ChecklistResult
from reviewbot.model.yamltext import load_yaml

__all__ = [
    "ChecklistItem",
    "Checklist",
    "load_checklist",
    "parse_checklist",
    "evaluate",
    "in_language",
    "BUNDLED_DIR",
]

BUNDLED_DIR = DATA_DIR / "checklists"


def in_language(texts: Mapping[str, str], lang: str) -> str:
    """The one place that picks a checklist's text by language: `lang`'s text, else the English one.

    Checklist YAML (bundled or supplied by a repository) writes `label`/`label_zh` and `name`/`name_zh`;
    a repository's own checklist may leave the Chinese out, and then shows its English text."""
    return texts.get(lang) or texts["en"]


@dataclass(frozen=True)
class ChecklistItem:
    id: str
    label: str
    label_zh: str
    rules: tuple[str, ...]

    def label_in(self, lang: str) -> str:
        return in_language({"en": self.label, "zh": self.label_zh}, lang)


@dataclass(frozen=True)
class Checklist:
    id: str
    name: str
    name_zh: str
    items: tuple[ChecklistItem, ...]

    def name_in(self, lang: str) -> str:
        return in_language({"en": self.name, "zh": self.name_zh}, lang)


def parse_checklist(text: str, origin: str, known_rules: Iterable[str] | None = None) -> Checklist:
    """Validate at load: a bad checklist is a usage error naming the file and the problem."""
    try:
        data: Any = load_yaml(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{origin}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise UsageError(f"{origin}: a checklist needs `id`, `name` and a list of `items`")
    known = set(known_rules) if known_rules is not None else None
    items: list[ChecklistItem] = []
    for n, raw in enumerate(data["items"], 1):
        if not isinstance(raw, dict) or "id" not in raw or "label" not in raw:
            raise UsageError(f"{origin}: item {n} needs `id` and `label`")
        rules = tuple(str(r) for r in raw.get("rules") or ())
        if known is not None:
            unknown = [r for r in rules if r not in known]
            if unknown:
                raise UsageError(f"{origin}: item {raw['id']} names unknown rule(s) {', '.join(unknown)}")
        items.append(
            ChecklistItem(str(raw["id"]), str(raw["label"]), str(raw.get("label_zh") or raw["label"]), rules)
        )
    cid = str(data.get("id") or Path(origin).stem)
    name = str(data.get("name") or cid)
    return Checklist(cid, name, str(data.get("name_zh") or name), tuple(items))


def load_checklist(name_or_path: str, known_rules: Iterable[str] | None = None) -> Checklist:
    """A bundled checklist by name (`general`, `rtp-llm`) or a YAML file path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = BUNDLED_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise UsageError(f"checklist not found: {name_or_path} (bundled: {', '.join(bundled_names())})")
    return parse_checklist(path.read_text(encoding="utf-8"), str(path), known_rules)


def bundled_names() -> list[str]:
    return sorted(p.stem for p in BUNDLED_DIR.glob("*.yaml"))


def evaluate(
    checklists: Sequence[Checklist],
    findings: Sequence[Finding],
    lang: str = "en",
    not_run: frozenset[str] = frozenset(),
    abstained: Mapping[str, str] | None = None,
) -> ChecklistResult:
    """Which items fail. An item whose rules all belong to a stage that did not run (`not_run`, e.g.
    the test-execution rules when tests were not run) or abstained (`abstained`: rule id -> why, in
    the report's language; missing-tests where the repository tests none of the changed logic) is
    not evaluated rather than passed, and says why when a rule abstained."""
    abstained = abstained or {}
    silent = not_run | set(abstained)
    by_rule: dict[str, list[str]] = {}
    for f in findings:
        by_rule.setdefault(f.rule, []).append(f.fingerprint)
    result = ChecklistResult()
    for cl in checklists:
        section = cl.name_in(lang)
        for item in cl.items:
            prints = tuple(fp for r in item.rules for fp in by_rule.get(r, ()))
            label = item.label_in(lang)
            evaluated = bool(prints) or not (item.rules and set(item.rules) <= silent)
            why = next((abstained[r] for r in item.rules if r in abstained), "") if not evaluated else ""
            result.items.append(
                ChecklistItemResult(
                    f"{cl.id}/{item.id}",
                    section,
                    label,
                    bool(prints),
                    tuple(dict.fromkeys(prints)),
                    evaluated,
                    why,
                )
            )
    return result


def with_checklist_refs(findings: Sequence[Finding], result: ChecklistResult) -> list[Finding]:
    """Each finding names the checklist items it failed."""
    refs: dict[str, list[str]] = {}
    for item in result.items:
        for fp in item.findings:
            refs.setdefault(fp, []).append(item.label)
    return [f.with_(checklist=tuple(refs.get(f.fingerprint, ()))) for f in findings]
