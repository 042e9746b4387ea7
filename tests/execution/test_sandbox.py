"""The sandbox: credentials, network, writes outside the workspace, limits and timeouts, per path."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.execution.execute import ExecSettings, execute
from reviewbot.execution.sandbox import (
    SANDBOXES,
    Limits,
    detect_sandbox,
    run_sandboxed,
    sandbox_env,
)
from tests.execution.probe import change_of, flag_derivation, make_repo, runner_command, toml

PROBES = """import os, socket, pathlib

PORT = {port}
OUTSIDE = pathlib.Path({outside!r})


def test_token_absent():
    assert "GITHUB_TOKEN" not in os.environ and "REVIEWBOT_WEBHOOK_SECRET" not in os.environ
    assert os.environ["PROBE_VISIBLE"] == "yes"  # the rest of the environment does arrive
    assert not os.environ["HOME"].startswith({real_home!r} + "/.")


def test_socket_fails():
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", PORT))
    except OSError:
        return
    raise AssertionError("connected to the host's loopback")


def test_write_outside_fails():
    try:
        OUTSIDE.write_text("escaped")
    except OSError:
        return
    raise AssertionError("wrote outside the workspace")
"""


@pytest.fixture(scope="module")
def working(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    scratch = tmp_path_factory.mktemp("probe")
    return [k for k in SANDBOXES if detect_sandbox(scratch, (k,)) == k]


@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP server on the host's loopback: reachable unless the sandbox cuts the network."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                conn.close()
            except OSError:
                continue

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    srv.close()


@pytest.mark.parametrize("kind", SANDBOXES)
def test_hostile_test_command_gets_no_token_no_socket_no_outside_write(
    kind: str, working: list[str], listener: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_must_not_leak")
    monkeypatch.setenv("REVIEWBOT_WEBHOOK_SECRET", "must-not-leak")
    monkeypatch.setenv("PROBE_VISIBLE", "yes")
    outside_dir = tmp_path / "outside"
    outside_dir.mkdir()
    outside = outside_dir / "pwned.txt"
    probes = PROBES.format(port=listener, outside=str(outside), real_home=os.path.expanduser("~"))
    # Beyond PATH and the locale a test sees only what the base revision's config names.
    cfg = toml(runner_command("test_probe")) + 'env = ["PROBE_VISIBLE"]\n'
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {"test_probe.py": probes})

    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), ExecSettings(sandbox=kind))

    outcome = {t.rsplit("::", 1)[-1]: c.outcome for t, c in ex.head.cases.items()} if ex.head else {}
    assert ex.summary["sandbox"] == kind and ex.summary["ran"] == 3  # the review completed
    isolation = ex.summary["isolation"]  # what a probe inside the sandbox saw, not what was meant
    assert outcome["test_token_absent"] == "passed"  # the allow-list holds on every path
    network_denied = not isolation["network"].startswith("NOT")
    writes_denied = not isolation["filesystem"].startswith("NOT")
    assert (outcome["test_socket_fails"] == "passed") is network_denied
    assert (outcome["test_write_outside_fails"] == "passed") is writes_denied
    assert outside.exists() is not writes_denied
    if kind == "subprocess":
        assert any("network was not denied" in n.message for n in ex.notes)
    else:
        assert network_denied and writes_denied


@pytest.mark.parametrize("kind", SANDBOXES)
def test_timeout_kills_every_process_of_the_run(kind: str, working: list[str], tmp_path: Path) -> None:
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    marker = f"61.{os.getpid()}{len(kind)}"  # a sleep nobody else runs
    started = time.monotonic()
    res = run_sandboxed(f"sleep {marker} & sleep {marker}; wait", tmp_path, tmp_path, timeout=1, sandbox=kind)
    assert res.timed_out and res.exit_code is None
    assert time.monotonic() - started < 10
    time.sleep(0.3)
    assert _running(f"sleep\0{marker}") == []


def _running(cmdline: str) -> list[int]:
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "cmdline").read_bytes().decode(errors="replace").rstrip("\0") == cmdline:
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    out.append(int(proc.name))
        except OSError:
            continue
    return out


def test_file_size_limit_stops_a_runaway_write(tmp_path: Path) -> None:
    limits = Limits(file_size=1 << 20)
    res = run_sandboxed(
        "head -c 4000000 /dev/zero > big", tmp_path, tmp_path, timeout=20, sandbox="subprocess", limits=limits
    )
    assert res.exit_code != 0
    assert (tmp_path / "big").stat().st_size <= 1 << 20


def test_sandbox_env_is_an_allow_list_and_moves_home(tmp_path: Path) -> None:
    env = {
        "GITHUB_TOKEN": "x",
        "GH_ENTERPRISE_TOKEN": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "REVIEWBOT_DATABASE_URL": "x",
        "MY_API_KEY": "x",
        "DB_PASSWORD": "x",
        # Names a deny-list let through (issue 16): nothing says they are secrets but their use.
        "MYSQL_PWD": "hunter22",
        "DB_PASS": "hunter22",
        "CELERY_BROKER_URL": "redis://:pw@10.0.0.1:6379/0",
        "SENTRY_DSN": "https://key@sentry.invalid/1",
        "PIP_INDEX_URL": "https://user:s3cret@example.invalid/simple",
        "CC": "gcc",
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/root",
    }
    out = sandbox_env(env, tmp_path / "home", tmp_path / "tmp")
    assert set(out) == {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "TMP", "TEMP"}
    assert out["HOME"] == str(tmp_path / "home") and out["TMPDIR"] == str(tmp_path / "tmp")
    # A repository may ask for more names, never for reviewbot's own or a credential's.
    asked = [
        "CC",
        "MYSQL_PWD",
        "GITHUB_TOKEN",
        "REVIEWBOT_DATABASE_URL",
        "CELERY_BROKER_URL",
        "PIP_INDEX_URL",
    ]
    out = sandbox_env(env, tmp_path / "home", tmp_path / "tmp", allow=asked, set_env={"PYTEST_ADDOPTS": "-q"})
    assert set(out) - {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "TMP", "TEMP"} == {"CC", "PYTEST_ADDOPTS"}
