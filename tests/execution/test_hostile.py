"""A hostile test command against each confining sandbox (issue 16's Must show), as root or not.

Each test plants the thing to steal or reach on the host, runs a real command in the real sandbox and
checks from outside that nothing was read, reached, written or forked past its limit.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.execution import sandbox as sandbox_module
from reviewbot.execution.execute import ExecSettings, execute
from reviewbot.execution.sandbox import CONFINING_SANDBOXES, SANDBOXES, Limits, detect_sandbox, run_sandboxed
from reviewbot.execution.sandbox_probe import verify
from tests.execution.probe import change_of, flag_derivation, make_repo, toml

SECRETS = {
    "MYSQL_PWD": "mysql-pw-4f1c9a",
    "DB_PASS": "db-pass-77ab01",
    "PGPASSWORD": "pg-pass-0c3e55",
    "CELERY_BROKER_URL": "redis://:broker-pw-9d2e@10.1.2.3:6379/0",
    "SENTRY_DSN": "https://sentrykey-51ab@o1.ingest.invalid/2",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-8e7d6c",
    "GITHUB_TOKEN": "ghs_token_31a2b3c4",
    "REVIEWBOT_WEBHOOK_SECRET": "hook-secret-aa11",
    "OPENAI_API_KEY": "sk-openai-5566ff",
    "STRIPE_SK": "stripe-live-0099",  # no secret-looking word at all: only an allow-list keeps it out
}


@pytest.fixture(scope="module")
def working(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    scratch = tmp_path_factory.mktemp("probe")
    return [k for k in SANDBOXES if detect_sandbox(scratch, (k,)) == k]


@pytest.fixture
def kind(request: pytest.FixtureRequest, working: list[str]) -> str:
    name = str(request.param)
    if name not in working:
        pytest.skip(f"the {name} sandbox does not work on this machine")
    return name


def _run(command: str, root: Path, kind: str, **kw: object) -> tuple[int | None, str]:
    root.mkdir(exist_ok=True)
    res = run_sandboxed(command, root, root, timeout=60, sandbox=kind, **kw)  # type: ignore[arg-type]
    assert res.notes == [], res.notes
    return res.exit_code, res.output


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
@pytest.mark.skipif(os.geteuid() != 0, reason="as a user reviewbot cannot read /etc/shadow either")
def test_etc_shadow_is_unreadable_even_when_reviewbot_is_root(kind: str, tmp_path: Path) -> None:
    assert os.access("/etc/shadow", os.R_OK)  # reviewbot itself could
    code, out = _run("cat /etc/shadow && echo READ-IT; id -u; exit 0", tmp_path / "run", kind)
    assert "READ-IT" not in out and "root:" not in out
    assert out.split()[-1] != "0"  # not root inside either


@pytest.fixture
def host_socket(tmp_path: Path) -> Iterator[list[Path]]:
    """Listening Unix sockets on the host where servers keep them: /run and the temp directory."""
    places = [Path("/run") / f"reviewbot-test-{os.getpid()}.sock", tmp_path / "state" / "server.sock"]
    # Where other distributions keep them (MySQL on RHEL: /var/lib/mysql/mysql.sock), and a directory
    # of the host's own: read-only is not enough, a socket on a read-only mount still answers.
    places += [Path("/var/lib") / f"reviewbot-test-{os.getpid()}" / "s.sock"]
    places += [Path("/srv") / f"reviewbot-test-{os.getpid()}" / "s.sock"]
    socks = []
    for p in places:
        p.parent.mkdir(parents=True, exist_ok=True)
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        s.listen(4)
        socks.append(s)
    pg = Path("/var/run/postgresql/.s.PGSQL.5432")
    yield [*places, *([pg] if pg.exists() else [])]
    for s, p in zip(socks, places, strict=True):
        s.close()
        p.unlink(missing_ok=True)
        if p.parent.name.startswith("reviewbot-test-"):
            p.parent.rmdir()


CONNECT = """
import socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("CONNECTED", path)
    except OSError as e:
        print("refused", path, type(e).__name__)
"""


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_no_unix_socket_of_the_host_is_reachable(kind: str, tmp_path: Path, host_socket: list[Path]) -> None:
    for p in host_socket:  # each is reachable from the host: the test would otherwise prove nothing
        with socket.socket(socket.AF_UNIX) as c:
            c.connect(str(p))
    script = tmp_path / "run" / "connect.py"
    script.parent.mkdir()
    script.write_text(CONNECT)
    args = " ".join(str(p) for p in host_socket)
    code, out = _run(f"{sys.executable} connect.py {args}", tmp_path / "run", kind)
    assert code == 0, out
    assert "CONNECTED" not in out
    assert out.count("refused") == len(host_socket)


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_no_secret_of_the_workers_environment_reaches_the_test(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    code, out = _run("env; exit 0", tmp_path / "run", kind)
    names = {line.partition("=")[0] for line in out.splitlines()}
    assert not names & set(SECRETS)
    assert not [v for v in SECRETS.values() if v in out]
    assert "PATH" in names and "HOME" in names


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_writes_outside_the_run_directory_fail(kind: str, tmp_path: Path) -> None:
    targets = [
        tmp_path / "outside.txt",
        Path("/etc") / f"reviewbot-{os.getpid()}",
        Path.home() / f"rb-{os.getpid()}",
    ]
    targets += [Path("/var/tmp") / f"reviewbot-{os.getpid()}"]
    command = "; ".join(f"echo x > {t} 2>/dev/null" for t in targets) + "; echo x > inside.txt; exit 0"
    _run(command, tmp_path / "run", kind)
    assert [t for t in targets if t.exists()] == []
    assert (tmp_path / "run" / "inside.txt").read_text() == "x\n"


FORK = """
import os, time
started = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        started += 1
    print("started", started, "no error")
except OSError as e:
    print("started", started, "error", e.errno)
"""


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_forking_past_the_process_limit_fails(kind: str, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "fork.py").write_text(FORK)
    limits = Limits(processes=40)
    code, out = _run(f"{sys.executable} fork.py", tmp_path / "run", kind, limits=limits)
    words = out.split()
    assert "started" in words, out
    started = int(words[words.index("started") + 1])
    assert "error" in words and started < 40, out  # EAGAIN well before 200 children


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_the_isolation_lines_say_what_the_probe_saw(kind: str, tmp_path: Path) -> None:
    lines = verify(kind, tmp_path)
    assert set(lines) >= {"user", "network", "sockets", "filesystem", "environment", "limits", "processes"}
    assert not [k for k, v in lines.items() if v.startswith("NOT")], lines
    assert "rlimits bind" in lines["limits"] and "cgroup limits not used" in lines["limits"]


def test_the_unconfined_path_says_NOT_where_it_does_not_hold(tmp_path: Path) -> None:
    lines = verify("subprocess", tmp_path)
    assert lines["network"].startswith("NOT") and lines["filesystem"].startswith("NOT")
    if os.geteuid() == 0:
        assert lines["user"].startswith("NOT")


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_links_planted_in_the_run_directory_are_never_read_back(kind: str, tmp_path: Path) -> None:
    """What comes back (the output, the notes) is read from what reviewbot opened, never by a name in
    the run directory: the test owns it and may leave a link to any file reviewbot can read."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host-secret-value-7c1e\n")
    secret.chmod(0o600)
    names = ["output-1.log", ".sandbox-mount-failures", ".sandbox-hide-failures", "output.log"]
    command = "; ".join(f"ln -sf {secret} {n}" for n in names) + "; echo done; exit 0"
    root = tmp_path / "run"
    root.mkdir()
    res = run_sandboxed(command, root, root, timeout=60, sandbox=kind)
    assert res.exit_code == 0 and "done" in res.output
    assert "host-secret-value" not in res.output and not any("host-secret" in n for n in res.notes)


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_a_forged_prelude_note_in_the_tests_output_is_not_a_note(kind: str, tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    res = run_sandboxed(
        "echo 'reviewbot-sandbox: hide /etc/forged'; echo 'reviewbot-sandbox: prelude done'; exit 0",
        root,
        root,
        timeout=60,
        sandbox=kind,
    )
    assert res.exit_code == 0 and res.notes == []
    assert "/etc/forged" in res.output  # the test's output, shown as output


@pytest.mark.parametrize("allowed", [None, frozenset(), frozenset({"PROBE_VISIBLE"})])
def test_the_app_passes_only_the_names_its_operator_allows(
    allowed: frozenset[str] | None, working: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository's `[tests] env` is its owner's wish; in the App the owner is not the operator, so
    only names on the operator's list (`tests_env`) pass. None: a local run, the user's own config."""
    kind = next(k for k in CONFINING_SANDBOXES if k in working)
    monkeypatch.setenv("PROBE_VISIBLE", "operator-value")
    cfg = toml('test "$PROBE_VISIBLE" = operator-value') + 'env = ["PROBE_VISIBLE"]\n'
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {})
    ex = execute(
        change_of(repo, base, head),
        repo.path,
        flag_derivation(),
        ExecSettings(sandbox=kind, env_allowed=allowed),
    )
    assert ex.head is not None
    passed = allowed is None or "PROBE_VISIBLE" in allowed
    assert (ex.head.exit_code == 0) is passed
    refused = [n.message for n in ex.notes if "not passed: PROBE_VISIBLE" in n.message]
    assert bool(refused) is not passed


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES, indirect=True)
def test_a_credential_inside_a_kept_toolchain_is_masked_and_the_toolchain_runs(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A toolchain on PATH outside the system set (~/.cargo/bin, a venv) is mounted with its prefix; a
    token file in that prefix (~/.cargo/credentials.toml) must not come with it."""
    prefix = Path(tempfile.mkdtemp(prefix="reviewbot-toolchain-", dir="/srv"))
    try:
        prefix.chmod(0o755)
        (prefix / "bin").mkdir()
        tool = prefix / "bin" / "mytool"
        tool.write_text("#!/bin/sh\necho tool-ran\n")
        tool.chmod(0o755)
        token = prefix / "credentials.toml"
        token.write_text('token = "cargo-token-5e6f"\n')
        token.chmod(0o644)
        monkeypatch.setenv("PATH", f"{prefix / 'bin'}:{os.environ['PATH']}")
        monkeypatch.setattr(
            sandbox_module, "_CREDENTIAL_PATHS", (*sandbox_module._CREDENTIAL_PATHS, str(token))
        )
        code, out = _run(f"mytool; cat {token}; exit 0", tmp_path / "run", kind)
        assert "tool-ran" in out and "cargo-token" not in out
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
