"""The C++ truth-table harness on the bundled example: real git, real front ends, the real pipeline, the
generated `_test.cc` really compiled with the repository's g++ line and run in the sandbox on both sides.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reviewbot.change.diff import load_change
from reviewbot.change.git import checkout
from reviewbot.example import ExampleRepo, build_example
from reviewbot.execution.config import TestConfig
from reviewbot.execution.cpp_harness import cpp_harness
from reviewbot.execution.cpp_harness_compile import Compile, cpp_compile
from reviewbot.execution.cpp_harness_run import _read as cpp_read
from reviewbot.execution.cpp_harness_run import run_cpp_tables
from reviewbot.execution.execute import ExecSettings, Execution, execute
from reviewbot.execution.sandbox import Limits
from reviewbot.lang.index import RepoIndex
from reviewbot.model.change import ChangeSet
from reviewbot.model.executed import Executed, ExecutedTable
from reviewbot.model.review import Review
from reviewbot.model.truthtable import TruthTable
from reviewbot.report.comment import render_markdown
from reviewbot.report.sarif import render_sarif
from reviewbot.review.pipeline import ReviewSettings, review_change, tables_for_context
from tests.execution.test_executed_tables import _review as review_mini

CC = "rtp_llm/cpp/config/ModelConfig.cc"
STYLE, KV, INPUT = "config.rope_config.style", "use_kvcache", "attn_config.need_rope_kv_cache"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the example's tests compile with g++")


@dataclasses.dataclass
class Round:
    review: Review
    change: ChangeSet
    tables: list[TruthTable]
    index: RepoIndex


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


@pytest.fixture(scope="module")
def round1(example: ExampleRepo) -> Round:
    seen: dict[str, Any] = {}

    def run(change: Any, derivations: Any) -> Execution:
        ex = execute(change, example.path, derivations, ExecSettings(time_budget_s=120))
        hook = ex.tables
        assert hook is not None

        def tables(change: Any, tables: Any, facts: Any, index: Any) -> Any:
            seen.update(tables=tables, index=index)
            return hook(change, tables, facts, index)

        ex.tables = tables
        return ex

    change = load_change(example.path, example.base, example.round1)
    review = review_change(change, ReviewSettings(execute=run, truth_tables=tables_for_context))
    return Round(review, change, seen["tables"], seen["index"])


def _table(r: Round) -> ExecutedTable:
    (table,) = [t for t in r.review.executed_tables if t.path == CC]
    return table


def test_example_table_executed_row_for_row_and_verified(round1: Round) -> None:
    t = _table(round1)
    assert t.ran and t.reason == "" and t.harness is not None and t.harness.kind == "cpp"
    assert t.harness.owner == "rtp_llm::ModelConfig" and t.harness.function == "getAttentionConfigs"
    # The local `config` copies `attn_config.rope_config`: the column is set through that member.
    assert dict(t.harness.keywords) == {STYLE: "attn_config.rope_config.style", KV: KV, INPUT: INPUT}
    assert len(t.rows) == 8
    assert all(r.agrees_head is True and r.agrees_base is True for r in t.rows)
    # The embedding row: base keeps `true`, head gives `false`, both executed as predicted.
    (changed,) = [r for r in t.rows if r.changed]
    assert changed.inputs == {STYLE: "No", KV: False, INPUT: True}
    assert (changed.head.value, changed.base.value) == ("False", "True")
    assert t.fails_on_base == (changed.index,) and t.verified
    assert t.defaults_head.outcome == "value" and t.defaults_head.value == "True"
    assert "owner.attn_config.rope_config.style = row->c0;" in t.test_code
    assert "return owner.getAttentionConfigs(1).need_rope_kv_cache;" in t.test_code
    assert not t.wrong_rows and not t.defaults_raise
    # missing-tests offers that test, as C++, said verified.
    (missing,) = [f for f in round1.review.findings if f.rule == "missing-tests"]
    assert (missing.suggestion_code, missing.suggestion_lang) == (t.test_code, "cpp")
    assert dict(missing.extra)["verified"] == "passes on head, fails on base"


def test_generated_test_passes_on_head_and_fails_on_base(
    round1: Round, example: ExampleRepo, tmp_path: Path
) -> None:
    """The verified sketch is a real test: compiled as run_tests.sh compiles, exit 0 on the head, 1 on the base."""
    code = _table(round1).test_code
    exits = []
    for side, sha in (("head", example.round1), ("base", example.base)):
        tree = tmp_path / side
        checkout(example.path, sha, tree)
        (tree / "table_test.cc").write_text(code, encoding="utf-8")
        subprocess.run(
            ["g++", "-std=c++17", "-I.", "-o", "table_test", "table_test.cc", CC], cwd=tree, check=True
        )
        done = subprocess.run(["./table_test"], cwd=tree, capture_output=True, text=True, check=False)
        exits.append((done.returncode, done.stdout))
    (head_exit, _), (base_exit, base_out) = exits
    assert head_exit == 0 and base_exit == 1
    assert base_out.startswith("FAILED r2: got True, want False")


def test_compile_command_comes_from_the_tests_script(round1: Round, example: ExampleRepo) -> None:
    found = cpp_compile(round1.change, example.path, "sh run_tests.sh", CC)
    assert isinstance(found, Compile)
    assert (found.compiler, found.flags, found.sources) == ("g++", ("-std=c++17", "-I."), (CC,))
    assert found.origin.startswith("run_tests.sh:")
    refused = cpp_compile(round1.change, example.path, "python3 -m pytest", CC)
    assert refused == (
        "no C++ compile command: the [tests] command `python3 -m pytest` runs no script of the repository "
        "with a g++/clang++ line"
    )


def test_a_column_no_member_sets_is_refused_with_its_reason(round1: Round, example: ExampleRepo) -> None:
    (table,) = [t for t in round1.tables if t.path == CC]
    text = (round1.change.file(CC) or pytest.fail("no file")).head_text
    compile_ = cpp_compile(round1.change, example.path, "sh run_tests.sh", CC)
    # `config.fuse_qkv_add_bias` is computed in the method, not copied from a member: nothing sets it.
    local = dataclasses.replace(table.variables[1], name="config.fuse_qkv_add_bias")
    bad = dataclasses.replace(table, variables=(table.variables[0], local, table.variables[2]))
    why = cpp_harness(bad, text, round1.index, example.path, example.round1, compile_)
    assert (
        why
        == "the column `config.fuse_qkv_add_bias` is a field of the local `config` that no single copy of a member sets"
    )
    free = dataclasses.replace(table, function="derive")
    assert cpp_harness(free, text, round1.index, example.path, example.round1, compile_) == (
        "the derivation runs in `derive`, not in a method of a class"
    )
    no_build = cpp_harness(table, text, round1.index, example.path, example.round1, "no C++ compile command")
    assert no_build == "no C++ compile command"
    # The local's copied member overwritten afterwards: the member no longer decides the column.
    assert text is not None
    copy = "config.rope_config        = attn_config.rope_config;"
    assert copy in text
    overwritten = text.replace(copy, copy + " config.rope_config.style = RopeStyle::Base;")
    assert cpp_harness(table, overwritten, round1.index, example.path, example.round1, compile_) == (
        "the column `config.rope_config.style` is a field of the local `config` that no single copy of a member sets"
    )


def test_a_refused_table_is_not_run_and_says_why(round1: Round, example: ExampleRepo, tmp_path: Path) -> None:
    (table,) = [t for t in round1.tables if t.path == CC]
    cfg = TestConfig(command="python3 -m pytest")
    runs = run_cpp_tables(
        round1.change,
        example.path,
        {3: table},
        round1.index,
        cfg=cfg,
        sandbox="subprocess",
        limits=Limits(),
        timeout=60,
        scratch=tmp_path,
    )
    (t,) = runs.tables.values()
    assert list(runs.tables) == [3] and t.harness is None and not t.ran and not t.rows and not t.verified
    assert t.reason.startswith("no C++ compile command: the [tests] command `python3 -m pytest`")
    assert list(tmp_path.iterdir()) == []  # nothing compiled or run


def test_pasting_the_verified_test_makes_missing_tests_go_away(round1: Round, tmp_path: Path) -> None:
    """The next round with the offered file added under the C++ tests run_tests.sh compiles."""
    repo = build_example(tmp_path / "repo")
    git = ["git", "-C", str(repo.path), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "checkout", "-q", repo.round1], check=True)
    pasted = repo.path / "rtp_llm/cpp/config/test/need_rope_kv_cache_table_test.cc"
    pasted.parent.mkdir(parents=True, exist_ok=True)
    pasted.write_text(_table(round1).test_code, encoding="utf-8")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "test: the verified truth-table test"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    runs: list[Execution] = []

    def run(change: Any, derivations: Any) -> Execution:
        runs.append(execute(change, repo.path, derivations, ExecSettings(time_budget_s=120)))
        return runs[-1]

    review = review_change(
        load_change(repo.path, repo.base, head), ReviewSettings(execute=run, truth_tables=tables_for_context)
    )
    assert "missing-tests" not in {f.rule for f in review.findings}
    assert not [f.rule for f in review.findings if f.path == str(pasted.relative_to(repo.path))]
    (mutant,) = runs[0].mutants
    assert mutant.status == "killed" and mutant.killed_by == ("cpp::need_rope_kv_cache_table_test",)


def test_row_lines_read_back_a_value_an_exception_a_crash_and_a_compile_error(tmp_path: Path) -> None:
    tt = tmp_path / "tt"
    tt.mkdir()
    (tt / "results.txt").write_text(
        "ROW t0 defaults 0 EXECUTED True\n"
        "ROW t0 r1 0 RAISED std::exception: bad rope\n"
        "ROW t0 r2 134 \n"
        f"COMPILE t1 {tt}/t1_test.cc:21:5: error: 'RopeStyle' does not name a type\n",
        encoding="utf-8",
    )
    found, broken, problem = cpp_read(tt / "results.txt", tmp_path)
    assert problem == ""
    assert found[("t0", "defaults")] == Executed("value", "True")
    assert found[("t0", "r1")] == Executed("raised", "std::exception: bad rope")
    assert found[("t0", "r2")] == Executed("raised", "the row's process was killed by signal 6")
    assert broken == {"t1": "t1_test.cc:21:5: error: 'RopeStyle' does not name a type"}


CONFIG_H = """#pragma once

namespace app {

enum class Mode { Fast, Slow, Off };

struct Config {
    Mode mode = Mode::Fast;
    bool cache = false;
    bool use_rope = true;

    void finalize();
};

}  // namespace app
"""
CONFIG_BASE = """#include "config/Config.h"

namespace app {

void Config::finalize() {
    if (mode == Mode::Slow) {
        use_rope = false;
    }
}

}  // namespace app
"""
CONFIG_HEAD = CONFIG_BASE.replace("if (mode == Mode::Slow) {", "if (mode == Mode::Slow || !cache) {")


def test_a_member_written_by_a_non_const_method_is_read_from_the_owner(tmp_path: Path) -> None:
    """A mini repository: `void Config::finalize()` writes the member; its tests compile objects only
    (`-c -o build/config.o`), which the generated test drops to link a program of its own."""
    others: dict[str, str | bytes | None] = {
        "config/Config.h": CONFIG_H,
        "run_tests.sh": "mkdir -p build\ng++ -std=c++17 -I. -c -o build/config.o config/Config.cc\n",
        ".reviewbot.toml": '[tests]\ncommand = "sh run_tests.sh"\ntimeout = 120\n',
    }
    _, doc = review_mini(tmp_path, CONFIG_BASE, CONFIG_HEAD, "config/Config.cc", others)
    (t,) = doc["executed_tables"]
    h = t["harness"]
    assert (h["kind"], h["owner"], h["function"], h["target"]) == (
        "cpp",
        "app::Config",
        "finalize",
        "use_rope",
    )
    assert t["executed"] and t["reason"] == "" and t["wrong_rows"] == [] and t["verified"]
    assert len(t["rows"]) == 8 and all(r["agrees"] == {"base": True, "head": True} for r in t["rows"])
    # The changed row: (Mode <other>, no cache, use_rope true) keeps true on the base, false on the head.
    (changed,) = [r for r in t["rows"] if r["changed"]]
    assert changed["executed"]["head"]["value"] == "False" and changed["executed"]["base"]["value"] == "True"
    assert "    owner.finalize();\n    return owner.use_rope;\n" in t["test"]
    assert "-c" not in t["test"].split("//   g++", 1)[1].split("\n", 1)[0].split()


def test_the_markdown_shows_the_executed_table_and_the_tests_section_adds_the_tables_up(
    round1: Round,
) -> None:
    text = render_markdown(round1.review, budget=60_000)
    assert (
        "`config.need_rope_kv_cache` @ `rtp_llm/cpp/config/ModelConfig.cc:20` · run in the sandbox (cpp harness): "
        "8 of 8 rows as predicted on the head and the base. Its generated test is verified: it passes on the "
        "head and fails on the base."
    ) in text
    assert "| No | False | True | keeps input | true | false | false | **changed** |" in text
    assert "| base | head | |" not in text  # the executed table replaces the predicted one
    assert (
        "Truth tables run in the sandbox: 1; 8 of 8 rows as predicted on the head and the base. "
        "1 generated test(s) verified (pass on the head, fail on the base)."
    ) in render_markdown(round1.review)


def test_sarif_carries_the_executed_rows(round1: Round) -> None:
    (table,) = render_sarif(round1.review)["runs"][0]["properties"]["executedTables"]
    assert (table["target"], table["executed"], table["agreed"], table["verified"]) == (
        "config.need_rope_kv_cache",
        True,
        8,
        True,
    )
    assert len(table["rows"]) == 8 and "test" not in table  # the generated file stays in the JSON report
