"""The sandbox hides reviewbot's own secrets and state: App key, config, state dir, clone cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.execution.execute import ExecSettings, execute
from reviewbot.execution.sandbox import (
    CONFINING_SANDBOXES,
    SANDBOXES,
    detect_sandbox,
    hidden_paths,
    hide_from_sandbox,
    run_sandboxed,
    service_paths,
)
from tests.execution.probe import change_of, flag_derivation, make_repo, toml

SECRET = "s3cret-material-"


@pytest.fixture(scope="module")
def working(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    scratch = tmp_path_factory.mktemp("probe")
    return [k for k in SANDBOXES if detect_sandbox(scratch, (k,)) == k]


def _plant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A secret file at every place the worker keeps one, each named by its environment variable."""
    places = {
        "key": tmp_path / "etc" / "app.pem",
        "config": tmp_path / "etc" / "reviewbot.yaml",
        "cache": tmp_path / "cache" / "github.com" / "other" / "repo" / "secret.txt",
        "state": tmp_path / "state" / "rounds.sqlite3",
        "db": tmp_path / "db" / "store.sqlite3",
        "default-cache": tmp_path / "home" / ".cache" / "reviewbot" / "x" / "y.txt",
        "default-state": tmp_path / "home" / ".local" / "state" / "reviewbot" / "queue.sqlite3",
        "registered": tmp_path / "elsewhere" / "named-on-the-command-line.yaml",
    }
    for name, path in places.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SECRET + name)
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "REVIEWBOT_QUEUE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("REVIEWBOT_PRIVATE_KEY_PATH", str(places["key"]))
    monkeypatch.setenv("REVIEWBOT_CONFIG", str(places["config"]))
    monkeypatch.setenv("REVIEWBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REVIEWBOT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("REVIEWBOT_DB_URL", f"sqlite:///{places['db']}")
    hide_from_sandbox([places["registered"]])
    return places


def _reader(places: dict[str, Path]) -> str:
    return "; ".join(f"cat {p} 2>/dev/null" for p in places.values()) + "; exit 0"


@pytest.mark.parametrize("kind", CONFINING_SANDBOXES)
def test_a_test_command_cannot_read_the_workers_secrets(
    kind: str, working: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind not in working:
        pytest.skip(f"the {kind} sandbox does not work on this machine")
    places = _plant(tmp_path, monkeypatch)
    run = tmp_path / "run"
    run.mkdir()

    res = run_sandboxed(_reader(places), run, run, timeout=30, sandbox=kind)

    assert res.exit_code == 0 and res.notes == []
    leaked = [name for name in places if SECRET + name in res.output]
    assert leaked == []


def test_without_a_sandbox_the_same_command_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the files are readable, so only the sandbox keeps them from the test above."""
    places = _plant(tmp_path, monkeypatch)
    run = tmp_path / "run"
    run.mkdir()
    res = run_sandboxed(_reader(places), run, run, timeout=30, sandbox="subprocess")
    assert [name for name in places if SECRET + name in res.output] == list(places)


def test_the_run_directory_stays_usable_inside_a_hidden_directory(
    working: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "bwrap" not in working:
        pytest.skip("bwrap does not work on this machine")
    cache = tmp_path / "cache"
    (cache / "other").mkdir(parents=True)
    (cache / "other" / "secret.txt").write_text(SECRET + "other")
    run = cache / "run"
    run.mkdir()
    monkeypatch.setenv("REVIEWBOT_CACHE_DIR", str(cache))
    res = run_sandboxed(
        f"cat {cache}/other/secret.txt; echo written > out.txt && cat out.txt",
        run,
        run,
        timeout=30,
        sandbox="bwrap",
    )
    assert SECRET not in res.output and "written" in res.output
    assert (run / "out.txt").read_text() == "written\n"


def test_hidden_paths_follow_symlinks_and_skip_nested_and_run_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "vault" / "app.pem"
    real.parent.mkdir()
    real.write_text("k")
    link = tmp_path / "app-link.pem"
    link.symlink_to(real)
    cache = tmp_path / "cache"
    (cache / "repo").mkdir(parents=True)
    monkeypatch.setenv("REVIEWBOT_PRIVATE_KEY_PATH", str(link))
    monkeypatch.setenv("REVIEWBOT_CACHE_DIR", str(cache))
    hide_from_sandbox([cache / "repo", tmp_path / "does-not-exist"])

    hidden = hidden_paths(root=tmp_path / "run")
    assert link in hidden and real in hidden  # both ends of the link
    assert cache in hidden and cache / "repo" not in hidden  # inside a hidden directory already
    assert tmp_path / "does-not-exist" not in hidden
    in_run = hidden_paths(root=cache)  # the run directory itself and what is in it stay visible
    assert cache not in in_run and cache / "repo" not in in_run and real in in_run


def test_service_paths_come_from_the_environment_and_the_defaults(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "REVIEWBOT_PRIVATE_KEY_PATH": "~/key.pem",
        "REVIEWBOT_CACHE_DIR": "/srv/cache",
        "XDG_STATE_HOME": "/var/state",
        "REVIEWBOT_QUEUE_URL": "sqlite:////var/q.sqlite3",
        "REVIEWBOT_DB_URL": "postgresql://u:pw@db/rounds",
    }
    assert service_paths(env) == [
        tmp_path / "key.pem",
        Path("/srv/cache"),
        tmp_path / ".cache" / "reviewbot",
        Path("/var/state/reviewbot"),
        Path("/var/q.sqlite3"),  # the PostgreSQL store is no file to hide
    ]


def test_no_working_allowed_sandbox_means_the_tests_do_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "the-command-ran"
    cfg = toml(f"touch {marker}")
    repo, base, head = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {})
    change = change_of(repo, base, head)

    refused = execute(
        change, repo.path, flag_derivation(), ExecSettings(allowed_sandboxes=("no-such-sandbox",))
    )

    assert not marker.exists() and refused.head is None and refused.summary["sandbox"] is None
    reason = refused.summary["reason_if_not_run"]
    assert "no confining sandbox (no-such-sandbox) works" in reason
    assert any(n.message.startswith("Tests were not run: no confining sandbox") for n in refused.notes)
    # A forced unconfined run is refused the same way when only confining sandboxes are allowed.
    forced = execute(
        change,
        repo.path,
        flag_derivation(),
        ExecSettings(sandbox="subprocess", allowed_sandboxes=CONFINING_SANDBOXES),
    )
    assert not marker.exists() and "`subprocess` was asked for" in forced.summary["reason_if_not_run"]
    # The control: allowed, the same command does run.
    ran = execute(change, repo.path, flag_derivation(), ExecSettings(sandbox="subprocess"))
    assert marker.exists() and ran.summary["sandbox"] == "subprocess"
