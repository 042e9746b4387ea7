"""`GET /prs/{owner}/{repo}/{n}` over real HTTP (uvicorn on loopback): the round-history page, read-only,
only with the history token configured and sent as a bearer token."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reviewbot.example import ExampleRepo, build_example
from reviewbot.runner import run_local_round
from reviewbot.service.app import create_app
from reviewbot.service.runtime import Runtime
from reviewbot.settings import Settings
from tests.service.e2e import worker_env
from tests.service.helpers import ServerThread, wait_for

PR = 1361
REPO = "acme/rtp-llm"
TOKEN = "history-token-for-tests-only"
PAGE = f"/prs/{REPO}/{PR}"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("example") / "repo")


def record_two_rounds(runtime: Runtime, example: ExampleRepo) -> str:
    """Rounds 1 and 2 of the example PR in the server's store; the fingerprint fixed in round 2."""
    for head in (example.round1, example.round2):
        outcome = run_local_round(
            example.path, example.base, head, PR, runtime.store, None, "en", repository=REPO
        )
    (fixed,) = outcome.review.round.fixed
    return fixed.fingerprint


@pytest.fixture
def served(settings: Settings, example: ExampleRepo) -> Iterator[tuple[ServerThread, str]]:
    rt = Runtime.open(settings.with_(history_token=TOKEN))
    fixed = record_two_rounds(rt, example)
    try:
        with ServerThread(create_app(rt.settings, rt.book, rt.queue)) as srv:
            yield srv, fixed
    finally:
        rt.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_page_with_the_token(served: tuple[ServerThread, str]) -> None:
    srv, fixed = served
    r = httpx.get(srv.url + PAGE, headers=bearer(TOKEN), timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert r.headers["cache-control"] == "no-store"
    html = r.text
    assert 'id="round-1"' in html and 'id="round-2"' in html and 'id="round-3"' not in html
    assert f'<li class="finding state-fixed" id="r2-{fixed}"' in html
    assert f'<article class="life state-fixed" id="{fixed}"' in html
    zh = httpx.get(srv.url + PAGE, params={"lang": "zh"}, headers=bearer(TOKEN), timeout=30)
    assert zh.status_code == 200 and '<html lang="zh-CN">' in zh.text and "已修复" in zh.text
    assert (
        httpx.get(srv.url + PAGE, params={"lang": "fr"}, headers=bearer(TOKEN), timeout=30).status_code == 400
    )


@pytest.mark.parametrize(
    "headers",
    [{}, bearer("wrong"), bearer(TOKEN + "x"), {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["none", "wrong", "longer", "no-scheme", "basic"],
)
def test_without_the_token_nothing_is_shown(
    served: tuple[ServerThread, str], headers: dict[str, str]
) -> None:
    srv, fixed = served
    r = httpx.get(srv.url + PAGE, headers=headers, timeout=30)
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert fixed not in r.text and "round" not in r.text.lower()
    # Nor a page of a PR that does not exist: no telling which PRs have rounds.
    assert httpx.get(srv.url + f"/prs/{REPO}/9", headers=headers, timeout=30).status_code == 401


def test_read_only_and_unknown_prs(served: tuple[ServerThread, str]) -> None:
    srv, _ = served
    for method in ("POST", "PUT", "DELETE"):
        assert httpx.request(method, srv.url + PAGE, headers=bearer(TOKEN), timeout=30).status_code == 405
    for path in (f"/prs/{REPO}/9", "/prs/acme/other/1361", f"/prs/{REPO}/0", f"/prs/{REPO}/99999999999"):
        assert httpx.get(srv.url + path, headers=bearer(TOKEN), timeout=30).status_code == 404, path


@pytest.mark.parametrize("token", [None, ""], ids=["unset", "empty"])
def test_no_token_configured_means_no_page(
    settings: Settings, example: ExampleRepo, token: str | None
) -> None:
    assert settings.history_token is None  # the default
    rt = Runtime.open(settings.with_(history_token=token))
    try:
        record_two_rounds(rt, example)
        with ServerThread(create_app(rt.settings, rt.book, rt.queue)) as srv:
            for headers in ({}, bearer(TOKEN), {"Authorization": "Bearer"}):
                r = httpx.get(srv.url + PAGE, headers=headers, timeout=30)
                assert r.status_code == 404 and "round" not in r.text.lower()
            assert httpx.get(srv.url + "/healthz", timeout=30).status_code == 200  # the server is up
    finally:
        rt.close()


def test_reviewbot_serve_reads_the_token_from_its_environment(
    settings: Settings, example: ExampleRepo, tmp_path: Path
) -> None:
    """The deployed command: REVIEWBOT_HISTORY_TOKEN in `reviewbot serve`'s environment turns the page on."""
    rt = Runtime.open(settings)
    try:
        fixed = record_two_rounds(rt, example)
    finally:
        rt.close()
    env = worker_env(settings, "http://127.0.0.1:9/api/v3", "not-used", tmp_path)  # serve talks to no GitHub
    env["REVIEWBOT_HISTORY_TOKEN"] = TOKEN
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reviewbot.cli", "serve", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:

        def up() -> bool:
            assert proc.poll() is None, log.read_text()
            try:
                return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(up, timeout=30, what="reviewbot serve to answer")
        r = httpx.get(url + PAGE, headers=bearer(TOKEN), timeout=30)
        assert r.status_code == 200 and f'id="r2-{fixed}"' in r.text
        assert httpx.get(url + PAGE, timeout=30).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    text = log.read_text()
    assert "history pages at /prs/OWNER/REPO/N (bearer token)" in text and TOKEN not in text
