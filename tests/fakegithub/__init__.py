"""A fake GitHub REST API for tests: a real HTTP server on 127.0.0.1 with state.

    from tests.fakegithub import FakeGitHub, example_remote

    with FakeGitHub() as gh:
        token = gh.add_user("reviewbot-dev")
        remote = example_remote(tmp_path)
        gh.add_repo("acme/rtp-llm", remote.bare)
        gh.add_pull("acme/rtp-llm", 1361, user="junna2016", head_sha=remote.round1)
        gh.inject(kind="status", status=502)             # one 502 on every endpoint
        ...                                              # point the client at gh.api_url
        assert len(gh.comments("acme/rtp-llm", 1361)) == 1
        assert not gh.writes()                           # e.g. after a dry run

Served under `/api/v3` (the GitHub Enterprise Server layout). Operations are named by their
OpenAPI operationId (`issues/create-comment`, ...) in faults and in the request log. See
tests/fakegithub/README.md for the behaviour it models.
"""

from __future__ import annotations

from tests.fakegithub.fake import FakeGitHub
from tests.fakegithub.faults import Fault
from tests.fakegithub.repos import ExampleRemote, example_remote, make_bare, push
from tests.fakegithub.server import PREFIX, RequestRecord

__all__ = [
    "FakeGitHub",
    "Fault",
    "RequestRecord",
    "ExampleRemote",
    "example_remote",
    "make_bare",
    "push",
    "PREFIX",
]
