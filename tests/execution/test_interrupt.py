"""Stopping reviewbot during the test stage kills the whole sandbox (issue 15, item 16).

The sandbox runs in its own session, so neither the terminal's Ctrl-C nor reviewbot's death reaches it
by itself. Each test starts `reviewbot run` (tests enabled) on a real repository whose test command
sleeps and spawns a child that sleeps, waits until both exist, stops reviewbot, and scans /proc: within
2 s no process whose command line carries the run's marker may remain.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from reviewbot.execution.sandbox import CONFINING_SANDBOXES, run_sandboxed
from tests.execution.probe import BASE_CFG, HEAD_CFG, toml, working_sandboxes
from tests.gitrepo import Repo

ROOT = Path(__file__).resolve().parents[2]
GRACE_S = 2.0


@pytest.fixture(scope="module")
def working(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return working_sandboxes(tmp_path_factory.mktemp("probe"))


# The repository's "tests": a child that sleeps, then sleep; both carry the marker in their argv.
SLOW = """import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1] + "-child"])
time.sleep(300)
"""


def _marked(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line mentions `marker`."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker.encode() not in (proc / "cmdline").read_bytes():
                continue
            if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                out.append(int(proc.name))
        except (OSError, IndexError):
            continue
    return out


def _has_child(marker: str) -> bool:
    return bool(_marked(f"{marker}-child"))


def _repo(tmp: Path, command: str) -> tuple[Path, str, str]:
    repo = Repo(tmp / "repo")
    base = repo.commit({"cfg.py": BASE_CFG, "slow.py": SLOW, ".reviewbot.toml": toml(command, 120)}, "base")
    repo.checkout("pr", create=True)
    head = repo.commit({"cfg.py": HEAD_CFG}, "head")
    return repo.path, base, head


def _start(path: Path, base: str, head: str, tmp: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp), XDG_STATE_HOME=str(tmp / "state"))
    argv = [sys.executable, "-m", "reviewbot.cli", "run", "--path", str(path), "--base", base, "--head", head]
    return subprocess.Popen(
        [*argv, "--format", "json", "--no-cache"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell starts background jobs with SIGINT ignored; reviewbot honours that, so undo it here.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )


def _wait_for(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _stop_and_scan(proc: subprocess.Popen[str], marker: str, signum: int) -> tuple[float, list[int]]:
    """Send `signum` to reviewbot; seconds until no marked process remained, and any left after 2 s."""
    assert _wait_for(lambda: _has_child(marker), 120), "the test command never started its child"
    sent = time.monotonic()
    os.kill(proc.pid, signum)
    gone = _wait_for(lambda: not _marked(marker), GRACE_S)
    return time.monotonic() - sent, ([] if gone else _marked(marker))


def _cleanup(proc: subprocess.Popen[str], marker: str) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate()
    _kill_marked(marker)


def _kill_marked(marker: str) -> None:
    """A failing test must not leave sleepers behind."""
    for pid in _marked(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("signum", "exit_code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["SIGINT", "SIGTERM", "SIGKILL"],
)
def test_stopping_reviewbot_during_the_head_run_kills_the_sandbox(
    signum: int, exit_code: int, working: list[str], tmp_path: Path
) -> None:
    if signum == signal.SIGKILL and not set(working) & set(CONFINING_SANDBOXES):
        pytest.skip("SIGKILL leaves no handler: only a pid namespace (bwrap, unshare) takes the tree down")
    marker = f"rbsleep-{uuid.uuid4().hex[:12]}"
    path, base, head = _repo(tmp_path, f"{sys.executable} slow.py {marker}")
    proc = _start(path, base, head, tmp_path)
    try:
        seconds, left = _stop_and_scan(proc, marker, signum)
        assert left == [], f"sandbox processes alive {GRACE_S} s after {signal.Signals(signum).name}"
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == exit_code, err
        if signum != signal.SIGKILL:
            assert err.strip() in ("reviewbot: interrupted", "reviewbot: terminated"), err
            assert "Traceback" not in err
        print(f"{signal.Signals(signum).name}: sandbox gone in {seconds:.2f} s")
    finally:
        _cleanup(proc, marker)


def test_ctrl_c_while_mutants_run_in_threads_kills_them_and_starts_no_more(tmp_path: Path) -> None:
    """The head passes at once; the mutant (the new branch reverted) sleeps, in a worker thread."""
    marker = f"rbsleep-{uuid.uuid4().hex[:12]}"
    command = f'grep -q "cfg.flag = False" cfg.py || {sys.executable} slow.py {marker}'
    path, base, head = _repo(tmp_path, command)
    proc = _start(path, base, head, tmp_path)
    try:
        seconds, left = _stop_and_scan(proc, marker, signal.SIGINT)
        assert left == []
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and err.strip() == "reviewbot: interrupted", err
        time.sleep(0.5)
        assert _marked(marker) == []  # no later mutant started after the interrupt
        print(f"SIGINT during a mutant: sandbox gone in {seconds:.2f} s")
    finally:
        _cleanup(proc, marker)


@pytest.mark.parametrize("kind", ["bwrap", "unshare", "subprocess"])
def test_a_command_that_exits_leaves_nothing_in_the_background(
    kind: str, working: list[str], tmp_path: Path
) -> None:
    """`slow &` then exit 0: the run is over, so is what it started."""
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    marker = f"rbsleep-{uuid.uuid4().hex[:12]}"
    (tmp_path / "slow.py").write_text(SLOW)
    command = f"{sys.executable} slow.py {marker} & sleep 1; exit 0"
    res = run_sandboxed(command, tmp_path, tmp_path, timeout=60, sandbox=kind)
    try:
        assert res.exit_code == 0 and not res.timed_out, res.output
        assert _wait_for(lambda: not _marked(marker), GRACE_S), _marked(marker)
    finally:
        _kill_marked(marker)


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES)
def test_the_timeout_kills_a_process_that_left_the_session(
    kind: str, working: list[str], tmp_path: Path
) -> None:
    """What the report says, "own pid namespace, killed with the sandbox", holds for `setsid` too."""
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    marker = f"rbsleep-{uuid.uuid4().hex[:12]}"
    (tmp_path / "slow.py").write_text(SLOW)
    command = f"setsid {sys.executable} slow.py {marker} & sleep 300"
    res = run_sandboxed(command, tmp_path, tmp_path, timeout=2, sandbox=kind)
    try:
        assert res.timed_out
        assert _wait_for(lambda: not _marked(marker), GRACE_S), _marked(marker)
    finally:
        _kill_marked(marker)


WORKER_EXIT = """import sys, threading, time
from pathlib import Path
from reviewbot.execution.sandbox import run_sandboxed

root = Path(sys.argv[1])
command = f"{sys.executable} slow.py {sys.argv[2]}"
thread = threading.Thread(
    target=run_sandboxed, args=(command, root, root), kwargs={"timeout": 300, "sandbox": sys.argv[3]}, daemon=True
)
thread.start()
time.sleep(float(sys.argv[4]))
"""


def _worker_with_a_sandbox(tmp_path: Path, kind: str, hold_s: int) -> tuple[subprocess.Popen[str], str]:
    """A worker process whose daemon thread runs a sleeping sandbox; its main thread returns after
    `hold_s` s (the interpreter exits). Waits until the sandbox's child runs."""
    marker = f"rbsleep-{uuid.uuid4().hex[:12]}"
    (tmp_path / "slow.py").write_text(SLOW)
    script = tmp_path / "worker.py"
    script.write_text(WORKER_EXIT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, str(script), str(tmp_path), marker, kind, str(hold_s)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not _wait_for(lambda: _has_child(marker), 60):
        _cleanup(proc, marker)
        pytest.fail("the test command never started its child")
    return proc, marker


@pytest.mark.parametrize("kind", ["bwrap", "unshare", "subprocess"])
def test_a_worker_that_exits_with_rounds_in_threads_takes_their_sandboxes_along(
    kind: str, working: list[str], tmp_path: Path
) -> None:
    """The worker's SIGINT ends the process while rounds run in daemon threads: nothing may stay."""
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    proc, marker = _worker_with_a_sandbox(tmp_path, kind, 4)
    try:
        proc.communicate(timeout=30)  # the main thread returns after 4 s: the interpreter exits
        assert _wait_for(lambda: not _marked(marker), GRACE_S), _marked(marker)
    finally:
        _cleanup(proc, marker)


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES)
def test_a_worker_killed_outright_takes_each_sandbox_kind_along(
    kind: str, working: list[str], tmp_path: Path
) -> None:
    """SIGKILL leaves no handler: the pid namespace's first process must die with the launcher, also
    after the test dropped its privileges (a credential change clears a process's parent-death signal)."""
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    proc, marker = _worker_with_a_sandbox(tmp_path, kind, 120)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        assert _wait_for(lambda: not _marked(marker), GRACE_S), _marked(marker)
    finally:
        _cleanup(proc, marker)
