"""docs/github-app.md takes an installer from zero to a first comment (issue 27 item 12): the examples
it gives are well-formed and name what reviewbot really has; no doc points readers at test files."""

from __future__ import annotations

import argparse
import configparser
import re
from pathlib import Path

import yaml

from reviewbot.commands import serve, worker

ROOT = Path(__file__).resolve().parents[2]
APP = (ROOT / "docs" / "github-app.md").read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_every_step_is_there() -> None:
    for heading in (
        "## 0. Install on the server",
        "## 1. Register the App",
        "### Secrets",
        "### TLS reverse proxy",
        "### systemd",
        "### Docker Compose",
        "### Verify: from zero to a first comment",
    ):
        assert heading in APP, heading
    assert "pip install 'reviewbot[postgres,redis]" in APP
    for permission in ("Pull requests: Read and write", "Checks: Read and write", "Contents: Read-only"):
        assert permission in APP
    for event in ("**Pull request**", "**Issue comment**", "**Check run**"):
        assert event in APP
    verify = APP.split("### Verify: from zero to a first comment", 1)[1]
    assert "/healthz" in verify and "Recent Deliveries" in verify and "Redeliver" in verify


def test_no_doc_points_at_test_files() -> None:
    for doc in ("github-app.md", "where-to-run.md"):
        text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
        assert not re.search(r"\btests/", text), doc


def test_the_compose_file_and_the_systemd_unit_are_well_formed_and_run_real_commands() -> None:
    (compose,) = [b for b in _blocks(APP, "yaml") if "services:" in b]
    services = yaml.safe_load(compose)["services"]
    assert {"web", "worker", "db", "redis"} <= set(services)
    assert services["worker"]["environment"]["REVIEWBOT_QUEUE_URL"].startswith("redis://")
    parsers = {"serve": serve, "worker": worker}
    for name in ("web", "worker"):
        command = services[name]["command"]
        parser = argparse.ArgumentParser()
        parsers[command[0]].add_arguments(parser)
        parser.parse_args(command[1:])  # every flag the example passes exists
    (unit_text,) = _blocks(APP, "ini")
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(unit_text)
    exec_start = unit["Service"]["ExecStart"].split()
    assert exec_start[0].endswith("/bin/reviewbot") and exec_start[1] == "serve"
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    assert parser.parse_args(exec_start[2:]).with_worker
    assert unit["Service"]["KillSignal"] == "SIGTERM"


def test_the_proxy_forwards_the_webhook_and_the_health_check() -> None:
    (nginx,) = _blocks(APP, "nginx")
    assert (
        "location = /webhook" in nginx
        and "location = /healthz" in nginx
        and "client_max_body_size 25m" in nginx
    )
    caddy = APP.split("### TLS reverse proxy", 1)[1].split("```", 2)[1]
    assert "reverse_proxy /webhook 127.0.0.1:8080" in caddy


def test_the_readme_says_where_local_history_lives() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (
        "Local history (`--pr N` rounds, dismissals) lives in a SQLite file in the state directory" in readme
    )
    assert "`$XDG_STATE_HOME/reviewbot` (else `~/.local/state/reviewbot`)" in readme
    # The two set-up commands stay as they are.
    assert "python3 -m pip install -e . && reviewbot example" in readme
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in readme
