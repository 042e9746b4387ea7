"""`reviewbot config check [PATH]` and `[review] lang` (issue 27): a working tree's `.reviewbot.toml`
checked with a review's messages; the repository's report language, the command line's --lang over it,
and the App honouring it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbot.cli import main
from reviewbot.github import GitHubSettings, run_pr_round
from tests.config.helpers import configured_pr
from tests.fakegithub import FakeGitHub
from tests.gitrepo import Repo


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    code = main(["config", "check", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[revew]\n", "unknown section(s) [revew]; allowed: [review], [tests]"),
        ('[review]\ndisabled = ["no-such-rule"]\n', "[review] disabled: unknown rule id(s) no-such-rule"),
        ('[review]\nlang = "fr"\n', '[review] lang must be the report\'s language, "en" or "zh", not \'fr\''),
        ("[tests]\ntimeout = 5\n", '[tests] needs `command = "..."`'),
        ("[review\n", "not valid TOML"),
        ('[review]\nchecklists = ["ours.yaml"]\n', "ours.yaml is not in the working tree"),
    ],
)
def test_a_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (tmp_path / ".reviewbot.toml").write_text(text)
    code, out, err = _check(capsys, str(tmp_path))
    assert code == 2 and out == [] and len(err) == 1, err
    assert err[0].startswith(f"reviewbot: {tmp_path / '.reviewbot.toml'}: ") and message in err[0], err[0]


def test_the_messages_are_those_of_a_review(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path / "repo")
    bad = "[revew]\n"
    base = repo.commit({".reviewbot.toml": bad, "cfg.py": "x = 1\n"}, "base")
    head = repo.commit({"cfg.py": "x = 2\n"}, "head")
    assert main(["run", "--path", str(repo.path), "--base", base, "--head", head, "--no-tests"]) == 2
    review_err = capsys.readouterr().err.strip()
    code, _, err = _check(capsys, str(repo.path / ".reviewbot.toml"))
    assert code == 2
    # The same sentence after the file's name (the review names the base's file, the check this one).
    assert review_err.split(": ", 2)[2] == err[0].split(": ", 2)[2]


def test_a_repository_checklist_is_parsed_as_a_review_parses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".reviewbot.toml").write_text('[review]\nchecklists = ["general", "ours.yaml"]\n')
    (tmp_path / "ours.yaml").write_text(
        "id: ours\nname: Ours\nitems:\n  - id: a\n    label: A\n    rules: [nope]\n"
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = _check(capsys)
    assert code == 2 and err == ["reviewbot: ours.yaml: item a names unknown rule(s) nope"]
    (tmp_path / "ours.yaml").write_text(
        "id: ours\nname: Ours\nitems:\n  - id: a\n    label: A\n    rules: [missing-tests]\n"
    )
    code, out, err = _check(capsys)
    assert code == 0 and err == []
    assert out == [
        "reviewbot: .reviewbot.toml is valid: checklists general, ours.yaml; no [tests] (tests are not run)"
    ]


def test_a_good_file_and_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check(capsys, str(tmp_path))
    assert code == 0 and out == [f"reviewbot: no .reviewbot.toml in {tmp_path}: reviews use the defaults"]
    (tmp_path / ".reviewbot.toml").write_text('[review]\nlang = "zh"\n[tests]\ncommand = "make test"\n')
    code, out, _ = _check(capsys, str(tmp_path / ".reviewbot.toml"))
    assert code == 0 and "lang zh" in out[0] and "tests `make test`" in out[0]
    code, _, err = _check(capsys, str(tmp_path / "nowhere"))
    assert code == 2 and err == [f"reviewbot: {tmp_path / 'nowhere'}: no such file or directory"]


def test_a_staged_commit_that_changes_the_file_gets_it_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the pre-commit hook (`reviewbot run --staged`) does when the commit changes the file."""
    repo = Repo(tmp_path / "repo")
    repo.commit({"cfg.py": "x = 1\n"}, "base")
    (repo.path / ".reviewbot.toml").write_text('[review]\ndisabled = ["nope"]\n')
    repo.git("add", ".reviewbot.toml")
    assert main(["run", "--staged", "--path", str(repo.path), "--no-tests"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "[review] disabled: unknown rule id(s) nope" in err[0]
    (repo.path / ".reviewbot.toml").write_text('[review]\ndisabled = ["formatting-noise"]\n')
    repo.git("add", ".reviewbot.toml")
    assert main(["run", "--staged", "--path", str(repo.path), "--no-tests", "--format", "json"]) == 0


# --- [review] lang ----------------------------------------------------------------------------------


def test_the_repository_language_and_the_flag_over_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pr = configured_pr(tmp_path, '[review]\nlang = "zh"\n')
    argv = ["run", "--path", str(pr.path), "--base", pr.base, "--head", pr.head, "--no-tests"]
    assert main([*argv, "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("## reviewbot 评审 — BLOCKING")
    assert main([*argv, "--format", "text"]) == 0
    assert "条发现" in capsys.readouterr().out.splitlines()[-1]
    assert main([*argv, "--format", "markdown", "--lang", "en"]) == 0
    assert capsys.readouterr().out.startswith("## reviewbot review — BLOCKING")
    assert main([*argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "BLOCKING"


def test_the_app_reports_in_the_repository_language(tmp_path: Path) -> None:
    pr = configured_pr(tmp_path, '[review]\nlang = "zh"\n')
    with FakeGitHub() as fake:
        fake.options.allow_pat_check_runs = True
        token = fake.add_user("reviewbot-dev")
        fake.add_user("author")
        fake.add_repo("acme/cfg", pr.bare)
        fake.add_pull("acme/cfg", 7, user="author", head_sha=pr.head, base_sha=pr.base)
        settings = GitHubSettings(
            api_url=fake.api_url,
            token=token,
            cache_dir=tmp_path / "cache",
            db_url=f"sqlite:///{tmp_path / 'rounds.sqlite3'}",
            seconds_between_requests=0.0,
            seconds_between_writes=0.0,
            run_tests=False,
        )
        outcome = run_pr_round(settings, "acme/cfg", 7, post=True)
        assert outcome.status == "published"
        (comment,) = fake.comments("acme/cfg", 7)
        assert comment.body.startswith("## PR #7") and "评审" in comment.body.split("\n", 1)[0]
        # The operator's choice wins over the repository's.
        en = run_pr_round(GitHubSettings(**{**settings.__dict__, "lang": "en"}), "acme/cfg", 7, post=True)
        assert en.status == "published"
        (comment,) = fake.comments("acme/cfg", 7)
        assert "review" in comment.body.split("\n", 1)[0] and "评审" not in comment.body.split("\n", 1)[0]
