"""The review step of reviewbot's GitHub Action (action.yml): one review, three destinations.

Reads its inputs from the environment (never spliced into a script): BASE, HEAD, SARIF, RUN_TESTS,
COMMENT, and for the comment GITHUB_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY and PR_NUMBER.

1. The base and head must be in the checkout. A shallow checkout (actions/checkout's default depth
   of 1) has neither the base nor the merge base: that is one `::error::` line naming
   `fetch-depth: 0`, exit 2, instead of git's "unknown revision".
2. `reviewbot run --format markdown --also sarif=SARIF`: the SARIF file for code scanning and the
   report for `$GITHUB_STEP_SUMMARY` (the job's summary page: findings without code scanning).
3. With COMMENT=true, the report is also the pull request's comment, updated in place on later
   runs (found by a hidden marker): for repositories without code scanning. A token that cannot
   write (a fork's pull request) gets a warning, not a failed job.

Writes `status=...` and `findings=...` to `$GITHUB_OUTPUT`. Exit codes: reviewbot's (0, 2, 3), and
2 for a missing base/head.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARK = "<!-- reviewbot:action -->"
SUMMARY_LIMIT = 1_000_000  # bytes: GitHub refuses a larger step summary


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def has_commit(rev: str) -> bool:
    return git("cat-file", "-e", f"{rev}^{{commit}}").returncode == 0


def check_revisions(base: str, head: str) -> str | None:
    """None when the review can run; else the one line that says why not."""
    if git("rev-parse", "--git-dir").returncode != 0:
        return "reviewbot: not a git checkout: run actions/checkout (with fetch-depth: 0) before reviewbot"
    shallow = git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    missing = [name for name, rev in (("base", base), ("head", head)) if not has_commit(rev)]
    if not missing and git("merge-base", base, head).returncode != 0:
        missing = ["merge base"]
    if not missing:
        return None
    what = " and ".join(missing)
    revs = {"base": base, "head": head}
    named = ", ".join(f"{m} {revs[m][:12]}" if m in revs else m for m in missing)
    if shallow:
        return (
            f"reviewbot: the {what} is not in this shallow checkout ({named}): "
            "set `fetch-depth: 0` on actions/checkout (with: {fetch-depth: 0})"
        )
    return f"reviewbot: the {what} is not in this checkout ({named}): fetch it, or set `fetch-depth: 0` on actions/checkout"


def set_output(name: str, value: str) -> None:
    out = os.environ.get("GITHUB_OUTPUT")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(f"{name}={value}\n")


def step_summary(markdown: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    data = markdown.encode("utf-8")[: SUMMARY_LIMIT - 1].decode("utf-8", "ignore")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(data + "\n")


def _api(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    req = urllib.request.Request(
        url,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "Content-Type": "application/json",
            "User-Agent": "reviewbot-action",
        },
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
    return json.loads(text) if text else None


def post_comment(markdown: str) -> str:
    """Create or update the pull request's reviewbot comment; returns what was done (one line)."""
    token = os.environ.get("GITHUB_TOKEN", "")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    number = os.environ.get("PR_NUMBER", "")
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    if not (token and repo and number):
        return "::warning::reviewbot: comment: no token, repository or pull request number; not posted"
    body = f"{MARK}\n{markdown}"
    base = f"{api}/repos/{repo}/issues/{number}/comments"
    try:
        page = 1
        existing = None
        while existing is None:
            comments = _api("GET", f"{base}?per_page=100&page={page}", token) or []
            existing = next((c for c in comments if MARK in (c.get("body") or "")), None)
            if len(comments) < 100:
                break
            page += 1
        if existing is not None:
            _api("PATCH", f"{api}/repos/{repo}/issues/comments/{existing['id']}", token, {"body": body})
            return f"reviewbot: updated comment {existing['id']} on {repo}#{number}"
        made = _api("POST", base, token, {"body": body})
        return f"reviewbot: commented on {repo}#{number} ({made.get('id') if made else '?'})"
    except urllib.error.HTTPError as exc:
        why = (
            "the token cannot write comments (a fork's pull request?)" if exc.code in (401, 403, 404) else ""
        )
        return f"::warning::reviewbot: comment not posted: HTTP {exc.code} {exc.reason}" + (
            f": {why}" if why else ""
        )
    except (urllib.error.URLError, OSError) as exc:
        return f"::warning::reviewbot: comment not posted: {exc}"


def main() -> int:
    base, head = os.environ.get("BASE", ""), os.environ.get("HEAD", "")
    if not base or not head:
        print("::error::reviewbot: no base/head (not a pull_request event): set the base and head inputs")
        return 2
    problem = check_revisions(base, head)
    if problem is not None:
        print(f"::error::{problem}")
        return 2
    sarif = os.environ.get("SARIF") or "reviewbot.sarif"
    Path(sarif).parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reviewbot-action-") as tmp:
        report = Path(tmp) / "report.md"
        cmd = ["reviewbot", "run", "--base", base, "--head", head, "--format", "markdown", "-o", str(report)]
        cmd += ["--also", f"sarif={sarif}"]
        if os.environ.get("RUN_TESTS") == "false":
            cmd.append("--no-tests")
        code = subprocess.run(cmd, check=False).returncode
        if code != 0:
            return code
        markdown = report.read_text(encoding="utf-8")
    run = json.loads(Path(sarif).read_text(encoding="utf-8"))["runs"][0]
    status = run["properties"]["status"]
    set_output("status", status)
    set_output("findings", str(len(run["results"])))
    step_summary(markdown)
    print(f"reviewbot: {status} ({len(run['results'])} finding(s)); the report is in the job summary")
    if os.environ.get("COMMENT") == "true":
        print(post_comment(markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
