"""bench/bench_vs_semgrep.py: the rule it picks, medians and verdicts, its arguments, the work tree it
builds for semgrep. No timing is asserted: the benchmark itself is not a test."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from tests.bench.scripts import load_script
from tests.gitrepo import Repo

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_vs_semgrep.py"


vs = load_script("bench_vs_semgrep", "bench_vs_semgrep.py")

PR1361 = """\
@@ -16,0 +17,5 @@ AttentionConfigs ModelConfig::getAttentionConfigs(int64_t tp_size) const {
+    // Skip rope+bias+transpose kernel entirely for embedding models (no RoPE, no KV cache).
+    if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
+        config.need_rope_kv_cache = false;
+    }
"""


def test_added_code_lines_leave_out_comments_and_headers() -> None:
    diff = "+++ b/x.py\n+# a comment\n+x = 1\n-y = 2\n context\n+  // c++ comment\n+"
    assert vs.added_code_lines(diff) == ["x = 1"]


def test_the_rule_is_the_member_the_change_assigns() -> None:
    lines = vs.added_code_lines(PR1361)
    assert vs.pick_identifier(lines) == ("need_rope_kv_cache", "a member the change assigns", True)


def test_a_comparison_is_not_an_assignment_and_calls_are_not_read_members() -> None:
    lines = ["if self.mode == Mode.OFF and x.run():", "    return self.use_logn_attn"]
    assert vs.pick_identifier(lines) == ("mode", "a member it reads", True)
    assert vs.pick_identifier(["p->cache_size += 2"])[0] == "cache_size"


def test_without_members_the_longest_identifier_that_is_not_a_keyword() -> None:
    assert vs.pick_identifier(["return use_kvcache and flag"]) == (
        "use_kvcache",
        "the change's longest identifier",
        False,
    )
    assert vs.pick_identifier(["return None", "}"]) is None


def test_rule_yaml_is_one_local_rule() -> None:
    rules = yaml.safe_load(vs.rule_yaml("$X.need_rope_kv_cache"))["rules"]
    assert rules == [
        {
            "id": "reviewbot-bench",
            "pattern": "$X.need_rope_kv_cache",
            "message": "reviewbot bench",
            "languages": ["cpp", "python"],
            "severity": "INFO",
        }
    ]


def test_semgrep_runs_offline() -> None:
    argv = vs.semgrep_argv(Path("/v/semgrep"), Path("/t/rule.yaml"), ["a.cc"])
    assert "--metrics=off" in argv and "--disable-version-check" in argv
    assert argv[argv.index("--config") + 1] == "/t/rule.yaml" and argv[-2:] == ["--", "a.cc"]
    assert vs.semgrep_env()["SEMGREP_SEND_METRICS"] == "off"


def _case(name: str, *walls: float, rss: float = 100.0) -> Any:
    case = vs.Case(name)
    case.runs = [vs.Run(w, w / 2, rss, rss / 2) for w in walls]
    return case


def test_median_ratio_and_verdicts() -> None:
    assert _case("x", 3.0, 1.0, 2.0, 10.0, 2.5).median("wall_s") == 2.5
    assert vs.Case("empty").median("wall_s") is None
    assert vs.ratio(1.0, 4.0) == 0.25 and vs.ratio(None, 4.0) is None and vs.ratio(1.0, 0.0) is None
    assert [vs.verdict(0.5, 0.5), vs.verdict(0.51, 0.5), vs.verdict(None, 0.5)] == ["PASS", "MISS", "n/a"]


def test_targets_without_a_warm_cache() -> None:
    cases = {
        vs.REVIEWBOT_COLD: _case(vs.REVIEWBOT_COLD, 6.0, 7.0, 8.0, rss=186.0),
        vs.REVIEWBOT_WARM: vs.Case(vs.REVIEWBOT_WARM, skipped="no --no-cache"),
        vs.SEMGREP_FILES: _case(vs.SEMGREP_FILES, 1.6, 1.7, 1.8),
        vs.SEMGREP_TREE: _case(vs.SEMGREP_TREE, 3.0, 3.5, 4.0),
    }
    got = {name: (value, mark) for name, value, _, mark in vs.targets(cases)}
    assert got["warm <= 0.5x semgrep changed files"] == (None, "n/a")
    assert got["cold <= 1.0x semgrep whole tree"] == (2.0, "MISS")
    assert got["peak RSS <= 128 MiB (process tree)"] == (186.0, "MISS")


def test_targets_met_with_a_warm_cache() -> None:
    cases = {
        vs.REVIEWBOT_COLD: _case(vs.REVIEWBOT_COLD, 3.0, rss=90.0),
        vs.REVIEWBOT_WARM: _case(vs.REVIEWBOT_WARM, 0.5, rss=120.0),
        vs.SEMGREP_FILES: _case(vs.SEMGREP_FILES, 1.6),
        vs.SEMGREP_TREE: _case(vs.SEMGREP_TREE, 3.2),
    }
    assert [mark for *_, mark in vs.targets(cases)] == ["PASS", "PASS", "PASS"]
    assert vs.targets(cases)[2][1] == 120.0  # the larger of the cold and warm peaks


def test_arguments_and_their_defaults() -> None:
    parser = argparse.ArgumentParser()
    vs.add_arguments(parser)
    args = parser.parse_args([])
    assert (args.repo, args.base, args.head, args.runs, args.at, args.pattern) == (
        None,
        None,
        None,
        5,
        "HEAD",
        None,
    )
    args = parser.parse_args(["--repo", "/r", "--base", "abc^", "--head", "abc", "--runs", "3"])
    assert (args.repo, args.base, args.head, args.runs) == ("/r", "abc^", "abc", 3)


def test_materialize_writes_the_head_tree_from_the_git_directory(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    head = repo.commit({"a/x.cc": "int x;\n", "b.py": "y = 1\n"}, "one")
    files, missing = vs.materialize(vs.git_dir(repo.path), head, tmp_path / "tree")
    assert (files, missing) == (2, [])
    assert (tmp_path / "tree" / "a" / "x.cc").read_text() == "int x;\n"
    assert not (tmp_path / "tree" / ".git").exists()


def test_materialize_skips_blobs_absent_from_a_partial_mirror(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    head = repo.commit({"keep.py": "x = 1\n", "big/data.json": "{}\n"}, "one")
    blob = repo.git("rev-parse", f"{head}:big/data.json")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    files, missing = vs.materialize(vs.git_dir(repo.path), head, tmp_path / "tree")
    assert (files, missing) == (1, ["big/data.json"])
    assert (tmp_path / "tree" / "keep.py").is_file() and not (tmp_path / "tree" / "big").exists()
