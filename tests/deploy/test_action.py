"""action.yml: its shell steps run as the Actions runner would, against the bundled example's PR.

The steps are read from action.yml and executed (inputs, `github` context and step outputs
substituted; `$GITHUB_OUTPUT` collected), except `actions/setup-python` (this interpreter is the
Python) and `github/codeql-action/upload-sarif` (it talks to GitHub). The install step installs this
checkout into a fresh virtual environment (with the system site-packages, so only the build backend
comes from the package index).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewbot.example import ExampleRepo, build_example
from tests.deploy.actionrun import ActionRun, load, run_action

ROOT = Path(__file__).resolve().parents[2]
SKIP_USES = {
    "actions/setup-python": "the test's interpreter is the Python",
    "github/codeql-action/upload-sarif": "uploads to GitHub's code scanning",
}


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return load(ROOT / "action.yml")


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment whose bin/ goes first on PATH: what the install step installs lands there."""
    path = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def action_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files as the runner unpacks an action (tracked and new files, no tests)."""
    dest = tmp_path_factory.mktemp("action") / "reviewbot"
    names = (
        subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in names:
        src = ROOT / name
        if not name or name.startswith("tests/") or not (src.exists() or src.is_symlink()):
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(src.readlink())
        else:
            shutil.copy2(src, target)
    return dest


def _run(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp: Path, **with_: str
) -> ActionRun:
    github = {
        "action_path": str(action_path),
        "event": {"pull_request": {"base": {"sha": example.base}, "head": {"sha": example.round1}}},
    }
    path = f"{venv / 'bin'}:{os.environ['PATH']}"
    return run_action(
        action,
        with_=with_,
        github=github,
        cwd=example.path,
        env={"PATH": path, "VIRTUAL_ENV": str(venv)},
        skip_uses=SKIP_USES,
        scratch=tmp,
    )


def test_the_steps_review_the_pr_write_sarif_and_fail_on_blocking(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp_path: Path
) -> None:
    run = _run(action, example, venv, action_path, tmp_path, **{"fail-on-blocking": "true"})
    by_name = {s.name: s for s in run.steps}
    install = by_name["Install reviewbot"]
    assert install.ran and install.returncode == 0, install.output[-3000:]
    assert (venv / "bin" / "reviewbot").exists()  # installed by the step, not the one of the test run
    review = by_name["Review base..head"]
    assert review.ran and review.returncode == 0, review.output[-3000:]
    assert run.outputs["review"]["status"] == "BLOCKING"  # the example's round 1: missing-tests (P1)
    sarif = json.loads((example.path / "reviewbot.sarif").read_text())
    results = sarif["runs"][0]["results"]
    assert any(r["ruleId"] == "missing-tests" and r["level"] == "error" for r in results)
    assert sarif["runs"][0]["properties"]["status"] == "BLOCKING"
    upload = by_name["Upload to code scanning"]
    assert not upload.ran and upload.output.startswith("skipped:")  # its condition held
    fail = by_name["Fail on blocking"]
    assert fail.ran and fail.returncode == 1 and "BLOCKING" in fail.output
    assert run.failed


def test_without_fail_on_blocking_the_job_passes_and_the_sarif_is_there(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp_path: Path
) -> None:
    run = _run(
        action, example, venv, action_path, tmp_path, **{"run-tests": "false", "sarif-file": "out/r.sarif"}
    )
    assert not run.failed, [(s.name, s.output[-2000:]) for s in run.steps if s.returncode]
    fail = next(s for s in run.steps if s.name == "Fail on blocking")
    assert not fail.ran and fail.output == "condition false"
    assert run.outputs["review"]["status"] == "BLOCKING"
    sarif = json.loads((example.path / "out" / "r.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]


def test_outside_a_pull_request_the_review_step_says_what_to_set(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp_path: Path
) -> None:
    path = f"{venv / 'bin'}:{os.environ['PATH']}"
    review_only = {
        **action,
        "runs": {**action["runs"], "steps": [s for s in action["runs"]["steps"] if s.get("id") == "review"]},
    }
    run = run_action(
        review_only,
        with_={},
        github={"action_path": str(action_path), "event": {}},
        cwd=example.path,
        env={"PATH": path},
        skip_uses=SKIP_USES,
        scratch=tmp_path,
    )
    (step,) = run.steps
    assert step.returncode == 2 and "set the base and head inputs" in step.output


def _review_step(action: dict[str, Any]) -> dict[str, Any]:
    return {
        **action,
        "runs": {**action["runs"], "steps": [s for s in action["runs"]["steps"] if s.get("id") == "review"]},
    }


def test_the_step_summary_holds_the_findings_without_code_scanning(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp_path: Path
) -> None:
    """`upload-sarif: "false"` (no code scanning): the job's summary page is where the findings are."""
    summary = tmp_path / "summary.md"
    github = {
        "action_path": str(action_path),
        "event": {"pull_request": {"base": {"sha": example.base}, "head": {"sha": example.round1}}},
    }
    run = run_action(
        action,
        with_={"run-tests": "false", "upload-sarif": "false"},
        github=github,
        cwd=example.path,
        env={"PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "GITHUB_STEP_SUMMARY": str(summary)},
        skip_uses=SKIP_USES,
        scratch=tmp_path,
    )
    assert not run.failed, [(s.name, s.output[-2000:]) for s in run.steps if s.returncode]
    upload = next(s for s in run.steps if s.name == "Upload to code scanning")
    assert upload.output == "condition false"
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## reviewbot review — BLOCKING")
    assert "missing-tests" in text or "[P1]" in text
    assert "### Blocking Issues" in text and "**F1 · [P1] " in text
    assert int(run.outputs["review"]["findings"]) >= 1
    assert (
        "the report is in the job summary"
        in next(s for s in run.steps if s.name == "Review base..head").output
    )


def test_a_shallow_checkout_is_one_line_naming_fetch_depth_0(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp_path: Path
) -> None:
    """actions/checkout's default (depth 1, the head only): the base is missing; the step says what to set."""
    subprocess.run(
        ["git", "-C", str(example.path), "branch", "-f", "shallow-head", example.round1], check=True
    )
    shallow = tmp_path / "shallow"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            "shallow-head",
            f"file://{example.path}",
            str(shallow),
        ],
        check=True,
    )
    assert (
        subprocess.run(
            ["git", "-C", str(shallow), "rev-parse", "--is-shallow-repository"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        == "true"
    )
    github = {
        "action_path": str(action_path),
        "event": {"pull_request": {"base": {"sha": example.base}, "head": {"sha": example.round1}}},
    }
    run = run_action(
        _review_step(action),
        with_={"run-tests": "false"},
        github=github,
        cwd=shallow,
        env={"PATH": f"{venv / 'bin'}:{os.environ['PATH']}"},
        skip_uses=SKIP_USES,
        scratch=tmp_path,
    )
    (step,) = run.steps
    assert step.returncode == 2
    errors = [line for line in step.output.splitlines() if line.startswith("::error::")]
    assert len(errors) == 1 and "`fetch-depth: 0`" in errors[0] and example.base[:12] in errors[0]
    assert "unknown revision" not in step.output and "Traceback" not in step.output


def test_the_comment_fallback_posts_once_and_updates_in_place(
    action: dict[str, Any], example: ExampleRepo, venv: Path, action_path: Path, tmp_path: Path
) -> None:
    from tests.fakegithub import FakeGitHub, make_bare, push

    bare = make_bare(tmp_path / "bare.git")
    push(example.path, bare, example.base, "refs/heads/main")
    push(example.path, bare, example.round1, "refs/heads/feature")
    with FakeGitHub() as gh:
        token = gh.add_user("acme")
        gh.add_repo("acme/rtp-llm", bare)
        gh.add_pull("acme/rtp-llm", 7, user="acme", head_sha=example.round1, base_sha=example.base)
        github = {
            "action_path": str(action_path),
            "token": token,
            "event": {
                "pull_request": {"number": 7, "base": {"sha": example.base}, "head": {"sha": example.round1}}
            },
        }
        env = {
            "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
            "GITHUB_API_URL": gh.api_url,
            "GITHUB_REPOSITORY": "acme/rtp-llm",
        }
        outputs = []
        for i in range(2):
            scratch = tmp_path / f"run{i}"
            scratch.mkdir()
            run = run_action(
                _review_step(action),
                with_={"run-tests": "false", "comment": "true"},
                github=github,
                cwd=example.path,
                env=env,
                skip_uses=SKIP_USES,
                scratch=scratch,
            )
            (step,) = run.steps
            assert step.returncode == 0, step.output[-3000:]
            outputs.append(step.output)
        assert "reviewbot: commented on acme/rtp-llm#7" in outputs[0]
        assert "reviewbot: updated comment" in outputs[1]
        (comment,) = gh.comments("acme/rtp-llm", 7)
        assert "## reviewbot review — BLOCKING" in comment.body and "**F1 · [P1] " in comment.body

        # A token that cannot write (a fork's pull request): a warning, not a failed job.
        github["token"] = "ghp_not_a_token"
        scratch = tmp_path / "run-denied"
        scratch.mkdir()
        run = run_action(
            _review_step(action),
            with_={"run-tests": "false", "comment": "true"},
            github=github,
            cwd=example.path,
            env=env,
            skip_uses=SKIP_USES,
            scratch=scratch,
        )
        (step,) = run.steps
        assert step.returncode == 0 and "::warning::reviewbot: comment not posted: HTTP 401" in step.output
