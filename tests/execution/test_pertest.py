"""Per-test attribution without configuration (issue 17 item 6): a plain `make test` is enough.

The seed-shaped repository is the bundled example's files with its test entry point replaced by a
Makefile whose `test` target runs pytest (and, where GoogleTest is installed, a GoogleTest binary)
with no JUnit option of its own: reviewbot asks pytest and GoogleTest for per-test reports itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from reviewbot.change.diff import load_change
from reviewbot.example import EXAMPLE_DIR
from reviewbot.execution.config import TestConfig
from reviewbot.execution.execute import ExecSettings, Execution, execute
from reviewbot.execution.pertest import ctest_supports_junit
from reviewbot.execution.runner import run_tests
from reviewbot.execution.sandbox import Limits, detect_sandbox
from reviewbot.model.review import Review
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.gitrepo import Repo

SMOKE = "rtp_llm/test/test_bert_smoke.py"
GTEST_CC = "rtp_llm/cpp/config/test/attention_configs_gtest.cc"
MAKE_PYTEST = "test:\n\tpython3 -m pytest -q -p no:cacheprovider rtp_llm/test\n"
MAKE_BOTH = (
    "test: py cpp\n"
    "py:\n\tpython3 -m pytest -q -p no:cacheprovider rtp_llm/test\n"
    "cpp:\n\tmkdir -p build\n"
    f"\tg++ -std=c++17 -I. -o build/attention_configs_gtest {GTEST_CC} rtp_llm/cpp/config/ModelConfig.cc"
    " -lgtest -lgtest_main -pthread\n"
    "\t./build/attention_configs_gtest\n"
)
# The example's C++ truth-table test as a GoogleTest suite: kills the mutant of the new branch.
GTEST = """#include <gtest/gtest.h>

#include "rtp_llm/cpp/config/ModelConfig.h"

using namespace rtp_llm;

static AttentionConfigs derive(RopeStyle style, bool use_kvcache, bool need_rope_kv_cache) {
    ModelConfig model;
    model.attn_config.head_num = 8;
    model.attn_config.rope_config.style = style;
    model.attn_config.need_rope_kv_cache = need_rope_kv_cache;
    model.use_kvcache = use_kvcache;
    return model.getAttentionConfigs(1);
}

TEST(NeedRopeKvCache, EmbeddingRowIsCleared) {
    EXPECT_FALSE(derive(RopeStyle::No, false, true).need_rope_kv_cache);
}

TEST(NeedRopeKvCache, KvCacheKeepsInput) {
    EXPECT_TRUE(derive(RopeStyle::No, true, true).need_rope_kv_cache);
}
"""


def _seed(path: Path, makefile: str, *, gtest: bool) -> tuple[Repo, str, str, str]:
    """The example's base, round 1 and round 2 with `make test` as the configured command."""
    repo = Repo(path)
    shutil.copytree(EXAMPLE_DIR / "base", path, dirs_exist_ok=True)
    (path / "run_tests.sh").unlink()
    base = repo.commit(
        {".reviewbot.toml": '[tests]\ncommand = "make test"\ntimeout = 120\n', "Makefile": makefile}
    )
    repo.checkout("pr", create=True)
    shutil.copytree(EXAMPLE_DIR / "round1", path, dirs_exist_ok=True)
    round1 = repo.commit({}, "round 1")
    round2 = repo.commit(
        {SMOKE: (EXAMPLE_DIR / "round2" / SMOKE).read_text(), **({GTEST_CC: GTEST} if gtest else {})},
        "round 2",
    )
    return repo, base, round1, round2


def _review(repo: Repo, base: str, head: str) -> tuple[Review, Execution]:
    runs: list[Execution] = []

    def run(change: Any, derivations: Any) -> Execution:
        runs.append(execute(change, repo.path, derivations, ExecSettings(time_budget_s=120)))
        return runs[-1]

    review = review_change(load_change(repo.path, base, head), ReviewSettings(execute=run))
    return review, runs[0]


def test_make_test_running_pytest_flags_the_smoke_test_as_ineffective(tmp_path: Path) -> None:
    repo, base, _, round2 = _seed(tmp_path / "seed", MAKE_PYTEST, gtest=False)
    assert "junit" not in (repo.path / "Makefile").read_text()  # nothing asks for JUnit but reviewbot
    review, ex = _review(repo, base, round2)
    assert ex.head is not None and ex.head.exit_code == 0
    assert ex.head.junit_files == ["reports/pytest.xml"]  # the report reviewbot asked pytest for
    assert ex.summary["per_test"] is True and ex.summary["ran"] == 3
    assert "rtp_llm.test.test_bert_smoke::test_bert_embedding_forward" in ex.head.passed
    (smoke,) = [f for f in review.findings if f.rule == "ineffective-test"]
    assert (smoke.path, smoke.line) == (SMOKE, 7) and "`test_bert_embedding_forward`" in smoke.title
    (mutant,) = ex.mutants
    assert mutant.status == "survived" and mutant.run is not None
    assert mutant.run.cases["rtp_llm.test.test_bert_smoke::test_bert_embedding_forward"].passed


@pytest.mark.skipif(
    not Path("/usr/include/gtest/gtest.h").exists() or shutil.which("g++") is None,
    reason="GoogleTest (Debian's libgtest-dev, installed by .ci/run) or g++ is not installed",
)
def test_make_test_with_a_googletest_binary_kills_the_mutant_per_test(tmp_path: Path) -> None:
    repo, base, _, round2 = _seed(tmp_path / "seed", MAKE_BOTH, gtest=True)
    review, ex = _review(repo, base, round2)
    assert ex.head is not None and ex.head.exit_code == 0, ex.head.output if ex.head else ""
    assert sorted(ex.head.junit_files) == ["reports/gtest/attention_configs_gtest.xml", "reports/pytest.xml"]
    gtest_cases = {k: c for k, c in ex.head.cases.items() if k.startswith("NeedRopeKvCache::")}
    assert set(gtest_cases) == {
        "NeedRopeKvCache::EmbeddingRowIsCleared",
        "NeedRopeKvCache::KvCacheKeepsInput",
    }
    assert {c.file for c in gtest_cases.values()} == {GTEST_CC}  # attributed to its file in the repository
    (mutant,) = ex.mutants
    assert mutant.status == "killed" and mutant.killed_by == ("NeedRopeKvCache::EmbeddingRowIsCleared",)
    rules = {f.rule for f in review.findings}
    assert "untested-branch" not in rules and "missing-tests" not in rules
    # The smoke test, and the GoogleTest row the new branch does not touch, pass with it reverted.
    flagged = sorted((f.path, f.extra) for f in review.findings if f.rule == "ineffective-test")
    assert [(path, dict(extra)["test"]) for path, extra in flagged] == [
        (GTEST_CC, "NeedRopeKvCache::KvCacheKeepsInput"),
        (SMOKE, "rtp_llm.test.test_bert_smoke::test_bert_embedding_forward"),
    ]


@pytest.mark.skipif(
    shutil.which("ctest") is None or not ctest_supports_junit(shutil.which("ctest") or "ctest"),
    reason="no ctest with --output-junit (CMake >= 3.21) on PATH",
)
def test_a_plain_ctest_run_reports_each_test(tmp_path: Path) -> None:
    ws = tmp_path / "tree"
    ws.mkdir()
    (ws / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\nenable_testing()\n"
        'add_test(NAME passes COMMAND sh -c "exit 0")\nadd_test(NAME fails COMMAND sh -c "exit 1")\n'
    )
    command = "cmake -S . -B build >/dev/null && cd build && ctest"
    kind = detect_sandbox(tmp_path / "probe")
    run = run_tests(
        TestConfig(command=command),
        ws,
        tmp_path / "run",
        label="head",
        sandbox=kind,
        limits=Limits(),
        timeout=60,
    )
    assert run.exit_code != 0, run.output
    assert [f for f in run.junit_files if f.startswith("reports/ctest-")], run.junit_files
    outcomes = {c.name: c.outcome for c in run.cases.values()}
    assert outcomes == {"passes": "passed", "fails": "failed"}
