"""The fake answers like GitHub: every implemented operation validated against the official OpenAPI subset.

The subset lives beside the clone (`<repo root>/../shared/github/openapi-subset.json`); without it
these tests skip and say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from reviewbot.github import run_pr_round
from tests.fakegithub.keys import app_jwt
from tests.fakegithub.spec import Spec, spec_path
from tests.github.conftest import APP_ID, PR, REPO, Seeded, settings

pytestmark = pytest.mark.skipif(
    not spec_path().exists(),
    reason=f"the official OpenAPI subset is not at {spec_path()} (shared/ folder beside the clone)",
)


@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec(spec_path())


def _call(seeded: Seeded, method: str, path: str, *, auth: str | None = None, **kw: Any) -> httpx.Response:
    headers = {"Authorization": auth or f"token {seeded.token}", "Accept": "application/vnd.github+json"}
    headers.update(kw.pop("headers", {}))
    return httpx.request(method, f"{seeded.fake.api_url}{path}", headers=headers, timeout=10, **kw)


def _check(spec: Spec, op: str, resp: httpx.Response, status: int) -> Any:
    assert resp.status_code == status, resp.text[:500]
    body = resp.json() if resp.content else None
    errors = spec.response_errors(op, resp.status_code, body)
    assert errors == [], f"{op} {status}: {errors[:5]}"
    return body


def test_every_operation_of_the_subset_is_served_and_valid(seeded: Seeded, spec: Spec) -> None:
    r = f"/repos/{REPO}"
    jwt_auth = f"Bearer {app_jwt(APP_ID, seeded.private_key)}"
    seen: set[str] = set()

    def check(op: str, resp: httpx.Response, status: int) -> Any:
        seen.add(op)
        return _check(spec, op, resp, status)

    check("rate-limit/get", _call(seeded, "GET", "/rate_limit"), 200)
    check("repos/get", _call(seeded, "GET", r), 200)
    pr = check("pulls/get", _call(seeded, "GET", f"{r}/pulls/{PR}"), 200)
    assert pr["head"]["sha"] == seeded.remote.round1 and pr["base"]["repo"]["clone_url"].startswith("file://")
    files = check("pulls/list-files", _call(seeded, "GET", f"{r}/pulls/{PR}/files"), 200)
    assert [f["filename"] for f in files] == ["rtp_llm/cpp/config/ModelConfig.cc"] and files[0][
        "patch"
    ].startswith("@@")
    check("pulls/list-commits", _call(seeded, "GET", f"{r}/pulls/{PR}/commits"), 200)
    base, head = seeded.remote.base, seeded.remote.round2
    cmp = check("repos/compare-commits", _call(seeded, "GET", f"{r}/compare/{base}...{head}"), 200)
    assert cmp["ahead_by"] == 2 and cmp["status"] == "ahead"
    content = check("repos/get-content", _call(seeded, "GET", f"{r}/contents/rtp_llm/ops.py?ref={base}"), 200)
    assert content["type"] == "file" and content["path"] == "rtp_llm/ops.py"

    comment = check(
        "issues/create-comment",
        _call(seeded, "POST", f"{r}/issues/{PR}/comments", json={"body": "hello"}),
        201,
    )
    check("issues/list-comments", _call(seeded, "GET", f"{r}/issues/{PR}/comments"), 200)
    edited = check(
        "issues/update-comment",
        _call(seeded, "PATCH", f"{r}/issues/comments/{comment['id']}", json={"body": "edited"}),
        200,
    )
    assert edited["body"] == "edited" and edited["user"]["login"] == "reviewbot-dev"

    review = {
        "body": "two notes",
        "event": "COMMENT",
        "commit_id": seeded.remote.round1,
        "comments": [{"path": files[0]["filename"], "line": 18, "side": "RIGHT", "body": "here"}],
    }
    check("pulls/create-review", _call(seeded, "POST", f"{r}/pulls/{PR}/reviews", json=review), 200)
    check("pulls/list-reviews", _call(seeded, "GET", f"{r}/pulls/{PR}/reviews"), 200)
    rc = check("pulls/list-review-comments", _call(seeded, "GET", f"{r}/pulls/{PR}/comments"), 200)
    assert [(c["path"], c["line"]) for c in rc] == [(files[0]["filename"], 18)]
    check("issues/delete-comment", _call(seeded, "DELETE", f"{r}/issues/comments/{comment['id']}"), 204)

    check("apps/get-repo-installation", _call(seeded, "GET", f"{r}/installation", auth=jwt_auth), 200)
    token = check(
        "apps/create-installation-access-token",
        _call(
            seeded,
            "POST",
            f"/app/installations/{seeded.installation_id}/access_tokens",
            auth=jwt_auth,
            json={},
        ),
        201,
    )
    bot = f"token {token['token']}"
    annotation = {
        "path": files[0]["filename"],
        "start_line": 18,
        "end_line": 18,
        "annotation_level": "failure",
        "message": "m",
    }
    run: dict[str, Any] = {
        "name": "reviewbot",
        "head_sha": seeded.remote.round1,
        "status": "completed",
        "conclusion": "failure",
        "output": {
            "title": "t",
            "summary": "s",
            "annotations": [annotation],
        },
    }
    created = check("checks/create", _call(seeded, "POST", f"{r}/check-runs", auth=bot, json=run), 201)
    assert created["output"]["annotations_count"] == 1 and created["app"]["slug"] == "reviewbot"
    patch = {"output": {"title": "t", "summary": "s", "annotations": [annotation, annotation]}}
    updated = check(
        "checks/update", _call(seeded, "PATCH", f"{r}/check-runs/{created['id']}", auth=bot, json=patch), 200
    )
    assert updated["output"]["annotations_count"] == 3

    assert seen == set(spec.operations), f"not exercised: {set(spec.operations) - seen}"


def test_error_answers_have_the_documented_shapes(seeded: Seeded, spec: Spec) -> None:
    r = f"/repos/{REPO}"
    too_long = _call(seeded, "POST", f"{r}/issues/{PR}/comments", json={"body": "x" * 65537})
    body = _check(spec, "issues/create-comment", too_long, 422)
    assert body["errors"][0]["message"] == "body is too long (maximum is 65536 characters)"
    assert _call(seeded, "POST", f"{r}/issues/{PR}/comments", json={"body": "x" * 65536}).status_code == 201

    off_diff = {
        "body": "b",
        "event": "COMMENT",
        "comments": [
            {"path": "rtp_llm/cpp/config/ModelConfig.cc", "line": 10, "side": "RIGHT", "body": "no"}
        ],
    }
    body = _check(
        spec, "pulls/create-review", _call(seeded, "POST", f"{r}/pulls/{PR}/reviews", json=off_diff), 422
    )
    assert "part of the diff" in body["errors"][0]
    assert seeded.fake.reviews(REPO, PR) == []

    _check(spec, "pulls/get", _call(seeded, "GET", f"{r}/pulls/999"), 404)
    _check(spec, "repos/get", _call(seeded, "GET", "/repos/acme/missing"), 404)
    _check(
        spec,
        "apps/create-installation-access-token",
        _call(
            seeded,
            "POST",
            f"/app/installations/{seeded.installation_id}/access_tokens",
            auth="Bearer not.a.jwt",
            json={},
        ),
        401,
    )


def test_pagination_follows_github_link_rules(seeded: Seeded, spec: Spec) -> None:
    for i in range(35):
        seeded.fake.add_comment(REPO, PR, "someone", f"comment {i}")
    first = _call(seeded, "GET", f"/repos/{REPO}/issues/{PR}/comments")
    assert len(_check(spec, "issues/list-comments", first, 200)) == 30  # per_page defaults to 30
    links = httpx.Response(200, headers={"link": first.headers["link"]}).links
    assert set(links) == {"next", "last"} and links["next"]["url"].startswith(seeded.fake.api_url)
    second = httpx.get(links["next"]["url"], headers={"Authorization": f"token {seeded.token}"})
    assert [c["body"] for c in second.json()] == [f"comment {i}" for i in range(30, 35)]
    assert set(httpx.Response(200, headers={"link": second.headers["link"]}).links) == {"first", "prev"}
    capped = _call(seeded, "GET", f"/repos/{REPO}/issues/{PR}/comments?per_page=500")
    assert len(capped.json()) == 35 and "link" not in capped.headers  # max 100, one page: no link header


def test_rate_limit_headers_count_down(seeded: Seeded) -> None:
    one = _call(seeded, "GET", f"/repos/{REPO}")
    two = _call(seeded, "GET", f"/repos/{REPO}")
    assert int(one.headers["x-ratelimit-remaining"]) - 1 == int(two.headers["x-ratelimit-remaining"])
    assert two.headers["x-ratelimit-resource"] == "core" and int(two.headers["x-ratelimit-used"]) == 2
    seeded.fake.exhaust_rate_limit(seeded.token, reset_in=120)
    limited = _call(seeded, "GET", f"/repos/{REPO}")
    assert limited.status_code == 403 and limited.headers["x-ratelimit-remaining"] == "0"
    assert limited.json()["message"].startswith("API rate limit exceeded")


def test_faults_fire_per_endpoint_in_order(seeded: Seeded) -> None:
    seeded.fake.inject(kind="status", status=502)
    seeded.fake.inject(kind="secondary_rate_limit", retry_after=7)
    statuses = [_call(seeded, "GET", f"/repos/{REPO}").status_code for _ in range(3)]
    assert statuses == [502, 403, 200]
    assert (
        _call(seeded, "GET", f"/repos/{REPO}/pulls/{PR}").status_code == 502
    )  # a second endpoint has its own budget
    secondary = [r for r in seeded.fake.log if r.fault == "secondary_rate_limit"]
    assert len(secondary) == 1 and secondary[0].operation == "repos/get"


def test_installation_tokens_and_app_rules(seeded: Seeded) -> None:
    jwt_auth = f"Bearer {app_jwt(APP_ID, seeded.private_key)}"
    token = _call(
        seeded, "POST", f"/app/installations/{seeded.installation_id}/access_tokens", auth=jwt_auth, json={}
    )
    bot = f"token {token.json()['token']}"
    assert _call(seeded, "GET", "/user", auth=bot).status_code == 403  # as on GitHub: not for installations
    assert _call(seeded, "GET", "/app", auth=jwt_auth).json()["slug"] == "reviewbot"
    run = {"name": "reviewbot", "head_sha": seeded.remote.round1, "status": "completed"}
    assert (
        _call(seeded, "POST", f"/repos/{REPO}/check-runs", auth=bot, json=run).status_code == 422
    )  # no conclusion
    run["conclusion"] = "success"
    assert (
        _call(seeded, "POST", f"/repos/{REPO}/check-runs", json=run).status_code == 403
    )  # a PAT is not an App
    expired = app_jwt(APP_ID, seeded.private_key, now=0)
    assert _call(seeded, "GET", "/app", auth=f"Bearer {expired}").status_code == 401
    comment = _call(
        seeded, "POST", f"/repos/{REPO}/issues/{PR}/comments", auth=bot, json={"body": "hi"}
    ).json()
    assert comment["user"]["login"] == "reviewbot[bot]" and comment["user"]["type"] == "Bot"


def test_reviewbots_requests_are_valid_for_the_official_schemas(
    seeded: Seeded, spec: Spec, tmp_path: Path
) -> None:
    seeded.fake.options.request_validator = spec.request_errors
    bad = _call(seeded, "POST", f"/repos/{REPO}/issues/{PR}/comments", json={"body": 5})
    assert bad.status_code == 422 and "body" in bad.json()["message"]  # the validator is on

    s = settings(seeded, tmp_path, app=True)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    seeded.fake.set_head(REPO, PR, seeded.remote.round2)
    assert run_pr_round(s, REPO, PR, post=True).status == "published"
    sent = [r for r in seeded.fake.log[1:] if r.body is not None]  # [0] was the deliberately bad one
    assert {"issues/create-comment", "issues/update-comment", "pulls/create-review", "checks/create"} <= {
        r.operation for r in sent
    }
    assert all(r.status < 400 for r in sent), [(r.operation, r.response) for r in sent if r.status >= 400]
