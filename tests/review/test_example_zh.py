"""The bundled example in Chinese: every finding's title, evidence line and suggestion is Chinese.

Identifiers, code and paths stay as they are; what is left of a sentence once they are removed must
hold CJK characters, and no English sentence of the same findings may appear in the zh report.
"""

from __future__ import annotations

import argparse
import re

import pytest

from reviewbot.commands.run import add_arguments, review_local
from reviewbot.example import ExampleRepo, build_example
from reviewbot.model.finding import Finding
from reviewbot.runner import RoundOutcome
from reviewbot.settings import Settings

_CJK = re.compile(r"[\u4e00-\u9fff]")
_CODE = re.compile(r"`[^`]*`")
_PATH = re.compile(r"[\w./<>-]+\.(?:cc|h|hpp|cpp|py|txt|md|yaml|sh)(?::\d+)?|[\w.-]+(?:/[\w.-]+)+")
_ENGLISH_WORD = re.compile(r"\b[a-z]{3,}\b")  # lower-case words: identifiers are mostly removed above


def _review(example: ExampleRepo, lang: str) -> RoundOutcome:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        [
            "--path",
            str(example.path),
            "--base",
            example.base,
            "--head",
            example.round1,
            "--no-tests",
            "--lang",
            lang,
        ]
    )
    return review_local(args, Settings())


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example-zh") / "repo")


@pytest.fixture(scope="module")
def zh(example: ExampleRepo) -> RoundOutcome:
    return _review(example, "zh")


def _prose(text: str) -> str:
    """The text without code spans and paths: what a translator would have translated."""
    return _PATH.sub(" ", _CODE.sub(" ", text))


def _sentences(f: Finding) -> list[tuple[str, str]]:
    return [
        ("title", f.title),
        *((f"evidence[{i}]", e) for i, e in enumerate(f.evidence)),
        ("suggestion", f.suggestion),
    ]


def test_every_finding_sentence_is_chinese(zh: RoundOutcome) -> None:
    findings = zh.review.findings
    assert len({f.rule for f in findings}) >= 6  # the example exercises every static rule of the seed
    bad = []
    for f in findings:
        local = f.localized("zh")
        for part, text in _sentences(local):
            prose = _prose(text)
            if not text or (not _CJK.search(text) and not _ENGLISH_WORD.search(prose)):
                continue  # nothing to say, or a bare place and code (a hunk header)
            if not _CJK.search(text):
                bad.append(f"{f.rule} {part}: {text}")
    assert not bad, "\n".join(bad)


def test_the_zh_report_holds_no_english_sentence_of_its_findings(zh: RoundOutcome) -> None:
    markdown = zh.markdown
    leaked = []
    for f in zh.review.findings:
        for part, text in _sentences(f):  # the English rendering of the same findings
            prose = _prose(text)
            if len(_ENGLISH_WORD.findall(prose)) < 3:
                continue  # a place, a code line: the same in every language
            if text[:60] in markdown:
                leaked.append(f"{f.rule} {part}: {text[:60]}")
    assert not leaked, "\n".join(leaked)


def test_english_report_is_unchanged_by_the_catalogue(example: ExampleRepo) -> None:
    en = _review(example, "en")
    assert not _CJK.search("\n".join(t for f in en.review.findings for _, t in _sentences(f)))
    titles = {f.rule: f.title for f in en.review.findings}
    assert titles["flag-overloading"].endswith("setting it for one switches the others.")
    assert titles["duplicated-predicate"].endswith("name it once and reuse it.")
