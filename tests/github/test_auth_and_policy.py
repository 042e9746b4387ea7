"""Who the bot is (token, Actions token, App), and the retry / rate-limit decisions on their own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from github import Auth

from reviewbot.errors import UsageError
from reviewbot.github.auth import connect
from reviewbot.github.client import ApiCounter
from reviewbot.github.resilience import Decision, Failure, backoff, decide
from reviewbot.github.settings import GitHubSettings
from tests.fakegithub.keys import app_keypair
from tests.github.conftest import APP_ID, REPO, Seeded, settings


def test_a_token_is_the_user_it_belongs_to(seeded: Seeded, tmp_path: Path) -> None:
    counter = ApiCounter()
    conn = connect(settings(seeded, tmp_path), REPO, counter, env={})
    assert conn.bot_login == "reviewbot-dev" and conn.auth_kind == "token"
    assert counter.reads == 1 and [r.operation for r in seeded.fake.log] == ["users/get-authenticated"]


def test_a_given_bot_login_saves_the_request(seeded: Seeded, tmp_path: Path) -> None:
    conn = connect(settings(seeded, tmp_path, bot_login="someone[bot]"), REPO, ApiCounter(), env={})
    assert conn.bot_login == "someone[bot]" and seeded.fake.log == []


def test_an_installation_token_in_actions_is_github_actions_bot(seeded: Seeded, tmp_path: Path) -> None:
    inst = settings(seeded, tmp_path, app=True)
    auth = connect(inst, REPO, ApiCounter()).github.requester.auth
    assert isinstance(auth, Auth.Token) and auth.token.startswith("ghs_")  # an installation token
    token = auth.token
    as_token = settings(seeded, tmp_path, token=token)
    assert (
        connect(as_token, REPO, ApiCounter(), env={"GITHUB_ACTIONS": "true"}).bot_login
        == "github-actions[bot]"
    )
    with pytest.raises(UsageError, match="REVIEWBOT_BOT_LOGIN"):
        connect(as_token, REPO, ApiCounter(), env={})


def test_an_app_is_its_slug_and_its_handshake_is_cached(seeded: Seeded, tmp_path: Path) -> None:
    s = settings(seeded, tmp_path, app=True)
    first, second = ApiCounter(), ApiCounter()
    assert connect(s, REPO, first).bot_login == "reviewbot[bot]"
    assert connect(s, REPO, second).bot_login == "reviewbot[bot]"
    assert (first.auth_calls, second.auth_calls) == (3, 0)
    jwt_calls = [r for r in seeded.fake.log if r.auth == "jwt"]
    assert [r.status for r in jwt_calls] == [200, 200, 201]  # the fake verified the JWT's signature


def test_an_app_not_installed_on_the_repository_is_a_usage_error(seeded: Seeded, tmp_path: Path) -> None:
    seeded.fake.add_repo("acme/other")
    with pytest.raises(UsageError, match="not installed on acme/other"):
        connect(settings(seeded, tmp_path, app=True), "acme/other", ApiCounter())


def test_an_app_key_that_does_not_match_is_refused(seeded: Seeded, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        .decode()
    )
    assert other != app_keypair()[0]
    with pytest.raises(Exception, match="401"):
        connect(settings(seeded, tmp_path, app=True, private_key=other), REPO, ApiCounter())


def test_settings_come_from_the_environment_and_hide_secrets(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text("PEM")
    env = {
        "GITHUB_TOKEN": "t0k",
        "REVIEWBOT_APP_ID": str(APP_ID),
        "REVIEWBOT_PRIVATE_KEY_PATH": str(key),
        "REVIEWBOT_API_URL": "https://ghe.example.com/api/v3",
        "REVIEWBOT_CACHE_DIR": str(tmp_path / "c"),
    }
    s = GitHubSettings.from_env(env)
    assert s.uses_app and s.app_private_key() == "PEM" and s.cache_root == tmp_path / "c"
    assert s.api_url == "https://ghe.example.com/api/v3" and "t0k" not in repr(s)
    assert GitHubSettings.from_env(env, api_url="https://x").api_url == "https://x"
    # GHES over http:// redirects, and PyGithub turns redirected writes into RuntimeError: refused up
    # front (issue 15 item 10); plain http stays allowed on loopback (a local proxy, the tests' fake).
    with pytest.raises(UsageError, match="uses http://; use https://"):
        GitHubSettings.from_env(env, api_url="http://ghe.example.com/api/v3")
    assert GitHubSettings.from_env(env, api_url="http://127.0.0.1:8080").api_url == "http://127.0.0.1:8080"
    with pytest.raises(UsageError, match="GITHUB_TOKEN"):
        GitHubSettings.from_env({}).require_credentials()
    with pytest.raises(UsageError, match="numeric"):
        GitHubSettings.from_env({"REVIEWBOT_APP_ID": "abc"})


# --- the policy, without a server -------------------------------------------------------------------


def _decide(failure: Failure, attempt: int = 1, now: float = 0.0) -> Decision:
    return decide(
        failure,
        attempt,
        now=now,
        max_attempts=4,
        backoff_base=1.0,
        backoff_max=30.0,
        rate_limit_wait=60.0,
        secondary_wait_max=300.0,
    )


def test_server_errors_and_timeouts_back_off_exponentially() -> None:
    assert [backoff(a, 1.0, 30.0) for a in (1, 2, 3, 6)] == [1.0, 2.0, 4.0, 30.0]
    d = _decide(Failure(502, {}), 2, now=0)
    assert (d.kind, d.wait) == ("retry", 2.0)
    assert _decide(Failure(None, {}, "ReadTimeout"), 1, now=0).kind == "retry"
    assert _decide(Failure(502, {}), 4, now=0).kind == "fail"
    assert _decide(Failure(422, {}, "Validation Failed"), 1, now=0).kind == "fail"


def test_primary_limit_waits_for_a_near_reset_and_gives_up_on_a_far_one() -> None:
    now = time.time()
    near = Failure(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 30)})
    far = Failure(429, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 3600)})
    d = _decide(near, 1, now=now)
    assert d.kind == "retry" and 29 <= d.wait <= 32
    d = _decide(far, 1, now=now)
    assert d.kind == "rate_limited" and d.reset_at == int(now) + 3600


def test_secondary_limit_honours_retry_after_or_waits_a_minute() -> None:
    d = _decide(Failure(403, {"retry-after": "7"}, "You have exceeded a secondary rate limit."))
    assert (d.kind, d.wait) == ("retry", 7.0)
    message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
    d = _decide(Failure(403, {}, message))
    assert (d.kind, d.wait) == ("retry", 60.0)
    assert _decide(Failure(429, {"retry-after": "900"}), 1, now=0).kind == "rate_limited"
    assert _decide(Failure(403, {}, "Resource not accessible by integration"), 1, now=0).kind == "fail"
