"""Connect to GitHub through PyGithub, as a token's user or as a GitHub App installation.

With a token the bot's login is `GET /user` (an Actions token cannot ask: it is
`github-actions[bot]`, or REVIEWBOT_BOT_LOGIN). With App credentials reviewbot signs a JWT
(`Auth.AppAuth`), finds the installation for the repository (`GithubIntegration`), exchanges it
for an installation token, and its login is the App's slug + `[bot]`. The slug, installation ids
and tokens are cached per process, so a long-running worker does not repeat the handshake every round.

Installation tokens live an hour. A round starts only with a token that outlives the longest round
(`ROUND_MARGIN`: git's fetch timeout, 900 s, plus the analysis budget, 600 s by default with the tests
in it, plus publishing: about 25 minutes), because git holds the token it was given for the clone's
fetches, the lazy ones of a partial clone included. During the round every
request asks `InstallationToken` for the token, which renews it when it is within `REQUEST_MARGIN` of
expiring; and a 401 (a token revoked or expired early, e.g. by clock skew) renews it once and the
request is sent again (reviewbot.github.client).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from github import Auth, Github, GithubIntegration

from reviewbot.errors import UsageError
from reviewbot.github.client import ApiCounter, ApiError, GitHubClient
from reviewbot.github.pacing import WritePacer
from reviewbot.github.payloads import UserJson, answer
from reviewbot.github.settings import GitHubSettings

__all__ = [
    "Connection",
    "InstallationToken",
    "connect",
    "forget_app_cache",
    "forget_installation",
    "ROUND_MARGIN",
    "REQUEST_MARGIN",
]

log = logging.getLogger(__name__)

ROUND_MARGIN = 1800.0  # a round starts only with a token that has this long left (the longest round: ~25 min)
REQUEST_MARGIN = 60.0  # within a round, a request renews a token that has less than this left
_lock = threading.Lock()
_slugs: dict[tuple[str, int], str] = {}
_installations: dict[tuple[str, int, str], int] = {}
_tokens: dict[tuple[str, int, int], tuple[str, float]] = {}
_gone: set[int] = set()  # installation ids whose token exchange answered 404


def forget_app_cache() -> None:
    """Drop cached App slugs, installations and tokens (after a 401, or between tests)."""
    with _lock:
        _slugs.clear()
        _installations.clear()
        _tokens.clear()
        _gone.clear()


def forget_installation(installation_id: int | None = None, repos: Iterable[str] = ()) -> int:
    """Drop what is cached for an installation (its id for every repository, its tokens) or for
    `repos`: after an `installation` or `installation_repositories` event, or a 404 on its token.
    Returns how many entries went."""
    repos = set(repos)
    with _lock:
        gone = [k for k, v in _installations.items() if v == installation_id or k[2] in repos]
        ids = {_installations[k] for k in gone} | (
            {installation_id} if installation_id is not None else set()
        )
        for k in gone:
            del _installations[k]
        tokens = [t for t in _tokens if t[2] in ids]
        for t in tokens:
            del _tokens[t]
    return len(gone) + len(tokens)


@dataclass
class Connection:
    client: GitHubClient
    github: Github
    bot_login: str
    auth_kind: str  # "token" | "app"

    def close(self) -> None:
        self.github.close()


def _github(settings: GitHubSettings, auth: Auth.Auth) -> Github:
    return Github(
        base_url=settings.api_url,
        auth=auth,
        timeout=int(settings.effective_timeout),
        per_page=100,
        retry=None,  # reviewbot.github.client retries, so that every attempt is counted
        seconds_between_requests=settings.seconds_between_requests or None,
        seconds_between_writes=settings.seconds_between_writes or None,
    )


def _token_login(client: GitHubClient, env: Mapping[str, str]) -> str:
    try:
        _, data = client.request("GET", "/user", label="GET /user")
    except ApiError as exc:
        if exc.status == 403 and env.get("GITHUB_ACTIONS") == "true":
            return "github-actions[bot]"  # the Actions token is an installation token of that App
        if exc.status == 403:
            raise UsageError(
                "the token cannot read its own user (an installation token?); set REVIEWBOT_BOT_LOGIN to the "
                "login it posts as, or use App credentials (REVIEWBOT_APP_ID, REVIEWBOT_PRIVATE_KEY_PATH)"
            ) from exc
        raise
    return str(answer(data, UserJson, "GET /user")["login"])


class InstallationToken(Auth.Token):
    """PyGithub credentials that stay valid through a long round.

    `fetch(margin, refused)` answers a token with more than `margin` seconds left (the cache's, or a
    new one), never `refused`. PyGithub reads `token` for every request.
    """

    def __init__(self, fetch: Callable[[float, str | None], str]) -> None:
        self._fetch = fetch
        super().__init__(fetch(ROUND_MARGIN, None))

    @property
    def token(self) -> str:
        self._token = self._fetch(REQUEST_MARGIN, None)
        return self._token

    def renew(self) -> None:
        """GitHub refused the current token: get another one."""
        self._token = self._fetch(REQUEST_MARGIN, self._token)


def _app_token(
    settings: GitHubSettings,
    repo: str,
    counter: ApiCounter,
    sleep: Callable[[float], None],
    *,
    margin: float = ROUND_MARGIN,
    refused: str | None = None,
    installation_id: int | None = None,
) -> tuple[str, str]:
    """(installation token, bot login) for `repo`: the cached token while it has more than `margin`
    seconds left and is not the `refused` one, else a new one from GitHub.

    `installation_id`: the installation a webhook named for this round; a cached id that differs is
    stale (the App was installed again) and is replaced by it."""
    assert settings.app_id is not None
    api, app_id = settings.api_url, settings.app_id
    with _lock:
        slug = _slugs.get((api, app_id))
        inst = _installations.get((api, app_id, repo))
        if installation_id is not None and inst != installation_id and installation_id not in _gone:
            if inst is not None:
                _tokens.pop((api, app_id, inst), None)
            inst = _installations[(api, app_id, repo)] = installation_id
        cached = _tokens.get((api, app_id, inst)) if inst is not None else None
        if inst is not None and cached is not None and cached[0] == refused:
            # Another round may share it: every holder of the refused token gets a new one.
            del _tokens[(api, app_id, inst)]
            cached = None
    if slug is not None and cached is not None and cached[1] - margin > time.time():
        return cached[0], f"{slug}[bot]"
    integration = GithubIntegration(
        base_url=api,
        auth=Auth.AppAuth(app_id, settings.app_private_key()),
        timeout=int(settings.effective_timeout),
        retry=None,
        seconds_between_requests=settings.seconds_between_requests or None,
        seconds_between_writes=settings.seconds_between_writes or None,
    )
    client = GitHubClient(integration.requester, settings, counter, auth=True, sleep=sleep)
    owner, name = repo.split("/", 1)

    def installation() -> int:
        try:
            found: int = client.call(
                "GET",
                "GET /repos/{owner}/{repo}/installation",
                lambda: integration.get_repo_installation(owner, name),
            ).id
        except ApiError as exc:
            if exc.status == 404:
                raise UsageError(
                    f"the GitHub App {app_id} is not installed on {repo}; install it there, or use GITHUB_TOKEN"
                ) from exc
            raise
        return found

    def exchange(inst: int) -> Any:
        return client.call(
            "POST", "POST /app/installations/{id}/access_tokens", lambda: integration.get_access_token(inst)
        )

    try:
        if slug is None:
            slug = client.call("GET", "GET /app", lambda: integration.get_app()).slug
        looked_up = inst is None
        if inst is None:
            inst = installation()
        try:
            auth = exchange(inst)
        except ApiError as exc:
            if exc.status != 404 or looked_up:
                raise
            # The cached installation is gone (the App was uninstalled and installed again: a new
            # id). Forget it and ask GitHub which installation covers the repository now, once.
            log.warning("installation %d of %s is gone (404); looking it up again", inst, repo)
            forget_installation(inst)
            with _lock:
                _gone.add(inst)  # a webhook (or a redelivery) naming it again is not believed
            inst = installation()
            auth = exchange(inst)
    finally:
        integration.close()
    token, expires = auth.token, auth.expires_at.timestamp()
    with _lock:
        _slugs[(api, app_id)] = slug
        _installations[(api, app_id, repo)] = inst
        _tokens[(api, app_id, inst)] = (token, expires)
    return token, f"{slug}[bot]"


def _pacer(settings: GitHubSettings, who: str, sleep: Callable[[float], None]) -> WritePacer | None:
    """The pacer of `who`'s writes on this host (github.pacing), None when writes are not spaced."""
    if not settings.seconds_between_writes:
        return None
    key = f"{settings.api_url} {who}"
    return WritePacer(settings.cache_root / "pacing", key, settings.seconds_between_writes, sleep=sleep)


def connect(
    settings: GitHubSettings,
    repo: str,
    counter: ApiCounter,
    *,
    sleep: Callable[[float], None] = time.sleep,
    env: Mapping[str, str] | None = None,
    installation_id: int | None = None,
) -> Connection:
    """An authenticated, counted client for `repo` (OWNER/NAME) and the login the bot posts as.

    `installation_id`: the App installation a webhook named (see `_app_token`)."""
    settings.require_credentials()
    env = os.environ if env is None else env
    if settings.uses_app:
        slug_login = ""

        def fetch(margin: float, refused: str | None) -> str:
            nonlocal slug_login
            token, slug_login = _app_token(
                settings,
                repo,
                counter,
                sleep,
                margin=margin,
                refused=refused,
                installation_id=installation_id,
            )
            return token

        auth = InstallationToken(fetch)
        gh = _github(settings, auth)
        # An installation is the App on one account: its writes are paced together.
        pacer = _pacer(settings, f"app {settings.app_id} on {repo.split('/', 1)[0]}", sleep)
        client = GitHubClient(gh.requester, settings, counter, sleep=sleep, renew=auth.renew, pacer=pacer)
        return Connection(client, gh, settings.bot_login or slug_login, "app")
    assert settings.token is not None
    gh = _github(settings, Auth.Token(settings.token))
    digest = hashlib.sha256(settings.token.encode()).hexdigest()
    client = GitHubClient(gh.requester, settings, counter, sleep=sleep, pacer=_pacer(settings, digest, sleep))
    login = settings.bot_login or _token_login(client, env)
    return Connection(client, gh, login, "token")
