"""bench/devscan.py: an unlabelled sample leaves corpus commits out, and the score counts each P0–P2
finding as judged right, judged wrong, or not judged (a finding at another severity is judged again)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.bench.scripts import load_script
from tests.gitrepo import Repo

devscan = load_script("bench_devscan", "devscan.py")

A, B = "a" * 40, "b" * 40


def _report(folder: Path, case: str, head: str, findings: list[tuple[str, str, str, int]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "head_sha": head,
        "findings": [
            {"rule": r, "severity": s, "path": p, "line": n, "title": f"{r} at {p}:{n}"}
            for r, s, p, n in findings
        ],
    }
    (folder / f"{case}.json").write_text(json.dumps(doc))


def test_score_counts_right_wrong_and_not_judged_per_rule(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    _report(
        dump, "scan-a", A, [("default-changed", "P2", "cfg.py", 10), ("guard-removed", "P2", "cfg.py", 20)]
    )
    _report(dump, "scan-b", B, [("default-changed", "P1", "cfg.py", 5), ("stale-comment", "P3", "cfg.py", 1)])
    judged = tmp_path / "judged"
    judged.mkdir()
    (judged / "s.yaml").write_text(
        yaml.safe_dump(
            {
                "judged": [
                    {"commit": A, "rule": "default-changed", "path": "cfg.py", "line": 10, "severity": "P2",
                     "right": True, "why": "every deployment's cache size"},
                    {"commit": A, "rule": "guard-removed", "path": "cfg.py", "line": 20, "severity": "P2",
                     "right": False, "why": "moved"},
                    # judged at P2; the run says P1: a different claim, judged again
                    {"commit": B, "rule": "default-changed", "path": "cfg.py", "line": 5, "severity": "P2",
                     "right": True, "why": "x"},
                ]
            }
        )
    )  # fmt: skip
    rows, todo = devscan.score(dump, devscan.load_judgments(judged))
    by_rule = {r.rule: (r.right, r.wrong, r.unjudged) for r in rows}
    assert by_rule == {"default-changed": (1, 0, 1), "guard-removed": (0, 1, 0)}  # the P3 is not counted
    assert len(todo) == 1 and "P1 default-changed cfg.py:5" in todo[0]
    assert {r.rule: r.precision for r in rows} == {
        "default-changed": "1/1 = 1.00",
        "guard-removed": "0/1 = 0.00",
    }


def test_sample_picks_config_commits_no_corpus_case_uses(tmp_path: Path) -> None:
    work = Repo(tmp_path / "work")
    work.commit({"README.md": "x\n"}, "root")
    touched = [work.commit({"torchtitan/config_manager.py": f"LR = {i}\n"}, f"c{i}") for i in range(4)]
    work.commit({"docs/x.md": "y\n"}, "not config")
    mirrors = tmp_path / "mirrors"
    bare = mirrors / "pytorch+torchtitan" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work.path), str(bare)], check=True)
    out = tmp_path / "out"
    written = devscan.sample(seed=1, per_repo=10, out=out, mirrors=mirrors, exclude={touched[0]})
    doc = yaml.safe_load((out / "torchtitan.yaml").read_text())
    commits = {c["commit"] for c in doc["cases"]}
    assert written == 3 and commits == set(touched[1:])  # the excluded one and non-config commits left out
    assert all(c["verdict"] == "pass" and "unlabelled" in c["labelled"] for c in doc["cases"])
    assert not (out / "sglang.yaml").exists()  # a repository with no snapshot is skipped, not invented


def test_a_commit_judged_in_an_earlier_sample_is_never_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = Repo(tmp_path / "work")
    work.commit({"README.md": "x\n"}, "root")
    touched = [work.commit({"torchtitan/config_manager.py": f"LR = {i}\n"}, f"c{i}") for i in range(3)]
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work.path), str(mirrors / "pytorch+torchtitan" / "repo")], check=True)  # fmt: skip
    judged = tmp_path / "judged"
    judged.mkdir()
    entry = {"commit": touched[1], "rule": "default-changed", "path": "torchtitan/config_manager.py",
             "line": 1, "severity": "P2", "right": False, "why": "x"}  # fmt: skip
    (judged / "sample1.yaml").write_text(yaml.safe_dump({"judged": [entry]}))
    monkeypatch.setattr(devscan, "JUDGED", judged)
    out = tmp_path / "out"
    assert (
        devscan.main(
            ["sample", "--seed", "1", "--per-repo", "10", "--out", str(out), "--mirrors", str(mirrors)]
        )
        == 0
    )
    commits = {c["commit"] for c in yaml.safe_load((out / "torchtitan.yaml").read_text())["cases"]}
    assert commits == {touched[0], touched[2]}
