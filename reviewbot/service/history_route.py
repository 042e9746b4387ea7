"""`GET /prs/{owner}/{repo}/{n}`: a PR's round-history page (report.history_html), read-only.

The page shows code and findings of private repositories, so it is never open: it exists only when
`history_token` (REVIEWBOT_HISTORY_TOKEN) is set, and then answers only a request that sends that token
as `Authorization: Bearer TOKEN`. Without the setting there is no such route (404, as for any unknown
path); a missing or wrong token gets 401. `?lang=zh` gives the page in Chinese.
"""

from __future__ import annotations

import hmac
import logging
import re

from sqlalchemy.engine import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from reviewbot.errors import ReviewbotError
from reviewbot.report.history_html import CSP, render_history_html
from reviewbot.report.templating import LANGS
from reviewbot.settings import Settings
from reviewbot.store.history_page import load_history
from reviewbot.store.store import Store

__all__ = ["PATH", "history_routes"]

log = logging.getLogger(__name__)

PATH = "/prs/{owner}/{repo}/{n}"
# GitHub's account and repository names, and a PR number that fits the store's int32 column.
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
_NUMBER = re.compile(r"[1-9][0-9]{0,9}")
_MAX_PR = 2**31 - 1

# The page loads nothing and runs nothing; it must not be framed, sniffed, cached or leak its URL.
_HEADERS = {
    "Content-Security-Policy": f"{CSP}; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _text(status: int, message: str, **headers: str) -> Response:
    return PlainTextResponse(message, status_code=status, headers={**_HEADERS, **headers})


def _authorised(request: Request, token: bytes) -> bool:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return False
    return hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"), token)


def history_routes(settings: Settings, engine: Engine) -> list[Route]:
    """The page's route over the rounds store on `engine`; none when no history token is set."""
    secret = settings.history_token.get_secret_value() if settings.history_token is not None else ""
    if not secret:
        return []
    token = secret.encode("utf-8")
    store = Store(engine)  # shares the server's engine; never closed here (the runtime owns it)

    async def page(request: Request) -> Response:
        if not _authorised(request, token):
            return _text(
                401, "a bearer token is required", **{"WWW-Authenticate": 'Bearer realm="reviewbot"'}
            )
        owner, repo, number = (request.path_params[k] for k in ("owner", "repo", "n"))
        if not (_OWNER.fullmatch(owner) and _REPO.fullmatch(repo) and _NUMBER.fullmatch(number)):
            return _text(404, "no such pull request")
        pr = int(number)
        if pr > _MAX_PR:
            return _text(404, "no such pull request")
        lang = request.query_params.get("lang", "en")
        if lang not in LANGS:
            return _text(400, f"lang must be one of {', '.join(LANGS)}")
        repository = f"{owner}/{repo}"
        try:
            history = await run_in_threadpool(load_history, store, repository, pr)
        except ReviewbotError as exc:
            log.error("history page of %s PR #%d: %s", repository, pr, exc)
            return _text(503, "the database is unavailable; retry later")
        if history is None:
            return _text(404, f"no rounds recorded for {repository} PR #{pr}")
        html = await run_in_threadpool(render_history_html, history, lang)
        return HTMLResponse(html, headers=_HEADERS)

    return [Route(PATH, page, methods=["GET"])]
