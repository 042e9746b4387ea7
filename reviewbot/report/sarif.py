"""SARIF 2.1.0 for code scanning: the rules with their documentation, each finding with its evidence.

- every registered rule is a `reportingDescriptor`: its one-line summary, its "What it does" as
  `fullDescription` and its whole documentation (What it does / Why is this bad? / Example / Use
  instead) as `help`: `markdown` as written (code scanning renders it next to an alert) and `text` as
  plain text (headings, code fences, backticks and emphasis marks taken out) for viewers without
  markdown;
- a finding is a `result` at its line; its evidence lines are the message's further paragraphs and
  every place they name (`path:line`), with the finding's own related locations, is a
  `relatedLocation` whose message is the evidence line that names it;
- a finding with a mechanical replacement of its line carries it as a `fix` (the line's text replaced
  by the suggestion); a suggestion without one is prose in the message only, since SARIF's fixes
  are edits.
"""

from __future__ import annotations

import re

from reviewbot import __version__
from reviewbot.model.finding import Finding
from reviewbot.model.review import Review
from reviewbot.report.sarif_json import (
    SarifFix,
    SarifLocation,
    SarifLog,
    SarifResult,
    SarifRule,
    SarifRunProperties,
)

__all__ = ["render_sarif", "related_places", "plain_text", "MAX_RELATED"]

_LEVEL = {"P0": "error", "P1": "error", "P2": "warning", "P3": "note"}
# A place in an evidence line: a repository path with a file extension and a line number. Paths are
# what reviewbot itself writes (`path:line`); a colon-separated time or a URL port has no extension.
_PLACE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z]\w*):(\d+)\b")
# Code scanning shows related locations in a list; past this many the rest is in the message.
MAX_RELATED = 50


def _rule(rule_id: str, summary: str, severity: str, text: str, enabled: bool = True) -> SarifRule:
    """A rule's SARIF descriptor: its one-line summary, its "What it does" as the full description and
    its whole documentation as help."""
    body = text.split("\n", 1)[1].strip() if "\n" in text else text
    what = body.split("## What it does", 1)[-1].split("\n## ", 1)[0].strip() or summary
    return {
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.split("-")),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": " ".join(what.split())},
        "help": {"text": plain_text(text), "markdown": text},
        "defaultConfiguration": {"level": _LEVEL[severity], "enabled": enabled},
        "properties": {"severity": severity, "tags": ["reviewbot", severity]},
    }


def plain_text(markdown: str) -> str:
    """A rule page as plain text: `## Why is this bad?` -> `Why is this bad?`, fences and inline code
    marks removed (the code kept, indented), `**bold**` -> `bold`, links as `text (url)`."""
    out: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            out.append("    " + line if line else "")
            continue
        line = _HEADING.sub("", line)
        line = _LINK.sub(r"\1 (\2)", line)
        out.append(line.replace("**", "").replace("`", ""))
    return "\n".join(out).strip() + "\n"


_HEADING = re.compile(r"^#{1,6}\s+")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _location(path: str, line: int) -> SarifLocation:
    return {"artifactLocation": {"uri": path}, "region": {"startLine": max(line, 1)}}


def related_places(f: Finding) -> list[tuple[str, int, str]]:
    """(path, line, message) for every place the finding's evidence names, then its related locations;
    the finding's own line and repeats left out."""
    seen = {(f.path, f.line)}
    out: list[tuple[str, int, str]] = []
    for line_text in f.evidence:
        for m in _PLACE.finditer(line_text):
            key = (m.group(1), int(m.group(2)))
            if key not in seen:
                seen.add(key)
                out.append((key[0], key[1], line_text))
    for loc in f.related:
        if (loc.path, loc.line) not in seen:
            seen.add((loc.path, loc.line))
            out.append((loc.path, loc.line, loc.text or f"{loc.path}:{loc.line}"))
    return out[:MAX_RELATED]


def _fix(f: Finding) -> SarifFix:
    """The replacement of the finding's line: the line's text (region without column numbers: from the
    first character to the end of the line, its newline kept) becomes the replacement."""
    assert f.replacement is not None
    return {
        "description": {"text": f.suggestion or f.title},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": f.path},
                "replacements": [
                    {
                        "deletedRegion": {"startLine": max(f.line, 1)},
                        "insertedContent": {"text": f.replacement.rstrip("\n")},
                    }
                ],
            }
        ],
    }


def _result(f: Finding, rule_index: dict[str, int]) -> SarifResult:
    paragraphs = [f.title, *f.evidence]
    if f.suggestion:
        paragraphs.append(f.suggestion)
    result: SarifResult = {
        "ruleId": f.rule,
        "level": _LEVEL[f.severity.value],
        "message": {"text": "\n\n".join(paragraphs)},
        "locations": [{"physicalLocation": _location(f.path, f.line)}],
        "partialFingerprints": {"reviewbot/v1": f.fingerprint},
        "properties": {"severity": f.severity.value, "state": f.state},
    }
    if f.rule in rule_index:
        result["ruleIndex"] = rule_index[f.rule]
    related = related_places(f)
    if related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _location(path, line), "message": {"text": text}}
            for i, (path, line, text) in enumerate(related, 1)
        ]
    if f.replacement is not None:
        result["fixes"] = [_fix(f)]
    return result


def render_sarif(review: Review) -> SarifLog:
    """The review as one SARIF 2.1.0 log (valid against the OASIS schema; tests/report/test_sarif.py)."""
    from reviewbot.checks.registry import CHECKS, OPT_IN, doc

    rules = [
        _rule(rid, m.summary, m.severity.value, doc(rid), rid not in OPT_IN) for rid, m in CHECKS.items()
    ]
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    # The round's verdict, for a CI step that fails on BLOCKING after the upload (action.yml); and the
    # truth tables run in the sandbox with their executed rows (the generated test file is in the JSON).
    executed = [t.facts_json() for t in review.executed_tables]
    properties: SarifRunProperties = {"status": review.status.value, "summary": review.summary()}
    if executed:
        properties["executedTables"] = executed
    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "reviewbot",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": [_result(f, rule_index) for f in review.findings],
                "properties": properties,
            }
        ],
    }
