"""Render a Review with the jinja2 templates in templates/ (markdown en/zh), or as JSON / SARIF."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jinja2
import yaml

from reviewbot import DATA_DIR, __version__
from reviewbot.model.finding import Finding
from reviewbot.model.review import Review
from reviewbot.report import sanitize

__all__ = ["render_markdown", "render_finding", "render_json", "render_sarif", "LANGS"]

TEMPLATES = DATA_DIR / "templates"
LANGS = ("en", "zh")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
        autoescape=False,  # markdown, not HTML; PR-controlled text goes through the sanitize filters
    )
    env.filters["safe_text"] = sanitize.text
    env.filters["code_text"] = sanitize.code
    env.filters["fence_text"] = sanitize.fence
    env.filters["cell_text"] = sanitize.cell
    return env


@lru_cache(maxsize=1)
def _strings() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = yaml.safe_load((TEMPLATES / "strings.yaml").read_text(encoding="utf-8"))
    return data


def _t(lang: str) -> dict[str, str]:
    strings = _strings()
    return {**strings["en"], **strings.get(lang, {})}


def _squeeze(text: str) -> str:
    """At most one blank line in a row: templates stay readable, output stays tidy."""
    out: list[str] = []
    blank = False
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if blank:
                continue
            blank = True
        else:
            blank = False
        out.append(line.rstrip() if not in_fence else line)
    return "\n".join(out).strip() + "\n"


def render_markdown(review: Review, lang: str = "en", marker: str = "") -> str:
    """The summary comment / report body. `marker` is the hidden state block (see report.marker)."""
    titles = {f.fingerprint: f.title for f in review.findings}
    body = (
        _env()
        .get_template("report.md.j2")
        .render(
            review=review,
            t=_t(lang),
            titles=titles,
            kpi_json=json.dumps(review.kpi, indent=2, ensure_ascii=False, sort_keys=True),
            marker=marker,
        )
    )
    return _squeeze(body)


def render_finding(finding: Finding, lang: str = "en") -> str:
    """The body of an inline comment for one finding."""
    body = _env().get_template("finding.md.j2").render(f=finding, t=_t(lang), show_place=False)
    return _squeeze(body)


def render_json(review: Review) -> dict[str, Any]:
    return {
        "tool": {"name": "reviewbot", "version": __version__},
        "status": review.status.value,
        "round": review.round.round_index,
        "repository": review.round.repository or None,
        "pr": review.round.pr,
        "base_sha": review.base_sha,
        "head_sha": review.head_sha,
        "merge_base": review.merge_base,
        "reviewed_at": review.reviewed_at,
        "summary": review.summary(),
        "findings": [f.to_json() for f in review.findings],
        "fixed": [f.to_json() for f in review.round.fixed],
        "checklist": {
            "failed": review.checklist.failed,
            "total": review.checklist.total,
            "items": [
                {
                    "id": i.id,
                    "section": i.section,
                    "label": i.label,
                    "failed": i.failed,
                    "evaluated": i.evaluated,
                    "findings": list(i.findings),
                }
                for i in review.checklist.items
            ],
        },
        "strengths": list(review.strengths),
        "notes": [{"reason": n.reason.value, "message": n.message, "path": n.path} for n in review.notes],
        "truth_tables": review.truth_tables,
        "tests": review.tests,
        "reach": review.reach,
        "history": review.round.history,
        "kpi": review.kpi,
    }


_SARIF_LEVEL = {"P0": "error", "P1": "error", "P2": "warning", "P3": "note"}


def render_sarif(review: Review) -> dict[str, Any]:
    from reviewbot.checks.registry import CHECKS

    rules = [
        {"id": rid, "shortDescription": {"text": m.summary}, "properties": {"severity": m.severity.value}}
        for rid, m in CHECKS.items()
    ]
    results = [
        {
            "ruleId": f.rule,
            "level": _SARIF_LEVEL[f.severity.value],
            "message": {"text": f.title},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": max(f.line, 1)},
                    }
                }
            ],
            "partialFingerprints": {"reviewbot/v1": f.fingerprint},
        }
        for f in review.findings
    ]
    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [
            {
                "tool": {"driver": {"name": "reviewbot", "version": __version__, "rules": rules}},
                "results": results,
            }
        ],
    }
