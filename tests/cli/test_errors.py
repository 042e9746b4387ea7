"""CLI errors are one line and exit 2, and nothing is written (issue 15, item 18).

Each case runs `reviewbot run` as a subprocess on a real tiny repository (tests/gitrepo.py) with HOME
and the state directory inside the test's directory, and checks: exit 2, stderr one line starting
with `reviewbot:`, no traceback, nothing on stdout, and no file created or changed anywhere under the
test's directory (the repository, the working directory, HOME, the state directory).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakegithub.repos import make_bare, push
from tests.gitrepo import Repo, git

ROOT = Path(__file__).resolve().parents[2]


class Tiny:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.cwd = tmp / "work"
        self.cwd.mkdir()
        self.repo = Repo(tmp / "repo")
        self.base = self.repo.commit({"cfg.py": "def derive(cfg):\n    return cfg\n"}, "base")
        self.repo.checkout("pr", create=True)
        self.head = self.repo.commit({"cfg.py": "def derive(cfg):\n    cfg.x = 1\n    return cfg\n"}, "head")

    def run(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        extra = env or {}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_", "GH_"))}
        env.update(extra)
        env.update(
            PYTHONPATH=str(ROOT),
            HOME=str(self.tmp / "home"),
            XDG_STATE_HOME=str(self.tmp / "state"),
            XDG_CACHE_HOME=str(self.tmp / "cache"),
        )
        return subprocess.run(
            [sys.executable, "-m", "reviewbot.cli", "run", *args],
            cwd=cwd or self.cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def local(self, *args: str) -> list[str]:
        return ["--path", str(self.repo.path), "--base", self.base, "--head", self.head, "--no-tests", *args]


def _files(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for p in root.rglob("*"):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def _one_line_exit_2(done: subprocess.CompletedProcess[str], expected: str) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("reviewbot: "), done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(expected, lines[0]), lines[0]
    return lines[0]


@pytest.fixture
def tiny(tmp_path: Path) -> Tiny:
    return Tiny(tmp_path)


CASES = {
    "output-into-missing-dir": (
        ["-o", "missing/report.md"],
        r"-o missing/report.md: the directory missing does not",
    ),
    "output-onto-a-directory": (["-o", "."], r"-o \.: is a directory"),
    "db-not-a-url": (["--pr", "1", "--db", "notaurl"], r"--db wants a database URL .* not 'notaurl'"),
    "db-unsupported": (["--pr", "1", "--db", "mysql://u@localhost/x"], r"mysql databases are not supported"),
    "db-a-directory": (["--pr", "1", "--db", "sqlite:///{tmp}/work"], r"is a directory, not a database file"),
    "db-in-missing-dir": (
        ["--pr", "1", "--db", "sqlite:///{tmp}/nowhere/r.db"],
        r"the directory .*nowhere does not",
    ),
    "db-not-a-database": (
        ["--pr", "1", "--db", "sqlite:///{tmp}/work/garbage.db"],
        r"file is not a database",
    ),
    "db-server-down": (
        ["--pr", "1", "--db", "postgresql://u@127.0.0.1:1/x"],
        r"cannot open the rounds database",
    ),
    "pr-negative": (["--pr", "-1"], r"--pr must be a pull request number \(1 or more\), not -1"),
    "pr-zero": (["--pr", "0"], r"not 0"),
    "post-on-a-local-review": (
        ["--post"],
        r"--post publishes a pull request's review on GitHub: give --pr N",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_local_review_refuses_bad_arguments_before_any_work(case: str, tiny: Tiny) -> None:
    extra, expected = CASES[case]
    (tiny.cwd / "garbage.db").write_bytes(b"not a database at all\n" * 10)
    before = _files(tiny.tmp)
    done = tiny.run(*tiny.local(*[a.format(tmp=tiny.tmp) for a in extra]))
    _one_line_exit_2(done, expected)
    assert _files(tiny.tmp) == before  # nothing created or changed: no `notaurl`, no report, no db


def test_post_without_repo_or_credentials_is_refused(tiny: Tiny) -> None:
    before = _files(tiny.tmp)
    no_remote = tiny.run("--path", str(tiny.repo.path), "--pr", "3", "--post")
    _one_line_exit_2(no_remote, r"cannot tell the GitHub repository: .* give --repo OWNER/NAME")
    no_token = tiny.run("--path", str(tiny.repo.path), "--pr", "3", "--post", "--repo", "octo/tiny")
    _one_line_exit_2(no_token, r"no GitHub credentials: set GITHUB_TOKEN")
    assert _files(tiny.tmp) == before


def test_no_answer_from_the_api_is_one_line_and_exit_2(tiny: Tiny) -> None:
    """No network to the API: was `GitHub refused GET /user: ConnectionError`, exit 3, after three
    retry warnings naming the verb twice (`GET GET /user`)."""
    with socket.socket() as s:  # a port nobody listens on: connection refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = _files(tiny.tmp)
    done = tiny.run(
        "--path",
        str(tiny.repo.path),
        "--pr",
        "3",
        "--repo",
        "octo/tiny",
        "--api-url",
        f"http://127.0.0.1:{port}",
        env={"GITHUB_TOKEN": "ghp_unused"},
    )
    line = _one_line_exit_2(done, rf"no answer from GitHub at http://127\.0\.0\.1:{port} to GET /user")
    assert "check the network and the API URL" in line and "GET GET" not in done.stderr
    assert _files(tiny.tmp) == before


def test_a_good_output_file_is_written(tiny: Tiny) -> None:
    done = tiny.run(*tiny.local("-o", "report.md"))
    assert done.returncode == 0, done.stderr
    assert (tiny.cwd / "report.md").read_text().startswith("## reviewbot review")


def _hint(line: str) -> str:
    found = re.search(r"\(`([^`]+)`\)", line)
    assert found, line
    return found.group(1)


@pytest.mark.parametrize("form", ["branch", "remote-branch", "sha", "tag"])
def test_the_unknown_revision_hint_is_a_command_that_makes_the_same_run_work(form: str, tiny: Tiny) -> None:
    """The hint runs as written (from another directory too) and afterwards the same command works."""
    upstream = make_bare(tiny.tmp / "upstream.git")
    push(tiny.repo.path, upstream, tiny.base, "refs/heads/main")
    push(tiny.repo.path, upstream, tiny.head, "refs/heads/feature")
    tiny.repo.git("tag", "-a", "v2", "-m", "release", tiny.head)
    push(tiny.repo.path, upstream, "refs/tags/v2", "refs/tags/v2")
    clone = tiny.tmp / "clone"
    # file://: git transfers only what main reaches (a plain path would copy every object).
    git(tiny.tmp, "clone", "-q", "--no-tags", "--single-branch", "-b", "main", upstream.as_uri(), str(clone))
    head = {"branch": "feature", "remote-branch": "origin/feature", "sha": tiny.head, "tag": "v2"}[form]
    args = ["--path", str(clone), "--base", "main", "--head", head, "--no-tests", "--format", "json"]

    line = _one_line_exit_2(tiny.run(*args), rf"unknown revision: {re.escape(head)}; ")
    command = _hint(line)
    subprocess.run(["sh", "-c", command], cwd="/", check=True, capture_output=True)  # from anywhere

    again = tiny.run(*args)
    assert again.returncode == 0, again.stderr


def test_a_name_that_cannot_be_a_revision_gets_no_command(tiny: Tiny) -> None:
    done = tiny.run("--path", str(tiny.repo.path), "--base", "main..pr", "--head", "pr", "--no-tests")
    line = _one_line_exit_2(done, r"unknown revision: main\.\.pr; check the name")
    assert "`" not in line
    done = tiny.run("--path", str(tiny.repo.path), "--base", "nosuch", "--head", "pr", "--no-tests")
    _one_line_exit_2(done, r"unknown revision: nosuch; check the name \(the repository has no remote")
