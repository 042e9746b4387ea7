"""The execution stage on small real repositories: verdicts, hangs, budgets, trust and the base config."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from reviewbot.execution.execute import ExecSettings, execute
from reviewbot.model.tests import EXIT_STATUS_TEST
from tests.execution.probe import change_of, flag_derivation, make_repo, runner_command, stage_findings, toml

KILLS = """from types import SimpleNamespace as NS

from cfg import derive


def test_row():
    assert derive(NS(style=0, kv=False, flag=True)).flag is False
"""
MISSES = (
    KILLS.replace("test_row", "test_other_row").replace("style=0", "style=1").replace("False\n", "True\n")
)
# Exit status only (no JUnit): fails when the branch is gone.
CHECK_ROW = (
    "import cfg, types as t; assert not cfg.derive(t.SimpleNamespace(style=0, kv=False, flag=True)).flag"
)
# Hangs when the branch is gone.
HANG_WITHOUT_BRANCH = (
    "import pathlib, time; time.sleep(0 if 'cfg.flag = False' in pathlib.Path('cfg.py').read_text() else 60)"
)
FAST = ExecSettings(time_budget_s=60, max_workers=2)


def test_a_test_that_pins_the_row_kills_the_mutant_and_names_itself(tmp_path: Path) -> None:
    cfg = toml(runner_command("test_cfg"))
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {"test_cfg.py": KILLS})
    derivations = flag_derivation()
    ex = execute(change_of(repo, base, head), repo.path, derivations, FAST)
    assert ex.summary["ran"] == 1 and ex.summary["passed"] == 1 and ex.summary["killed"] == 1
    assert ex.killed_by(derivations[0].head) == ["test_cfg::test_row"]
    assert [f.rule for f in stage_findings(ex)] == []


def test_a_new_test_that_misses_the_branch_is_ineffective_and_the_branch_untested(tmp_path: Path) -> None:
    cfg = toml(runner_command("test_cfg"))
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {"test_cfg.py": MISSES})
    derivations = flag_derivation()
    ex = execute(change_of(repo, base, head), repo.path, derivations, FAST)
    assert ex.summary["survived"] == 1 and ex.killed_by(derivations[0].head) == []
    by_rule = {f.rule: f for f in stage_findings(ex)}
    assert set(by_rule) == {"untested-branch", "ineffective-test"}
    assert (by_rule["untested-branch"].path, by_rule["untested-branch"].line) == ("cfg.py", 2)
    assert (by_rule["ineffective-test"].path, by_rule["ineffective-test"].line) == ("test_cfg.py", 6)
    assert "`test_other_row`" in by_rule["ineffective-test"].title


def test_without_junit_the_exit_status_decides(tmp_path: Path) -> None:
    command = f'{sys.executable} -c "{CHECK_ROW}"'
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml(command)}, {})
    derivations = flag_derivation()
    ex = execute(change_of(repo, base, head), repo.path, derivations, FAST)
    assert ex.summary["per_test"] is False and ex.summary["ran"] == 1
    assert ex.killed_by(derivations[0].head) == [EXIT_STATUS_TEST]


def test_a_hanging_command_is_killed_at_its_timeout_and_the_round_goes_on(tmp_path: Path) -> None:
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml("sleep 60", timeout=1)}, {})
    started = time.monotonic()
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), FAST)
    assert time.monotonic() - started < 20
    assert ex.summary["timed_out"] is True and "did not finish within 1 s" in ex.summary["reason_if_not_run"]
    assert ex.summary["not_run"] == 1 and stage_findings(ex) == []
    assert any("did not finish within" in n.message and "killed" in n.message for n in ex.notes)
    assert ex.killed_by(flag_derivation()[0].head) is None


def test_a_mutant_that_hangs_is_killed_and_reported_without_a_verdict(tmp_path: Path) -> None:
    cfg = toml(f'{sys.executable} -c "{HANG_WITHOUT_BRANCH}"', timeout=2)
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {})
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), FAST)
    (result,) = ex.mutants
    assert result.status == "timeout" and "did not finish within 2 s" in result.reason
    assert ex.summary["passed"] == 1 and ex.summary["not_run"] == 1
    assert [f.rule for f in stage_findings(ex)] == []  # no verdict, no claim
    assert any(n.message.startswith("Mutant m1") for n in ex.notes)


def test_the_time_budget_leaves_mutants_unrun_and_says_so(tmp_path: Path) -> None:
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml("sleep 2")}, {})
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), ExecSettings(time_budget_s=4))
    (result,) = ex.mutants
    assert ex.summary["passed"] == 1 and not ex.summary["timed_out"]
    assert result.status == "not_run" and "time budget" in result.reason
    assert ex.summary["not_run"] == 1 and ex.summary["time_budget_s"] == 4
    assert any("time budget" in n.message for n in ex.notes)


def test_the_command_comes_from_the_base_never_from_the_head(tmp_path: Path) -> None:
    base_cfg = toml(runner_command("test_cfg"))
    evil = toml("touch ../../pwned; exit 0")
    repo, base, head = make_repo(
        tmp_path / "r", {".reviewbot.toml": base_cfg}, {".reviewbot.toml": evil, "test_cfg.py": KILLS}
    )
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), FAST)
    assert ex.summary["command"] == runner_command("test_cfg")
    assert ex.summary["killed"] == 1


def test_untrusted_disabled_and_unconfigured_runs_say_why(tmp_path: Path) -> None:
    cfg = toml(runner_command("test_cfg"))
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {"test_cfg.py": KILLS})
    change = change_of(repo, base, head)
    untrusted = execute(change, repo.path, flag_derivation(), ExecSettings(trusted=False))
    assert "not trusted" in untrusted.summary["reason_if_not_run"] and untrusted.summary["ran"] == 0
    assert untrusted.summary["not_run"] == 1 and untrusted.head is None
    off = execute(change, repo.path, flag_derivation(), ExecSettings(run_tests=False))
    assert "--no-tests" in off.summary["reason_if_not_run"]
    assert any(n.message.startswith("Tests were not run") for n in off.notes)
    bare, b2, h2 = make_repo(tmp_path / "bare", {}, {"test_cfg.py": KILLS})
    none = execute(change_of(bare, b2, h2), bare.path, flag_derivation(), FAST)
    assert "no [tests] command" in none.summary["reason_if_not_run"]
    broken, b3, h3 = make_repo(tmp_path / "broken", {".reviewbot.toml": "[tests]\ntimeout = -1\n"}, {})
    bad = execute(change_of(broken, b3, h3), broken.path, flag_derivation(), FAST)
    assert "[tests] needs `command" in bad.summary["reason_if_not_run"]


def test_only_tests_the_change_edits_count_as_new(tmp_path: Path) -> None:
    smoke = "\n\ndef test_new_smoke():\n    assert derive(NS(style=1, kv=True, flag=True)).flag is True\n"
    cfg = toml(runner_command("test_cfg"))
    repo, base, head = make_repo(
        tmp_path / "r", {".reviewbot.toml": cfg, "test_cfg.py": MISSES}, {"test_cfg.py": MISSES + smoke}
    )
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), FAST)
    assert [t.id for t in ex.new_tests] == ["test_cfg::test_new_smoke"]
    assert [(f.rule, f.line) for f in stage_findings(ex) if f.rule == "ineffective-test"] == [
        ("ineffective-test", 10)
    ]


def test_run_directories_are_removed_even_when_a_test_locks_them(tmp_path: Path) -> None:
    command = "mkdir -p locked/inner && touch locked/inner/f && chmod 500 locked/inner locked"
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml(command)}, {})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), ExecSettings(scratch_dir=scratch))
    assert ex.summary["ran"] == 1
    assert list(scratch.iterdir()) == []
