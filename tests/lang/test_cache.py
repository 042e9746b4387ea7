"""The facts cache: same review with and without it, hits on the next round, versions kept apart,
bounded size, and a broken cache file that only costs the parses it would have saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.change.diff import load_change
from reviewbot.example import ExampleRepo, build_example
from reviewbot.lang import cache as cache_mod
from reviewbot.lang.cache import FactsCache, facts_key, open_cache, use
from reviewbot.lang.parse import parse_file
from reviewbot.report.render import render_json
from reviewbot.review.pipeline import ReviewSettings, review_change

SOURCE = (
    "class Cfg:\n    def derive(self):\n        if self.mode == 1:\n            self.need_cache = False\n"
)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("ex") / "pr1361")


def _review(example: ExampleRepo, head: str, store: FactsCache | None) -> tuple[str, dict[str, int] | None]:
    change = load_change(example.path, example.base, head)
    try:
        review = review_change(change, ReviewSettings(facts_cache=store))
    finally:
        change.close()
    doc = render_json(review)
    stats = doc["kpi"].pop("facts_cache", None)
    for volatile in ("reviewed_at", "repository"):
        doc.pop(volatile, None)
    doc["kpi"].pop("timings_ms", None)
    return json.dumps(doc, sort_keys=True), stats


def test_same_review_with_and_without_the_cache(example: ExampleRepo, tmp_path: Path) -> None:
    store = FactsCache(tmp_path / "facts.sqlite")
    plain, none = _review(example, example.round1, None)
    cold, first = _review(example, example.round1, store)
    warm, second = _review(example, example.round1, store)
    assert none is None
    assert plain == cold == warm
    assert first is not None and first["hits"] == 0 and first["misses"] > 0
    # The same round again parses nothing: every file comes from the cache.
    assert second == {"hits": first["misses"], "misses": 0}
    # Round 2 (tests added) reuses what did not change.
    round2, third = _review(example, example.round2, store)
    assert third is not None and third["hits"] > 0
    assert round2 == _review(example, example.round2, None)[0]


def test_a_cache_of_another_analyser_version_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FactsCache(tmp_path / "facts.sqlite")
    facts = parse_file("cfg.py", SOURCE)
    assert facts is not None
    store.put(facts_key("cfg.py", SOURCE, None), facts)
    assert store.get(facts_key("cfg.py", SOURCE, None)) == facts
    monkeypatch.setattr(cache_mod, "__version__", "999.0")
    cache_mod.analyser_version.cache_clear()
    try:
        assert store.get(facts_key("cfg.py", SOURCE, None)) is None
    finally:
        monkeypatch.undo()
        cache_mod.analyser_version.cache_clear()
    # Path, text and focus are part of the key too.
    keys = {
        facts_key("cfg.py", SOURCE, None),
        facts_key("other.py", SOURCE, None),
        facts_key("cfg.py", SOURCE + "\n", None),
        facts_key("cfg.py", SOURCE, "words:need_cache"),
        facts_key("cfg.py", SOURCE, "words:"),
        # Two foci with the same letters are two keys (a focus is not a bag of characters).
        facts_key("cfg.py", SOURCE, "words:ab"),
        facts_key("cfg.py", SOURCE, "words:ba"),
    }
    assert len(keys) == 7


def test_parse_file_uses_the_active_cache(tmp_path: Path) -> None:
    store = FactsCache(tmp_path / "facts.sqlite")
    with use(store):
        first = parse_file("cfg.py", SOURCE)
        again = parse_file("cfg.py", SOURCE)
        # A focus without a key cannot be cached: parsed, not stored.
        parse_file("cfg.py", SOURCE, lambda body: True)
    assert first == again and (store.hits, store.misses) == (1, 1)
    assert cache_mod.active() is None


def test_the_cache_stays_within_its_bound(tmp_path: Path) -> None:
    store = FactsCache(tmp_path / "facts.sqlite", max_bytes=20_000)
    for i in range(200):
        text = SOURCE.replace("need_cache", f"flag_{i}")
        facts = parse_file(f"m{i}.py", text)
        assert facts is not None
        store.put(facts_key(f"m{i}.py", text, None), facts)
    assert 0 < store.size() <= 20_000
    newest = SOURCE.replace("need_cache", "flag_199")
    assert store.get(facts_key("m199.py", newest, None)) is not None  # the least recently used went


def test_a_broken_cache_file_costs_only_the_parses(tmp_path: Path) -> None:
    path = tmp_path / "facts.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    store = FactsCache(path)
    with use(store):
        facts = parse_file("cfg.py", SOURCE)
    assert facts is not None and [a.field for a in facts.assignments] == ["need_cache"]


def test_open_cache_is_off_at_zero_and_shared_per_file(tmp_path: Path) -> None:
    assert open_cache(tmp_path, 0) is None
    one = open_cache(tmp_path, 8)
    assert one is not None and one is open_cache(tmp_path, 8) and one.path == tmp_path / "facts.sqlite"
