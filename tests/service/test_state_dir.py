"""REVIEWBOT_STATE_DIR moves the default database along with the queue (issue 15 item 13), for the
service (serve / worker), `reviewbot run --pr` and `reviewbot rounds` alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reviewbot.github.settings import GitHubSettings
from reviewbot.service.runtime import Runtime
from reviewbot.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT), **extra)
    return env


def test_the_service_keeps_its_database_and_its_queue_in_the_state_directory(tmp_path: Path) -> None:
    state = tmp_path / "elsewhere"
    env = _env(tmp_path, REVIEWBOT_STATE_DIR=str(state), REVIEWBOT_WEBHOOK_SECRET="s")
    settings = load_settings(environ=env)
    rt = Runtime.open(settings)
    try:
        assert rt.store.url.endswith(str(state / "reviewbot.sqlite3"))
        assert "queue.sqlite3" in rt.queue.describe()
    finally:
        rt.close()
    assert sorted(p.name for p in state.iterdir() if p.suffix == ".sqlite3") == [
        "queue.sqlite3",
        "reviewbot.sqlite3",
    ]
    assert not (tmp_path / "home" / ".local").exists()  # nothing in the default place
    # `reviewbot run --pr N` (GitHub rounds) records into the same database.
    assert GitHubSettings.from_settings(settings).db_url == f"sqlite:///{state / 'reviewbot.sqlite3'}"


def test_reviewbot_rounds_reads_the_state_directory_of_the_environment_and_of_the_config_file(
    tmp_path: Path,
) -> None:
    by_env = tmp_path / "by-env"
    env = _env(tmp_path, REVIEWBOT_STATE_DIR=str(by_env))
    cmd = [sys.executable, "-m", "reviewbot.cli", "rounds", "--pr", "1", "--repo", "acme/x"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "no rounds recorded" in proc.stderr + proc.stdout, proc.stderr
    assert (by_env / "reviewbot.sqlite3").is_file()

    by_file = tmp_path / "by-file"
    config = tmp_path / "reviewbot.yaml"
    config.write_text(f"state_dir: {by_file}\n")
    env = _env(tmp_path, REVIEWBOT_CONFIG=str(config))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "no rounds recorded" in proc.stderr + proc.stdout, proc.stderr
    assert (by_file / "reviewbot.sqlite3").is_file()
    assert not (tmp_path / "home" / ".local").exists()
