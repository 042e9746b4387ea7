"""The message catalogue: both languages, same keys, same placeholders; rendering rules."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import CATALOGUE_PATH, LANGS, catalogue, msg, placeholders


def test_every_message_has_both_languages_with_the_same_placeholders() -> None:
    data = yaml.safe_load(CATALOGUE_PATH.read_text(encoding="utf-8"))
    assert set(data) == set(LANGS)
    en, zh = data["en"], data["zh"]
    assert set(en) == set(zh), (
        f"only in en: {sorted(set(en) - set(zh))}; only in zh: {sorted(set(zh) - set(en))}"
    )
    for key in en:
        assert placeholders(en[key]) == placeholders(zh[key]), key


def test_no_key_is_written_twice_in_a_language() -> None:
    """YAML keeps the last of two equal keys silently: a key added twice would hide one text."""
    seen: dict[str, int] = {}
    for line in CATALOGUE_PATH.read_text(encoding="utf-8").splitlines():
        if line in ("en:", "zh:"):
            seen = {}
        elif line.startswith("  ") and not line.strip().startswith("#") and ":" in line:
            key = line.split(":", 1)[0].strip()
            seen[key] = seen.get(key, 0) + 1
            assert seen[key] == 1, f"{key} is written twice"


def test_render_nests_messages_and_joins_lists_per_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "messages.yaml"
    path.write_text(
        "en:\n  a: 'fields {names} at {where}'\n  b: '{path} line {line}'\n"
        "zh:\n  a: '字段 {names} 位于 {where}'\n  b: '{path} 第 {line} 行'\n",
        encoding="utf-8",
    )
    monkeypatch.setattr("reviewbot.model.messages.CATALOGUE_PATH", path)
    from reviewbot.model import messages

    monkeypatch.setattr(messages, "catalogue", lambda lang, p=path: messages._load(p)[lang])
    m = msg("a", names=["`x`", "`y`"], where=msg("b", path="a.cc", line=3))
    assert m.render("en") == "fields `x`, `y` at a.cc line 3"
    assert m.render("zh") == "字段 `x`、`y` 位于 a.cc 第 3 行"
    assert msg("no.such.key").render("zh") == "no.such.key"  # a missing text shows, never crashes


def test_finding_make_keeps_english_and_localizes(monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewbot.model import messages

    texts = {
        "en": {"t": "Field `{f}` is untested.", "e": "searched {n} file(s)"},
        "zh": {"t": "字段 `{f}` 没有测试。", "e": "搜索了 {n} 个文件"},
    }
    monkeypatch.setattr(messages, "catalogue", lambda lang, path=None: texts[lang])
    f = Finding.make(
        rule="r",
        severity=Severity.P1,
        path="a.py",
        line=1,
        anchor="x",
        title=msg("t", f="x"),
        evidence=[msg("e", n=3), "plain line"],
        suggestion="keep",
    )
    assert (f.title, f.evidence) == ("Field `x` is untested.", ("searched 3 file(s)", "plain line"))
    zh = f.localized("zh")
    assert (zh.title, zh.evidence, zh.suggestion) == (
        "字段 `x` 没有测试。",
        ("搜索了 3 个文件", "plain line"),
        "keep",
    )
    assert zh.fingerprint == f.fingerprint and f.localized("en") is f


def test_catalogue_falls_back_to_english_for_an_unknown_language() -> None:
    assert catalogue("fr") == catalogue("en")
