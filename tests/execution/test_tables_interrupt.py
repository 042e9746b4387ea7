"""Ctrl-C while a truth table runs (issue 25): the table's sandbox goes like the tests' (issue 15)."""

from __future__ import annotations

import signal
import sys
import uuid
from pathlib import Path

from tests.execution.probe import toml
from tests.execution.test_interrupt import _cleanup, _marked, _start, _stop_and_scan
from tests.gitrepo import Repo

BASE = """from dataclasses import dataclass


@dataclass
class Config:
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        pass
"""
# On the head, building the config starts a child that sleeps, then sleeps itself: only the table run
# builds it (the repository's own test command does nothing).
SLOW_POST_INIT = """        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{marker}-child"])
        time.sleep(300)
        if not self.cache:
            self.use_rope = False
"""


def test_ctrl_c_while_a_table_runs_kills_its_sandbox(tmp_path: Path) -> None:
    marker = f"rbsleep-{uuid.uuid4().hex[:12]}"
    repo = Repo(tmp_path / "repo")
    cfg = toml(f"{sys.executable} -c pass", 120)
    base = repo.commit({".reviewbot.toml": cfg, "pkg/__init__.py": "", "pkg/config.py": BASE}, "base")
    head_text = BASE.replace("        pass\n", SLOW_POST_INIT.format(marker=marker))
    head = repo.commit({"pkg/config.py": head_text}, "head")
    proc = _start(repo.path, base, head, tmp_path)
    try:
        seconds, left = _stop_and_scan(proc, marker, signal.SIGINT)
        assert left == [], "the table's sandbox outlived Ctrl-C"
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and err.strip() == "reviewbot: interrupted", err
        assert _marked(marker) == []
        print(f"SIGINT during a table run: sandbox gone in {seconds:.2f} s")
    finally:
        _cleanup(proc, marker)
