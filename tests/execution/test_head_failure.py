"""A test command that fails on the unmodified head is diagnosable from the report (issue 17 item 7).

The command, its exit code and the last 20 lines of its output, made safe (controls escaped, the
worker's secrets redacted), in the JSON report's `tests.head_failure` and the markdown's test section.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.execution.untrusted import TAIL_LINES
from tests.execution.probe import make_repo, toml

SECRET = "hunter2-not-a-real-token-value"
# 30 numbered lines, an escape sequence, a secret the worker knows, then exit 3.
FAILING = (
    "import sys\n"
    "for n in range(1, 31):\n"
    "    print(f'line {n}')\n"
    f"print('colour \\x1b[31m and {SECRET}')\n"
    "print('AssertionError: the config loader broke', file=sys.stderr)\n"
    "sys.exit(3)\n"
)


def _run(repo: Path, base: str, head: str, fmt: str, out: Path) -> None:
    code = main(["run", "--path", str(repo), "--base", base, "--head", head, "--format", fmt, "-o", str(out)])
    assert code == 0


def test_a_failing_head_run_shows_command_exit_code_and_last_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWBOT_GITHUB_TOKEN", SECRET)  # a secret of the worker's environment
    command = "python3 -u failing.py"  # unbuffered: stdout and stderr in the order written
    repo, base, head = make_repo(
        tmp_path / "r", {".reviewbot.toml": toml(command), "failing.py": FAILING}, {}
    )

    _run(repo.path, base, head, "json", tmp_path / "r.json")
    tests = json.loads((tmp_path / "r.json").read_text())["tests"]
    hf = tests["head_failure"]
    assert (hf["command"], hf["exit_code"], hf["timed_out"]) == (command, 3, False)
    lines = hf["output_tail"].split("\n")
    assert len(lines) == TAIL_LINES == 20
    # The last 20 lines: 18 numbered ones (13..30), the escaped colour line, stderr's last line.
    assert lines[:18] == [f"line {n}" for n in range(13, 31)]
    assert lines[-1] == "AssertionError: the config loader broke"
    assert "\x1b" not in hf["output_tail"] and "\\x1b[31m" in lines[-2]
    assert SECRET not in hf["output_tail"] and "colour" in lines[-2]

    _run(repo.path, base, head, "markdown", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    section = md.split("<details><summary>Tests executed</summary>", 1)[1].split("</details>", 1)[0]
    assert "`python3 -u failing.py`" in section
    assert "failed on the unmodified head (exit code 3)" in section
    fenced = section.split("```text\n", 1)[1].split("\n```", 1)[0]
    assert fenced.split("\n") == lines
    assert SECRET not in md


def test_a_passing_head_run_has_no_failure_block(tmp_path: Path) -> None:
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": toml("python3 -c 'print(1)'")}, {})
    _run(repo.path, base, head, "json", tmp_path / "r.json")
    tests = json.loads((tmp_path / "r.json").read_text())["tests"]
    assert tests["exit_code"] == 0 and tests["head_failure"] is None
    _run(repo.path, base, head, "markdown", tmp_path / "r.md")
    assert "unmodified head" not in (tmp_path / "r.md").read_text()


def test_the_example_right_after_install_does_not_fail_its_own_test_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's first command installs reviewbot alone: no pytest. The example's tests still run
    (its run_tests.sh runs the same test functions without pytest) and pass."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    probe = subprocess.run(["python3", "-c", "import pytest"], capture_output=True)
    assert probe.returncode != 0, "the python3 on PATH must lack pytest for this test to mean anything"
    out = tmp_path / "r.json"
    assert main(["example", "--dest", str(tmp_path / "ex"), "--format", "json", "-o", str(out)]) == 0
    tests = json.loads(out.read_text())["tests"]
    assert tests["reason_if_not_run"] == "" and tests["head_failure"] is None
    assert (tests["exit_code"], tests["ran"], tests["passed"], tests["failed"]) == (0, 2, 2, 0)
    assert (tests["per_test"], tests["mutants"], tests["survived"]) == (True, 1, 1)
