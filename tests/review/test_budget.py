"""Budgets per round (issue 16 item 3): a PR too large or too deep for a round still gets one, within
its bounds, INCOMPLETE with the reasons, and with the findings that were found in its report.

The two big cases run in a subprocess of their own, so the peak resident memory they report
(getrusage's ru_maxrss) is the round's alone; they print their figures (`pytest -s`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.change.diff import load_change
from reviewbot.config import parse_repo_config
from reviewbot.execution.execute import ExecSettings, executor
from reviewbot.execution.mutants import build_mutants
from reviewbot.lang.predicate import Atom
from reviewbot.model.budget import RoundBudget
from reviewbot.model.change import ChangedFile, ChangeSet, FileStatus, Hunk, SkipReason
from reviewbot.model.review import Status
from reviewbot.review.budget import bracket_depth
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.execution.seedfacts import assign
from tests.gitrepo import Repo

# One round in a fresh interpreter: the figures printed are that round's (CPU, peak memory).
ROUND = """
import json, resource, sys, time
from reviewbot.model.budget import RoundBudget
from reviewbot.runner import run_local_round

budget = RoundBudget(**json.loads(sys.argv[2]))
t0 = time.monotonic()
out = run_local_round(sys.argv[1], "main", "pr", None, None, budget=budget)
wall = time.monotonic() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "status": out.review.status.value,
    "notes": [[n.reason.value, n.message] for n in out.review.notes],
    "findings": [[f["severity"], f["path"], f["line"]] for f in out.json["findings"]],
    "markdown": out.markdown,
    "stored_bytes": len(out.markdown.encode()) + len(json.dumps(out.json, indent=2, ensure_ascii=False).encode()),
    "wall_s": wall,
    "cpu_s": usage.ru_utime + usage.ru_stime,
    "peak_rss_mb": usage.ru_maxrss / 1024,
}))
"""

# A duplicated predicate (a P3, never blocking): each file the round analyses yields one finding. One
# decision written twice in one function for two fields, and nothing else (no undefined name, no config
# derivation for missing-tests).
DUPLICATE = (
    "def fuse_{i}(plan, cfg):\n    plan.fuse_{i} = cfg.style_{i} == 0 and not cfg.use_kv_{i}\n"
    "    if (not cfg.use_kv_{i}) and 0 == cfg.style_{i}:\n        plan.skip_{i} = True\n"
)


def _round(repo: Path, budget: RoundBudget) -> dict[str, Any]:
    args = json.dumps(budget.__dict__)
    proc = subprocess.run(
        [sys.executable, "-c", ROUND, str(repo), args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _budget_notes(result: dict[str, Any]) -> list[str]:
    return [message for reason, message in result["notes"] if reason == SkipReason.BUDGET.value]


def _figures(name: str, result: dict[str, Any], budget: RoundBudget) -> None:
    print(
        f"\n{name}: {result['status']}, {len(result['findings'])} finding(s), wall {result['wall_s']:.1f} s "
        f"(budget {budget.seconds:g} s), CPU {result['cpu_s']:.1f} s, peak RSS {result['peak_rss_mb']:.0f} MiB "
        f"(budget {budget.memory_mb} MiB), stored report {result['stored_bytes']:,} B "
        f"(budget {budget.report_bytes:,} B)\n  " + "\n  ".join(_budget_notes(result))
    )


def _shown(markdown: str, path: str) -> bool:
    """The finding at `path` is in the comment with its place (not only counted in a summary)."""
    return f"`{path}:" in markdown


def test_a_5000_file_pr_is_reviewed_within_its_budget(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "x\n"})
    repo.checkout("pr", create=True)
    repo.commit({f"pkg/m{i:05d}.py": DUPLICATE.format(i=i) for i in range(5000)})
    budget = RoundBudget(files=300, report_bytes=64 << 10, seconds=120, memory_mb=1024)

    result = _round(repo.path, budget)
    _figures("5,000-file PR", result, budget)

    assert result["status"] == Status.INCOMPLETE.value
    notes = _budget_notes(result)
    assert any("the round's budget is 300 changed files, so 4,700 of 5,000" in n for n in notes)
    assert any(n.startswith("the stored report came to") and "findings" in n for n in notes)
    assert result["wall_s"] < budget.seconds
    assert result["peak_rss_mb"] < budget.memory_mb
    assert result["stored_bytes"] <= budget.report_bytes
    # What was found is published: the kept findings are P3s of the first files, shown with their places.
    found = result["findings"]
    assert 0 < len(found) < 300 and {s for s, _, _ in found} == {"P3"}
    assert all(p.startswith("pkg/m0") for _, p, _ in found)
    assert _shown(result["markdown"], found[0][1]) and "F1" in result["markdown"]


def test_a_deeply_nested_expression_is_left_out_and_the_rest_is_reported(tmp_path: Path) -> None:
    """About 470 KB over two files (a 15,000-term guard, brackets 120,000 deep), next to a small file
    with a real finding: the two are left out with their reasons, the small file's finding is shown."""
    repo = Repo(tmp_path / "repo")
    config = "class Config:\n    def derive(self):\n        self.use_x = False\n{body}        return self\n"
    repo.commit({"README.md": "x\n", "pkg/cfg_chain.py": config.format(body="")})
    repo.checkout("pr", create=True)
    guard = " and ".join(f"self.v{j}" for j in range(15_000))
    repo.commit(
        {
            "pkg/cfg_chain.py": config.format(body=f"        if {guard}:\n            self.use_x = True\n"),
            "pkg/cfg_nested.py": "WEIGHTS = " + "(" * 120_000 + "1" + ")" * 120_000 + "\n",
            "pkg/flags.py": DUPLICATE.format(i=0),
        }
    )
    budget = RoundBudget(seconds=60, memory_mb=512)

    result = _round(repo.path, budget)
    _figures("deep expression", result, budget)

    assert result["status"] == Status.INCOMPLETE.value
    notes = _budget_notes(result)
    assert (
        "pkg/cfg_nested.py: brackets nest 120,000 deep, over the parse budget of 100; not analysed" in notes
    )
    assert any(n.startswith("pkg/cfg_chain.py:5: the condition of `use_x` has 15,000 terms") for n in notes)
    assert [(s, p) for s, p, _ in result["findings"]] == [("P3", "pkg/flags.py")]
    assert _shown(result["markdown"], "pkg/flags.py")
    assert result["wall_s"] < budget.seconds and result["peak_rss_mb"] < budget.memory_mb
    assert result["stored_bytes"] <= budget.report_bytes


def _config_files(n: int) -> dict[str, str | bytes | None]:
    return {
        f"pkg/c{i:02d}.py": (
            "import os\n\n\nclass ModelConfig:\n    def derive(self):\n"
            f"        if self.use_fast_{i}:\n"
            f'            self.mode_{i} = os.environ.get("MODE_{i}") == "1"\n'
            "        return self\n"
        )
        for i in range(n)
    }


def test_mutants_stop_at_the_budget_one_per_changed_line(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "x\n", "tests/test_a.py": "def test_a():\n    assert True\n"})
    repo.checkout("pr", create=True)
    repo.commit(_config_files(12))
    change = load_change(repo.path, "main", "pr")
    cfg_text = '[tests]\ncommand = "true"\ntimeout = 30\n'
    exec_settings = ExecSettings(repo_config=parse_repo_config(cfg_text), scratch_dir=tmp_path)
    settings = ReviewSettings(execute=executor(repo.path, exec_settings), budget=RoundBudget(mutants=3))
    review = review_change(change, settings)
    change.close()

    assert review.tests is not None and review.tests["mutants"] == 3
    budget = [n.message for n in review.notes if n.reason is SkipReason.BUDGET]
    assert budget == [
        "9 changed line(s) got no mutant: the round's budget is 3 mutants (from pkg/c03.py:7 on)"
    ]


def test_past_the_time_budget_the_stages_left_are_skipped_and_named(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "x\n"})
    repo.checkout("pr", create=True)
    repo.commit({f"pkg/m{i}.py": DUPLICATE.format(i=i) for i in range(3)})
    change = load_change(repo.path, "main", "pr")
    review = review_change(change, ReviewSettings(budget=RoundBudget(seconds=1e-9)))
    change.close()

    assert review.status is Status.INCOMPLETE
    said = [n.message for n in review.notes if n.reason is SkipReason.BUDGET]
    assert (
        said[0]
        == "the round's time budget of 1e-09 s ran out: 3 changed file(s) were not parsed (from pkg/m0.py on)"
    )
    assert any(s.endswith("the repository was not searched beyond the changed files") for s in said)
    assert any("did not run" in s for s in said)
    assert review.kpi["coverage"] == 0.0


@pytest.mark.parametrize(
    "text,depth", [("", 0), ("f(a[1], {2})", 2), (")))((", 2), ("(" * 500 + ")" * 500, 500)]
)
def test_bracket_depth(text: str, depth: int) -> None:
    assert bracket_depth(text) == depth


def test_the_budget_is_a_setting_of_the_cli_and_the_app(tmp_path: Path) -> None:
    from reviewbot.github.settings import GitHubSettings
    from reviewbot.settings import load_settings

    env = {"HOME": str(tmp_path), "REVIEWBOT_BUDGET": '{"files": 2, "seconds": 90}'}
    settings = load_settings(environ=env)
    assert settings.budget == RoundBudget(files=2, seconds=90)
    assert GitHubSettings.from_settings(settings).budget == settings.budget

    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "x\n"})
    repo.checkout("pr", create=True)
    repo.commit({f"pkg/m{i}.py": DUPLICATE.format(i=i) for i in range(5)})
    proc = subprocess.run(
        ["reviewbot", "run", "--base", "main", "--head", "pr", "--no-cache", "--format", "json"],
        cwd=repo.path,
        env={**env, "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "INCOMPLETE" and len(doc["findings"]) == 2
    assert [n["message"] for n in doc["notes"] if n["reason"] == "budget"] == [
        "the round's budget is 2 changed files, so 3 of 5 changed files were left out (from pkg/m2.py on)"
    ]


def test_build_mutants_makes_one_mutant_per_changed_line_and_stops_at_the_limit() -> None:
    base = "void f() {\n  if (c) {\n    cfg.x = 1;\n  }\n}\n"
    head = "void f() {\n  if (c) {\n    cfg.x = 2; cfg.y = 2;\n  }\n  if (d) {\n    cfg.z = 3;\n  }\n}\n"
    hunk = Hunk(
        1, 5, 1, 8, "@@", ((3, "    cfg.x = 2; cfg.y = 2;"), (5, "  if (d) {"), (6, "    cfg.z = 3;")), ()
    )
    change = ChangeSet(
        "b" * 40,
        "h" * 40,
        "b" * 40,
        [ChangedFile("f.cc", "f.cc", FileStatus.MODIFIED, (hunk,), base, head)],
        0,
    )
    b_x = assign("cfg.x", "1", 3, Atom("c"), path="f.cc", function="f", guard_line=2, text="cfg.x = 1;")
    x = ChangedDerivation(
        assign("cfg.x", "2", 3, Atom("c"), path="f.cc", function="f", guard_line=2), (b_x,), False
    )
    y = ChangedDerivation(
        assign("cfg.y", "2", 3, Atom("c"), path="f.cc", function="f", guard_line=2), (), True
    )
    z = ChangedDerivation(
        assign("cfg.z", "3", 6, Atom("d"), path="f.cc", function="f", guard_line=5), (), True
    )

    mutants = build_mutants(change, [x, y, z])
    assert [(m.line, m.covers) for m in mutants] == [(2, (("f.cc", 3),)), (5, (("f.cc", 6),))]
    assert len(build_mutants(change, [x, y, z], limit=1)) == 1


def test_past_the_memory_budget_the_stages_left_are_skipped_and_named(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "x\n"})
    repo.checkout("pr", create=True)
    repo.commit({"pkg/m0.py": DUPLICATE.format(i=0)})
    change = load_change(repo.path, "main", "pr")
    review = review_change(change, ReviewSettings(budget=RoundBudget(memory_mb=1)))
    change.close()

    assert review.status is Status.INCOMPLETE
    said = [n.message for n in review.notes if n.reason is SkipReason.BUDGET]
    assert said and all(", over the memory budget of 1 MiB: " in s for s in said)
    assert said[0].endswith("1 changed file(s) were not parsed (from pkg/m0.py on)")


def test_a_report_over_its_budget_keeps_its_findings_shown_and_their_fingerprints() -> None:
    """Findings carrying a huge expression (title, anchor, evidence, suggestion, sketch): the stored
    report is cut to the budget, the findings keep their fingerprints, and the comment shows them."""
    from reviewbot.model.finding import Finding, Severity
    from reviewbot.model.review import ChecklistResult, Review
    from reviewbot.report.comment import GITHUB_LIMIT
    from reviewbot.runner import fit_round, stored_json

    expr = " and ".join(f"cfg.v{j}" for j in range(6_000))  # about 50 KB
    findings = [
        Finding(
            rule="duplicated-predicate",
            severity=Severity.P2 if i < 3 else Severity.P3,
            path=f"pkg/m{i}.py",
            line=2,
            title=f"The predicate `{expr}` is written 2 times",
            anchor=expr + str(i),
            evidence=(expr,) * 4,
            suggestion=expr,
            suggestion_code=expr,
        )
        for i in range(20)
    ]
    budget = RoundBudget(report_bytes=256 << 10)
    review = Review(Status.LGTM, "b" * 40, "h" * 40, "b" * 40, "now", findings, ChecklistResult(), [], [], {})
    review.budget = budget

    fitted, markdown, doc = fit_round(review)

    assert len(markdown.encode()) + len(stored_json(doc).encode()) <= budget.report_bytes
    assert len(markdown) <= GITHUB_LIMIT
    assert fitted.status is Status.INCOMPLETE
    assert fitted.notes[0].message.startswith("the stored report came to ")
    kept = fitted.findings
    assert len(kept) == 20  # shortening was enough: every finding stays
    assert [f.fingerprint for f in kept] == [f.fingerprint for f in findings]
    assert all(f"`pkg/m{i}.py:2`" in markdown for i in range(3))  # the P2s are shown with their places
    assert "F1" in markdown


def test_the_markdown_is_rendered_only_when_the_json_leaves_room_for_it() -> None:
    """fit_report renders the JSON first: over the limit on its own, the whole review's markdown is
    never made and the note says "more than"; under it, the note gives the exact size."""
    from reviewbot.model.review import ChecklistResult, Review
    from reviewbot.report.shrink import Renderer, fit_report

    review = Review(Status.LGTM, "b" * 40, "h" * 40, "b" * 40, "now", [], ChecklistResult(), [], [], {})
    made: list[int] = []

    def markdown(size: int) -> Renderer:
        def as_markdown(r: Review) -> str:
            made.append(len(r.notes))
            return "m" * size

        def document(r: Review) -> dict[str, str]:
            return {"j": "j" * (900 if not r.notes else 10)}

        return Renderer(document, lambda doc: doc["j"], as_markdown)

    fitted, (text, _, stored) = fit_report(review, markdown(50), limit=500)
    assert made == [1] and fitted.notes[0].message.startswith("the stored report came to more than 908 B")
    assert (text, stored) == ("m" * 50, "j" * 10) and fitted.status is Status.INCOMPLETE

    made.clear()

    def shrinking(r: Review) -> str:  # 600 B whole, 50 B once shortened (a note added)
        made.append(len(r.notes))
        return "m" * (50 if r.notes else 600)

    small = Renderer(lambda r: {"j": "j" * 10}, lambda doc: doc["j"], shrinking)
    fitted, (text, _, _) = fit_report(review, small, limit=500)
    assert made == [0, 1] and fitted.notes[0].message.startswith("the stored report came to 610 B, over")
