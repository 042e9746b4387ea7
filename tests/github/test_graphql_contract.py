"""The GraphQL that reviewbot sends is GitHub's: checked against the schema excerpt the fake serves.

tests/fakegithub/github-graphql-excerpt.graphql is an excerpt of GitHub's published schema (its
header cites the source). These tests hold reviewbot's query and mutation to it, show that the fake
refuses what the schema does not have, and — when a full copy of GitHub's schema is at hand — that
the excerpt is a faithful part of it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import requests
from graphql import build_schema, parse, validate

from reviewbot import PROJECT_ROOT
from reviewbot.github.auth import connect
from reviewbot.github.client import ApiCounter, ApiError
from reviewbot.github.threads import (
    RESOLVE_MUTATION,
    THREADS_QUERY,
    finding_marker,
    list_bot_threads,
    resolve_thread,
)
from tests.fakegithub.graphql import SCHEMA_PATH, schema
from tests.fakegithub.state import Review, ReviewComment
from tests.github.conftest import APP_SLUG, PR, REPO, Seeded, settings


def test_reviewbots_query_and_mutation_are_valid_for_githubs_schema() -> None:
    for document in (THREADS_QUERY, RESOLVE_MUTATION):
        assert validate(schema(), parse(document)) == []


def test_the_fake_refuses_fields_github_does_not_have(seeded: Seeded) -> None:
    bad = "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id resolved } } }"
    answer = requests.post(
        seeded.fake.api_url.removesuffix("/v3") + "/graphql",
        json={"query": bad, "variables": {"id": "PRRT_x"}},
        headers={"Authorization": f"token {seeded.token}"},
        timeout=10,
    )
    assert answer.status_code == 200 and "data" not in answer.json()
    (error,) = answer.json()["errors"]
    assert error["message"].startswith("Cannot query field 'resolved' on type 'PullRequestReviewThread'.")
    # Pagination without `first`/`last` is refused as GitHub refuses it.
    unpaged = THREADS_QUERY.replace(
        "reviewThreads(first: 100, after: $after)", "reviewThreads(after: $after)"
    )
    owner, name = REPO.split("/")
    answer = requests.post(
        seeded.fake.api_url.removesuffix("/v3") + "/graphql",
        json={"query": unpaged, "variables": {"owner": owner, "name": name, "number": PR}},
        headers={"Authorization": f"token {seeded.token}"},
        timeout=10,
    )
    assert "must provide a `first` or `last`" in answer.json()["errors"][0]["message"]


def _seed_threads(seeded: Seeded, count: int, *, user: str) -> None:
    world = seeded.fake.world
    with world.lock:
        review = Review(world.next_id(), REPO, PR, user, "x", "COMMENTED", seeded.remote.round1)
        world.reviews[review.id] = review
        for i in range(count):
            c = ReviewComment(
                world.next_id(),
                review.id,
                REPO,
                PR,
                user,
                "README.md",
                f"n{i}\n\n{finding_marker(f'{i:08x}')}",
                seeded.remote.round1,
                "",
                1,
                "RIGHT",
            )
            world.review_comments[c.id] = c


def test_threads_are_read_page_by_page_and_only_the_bots_count(seeded: Seeded, tmp_path: Path) -> None:
    bot = f"{APP_SLUG}[bot]"
    _seed_threads(seeded, 150, user=bot)
    _seed_threads(seeded, 3, user="junna2016")  # a human pasting the bot's marker: never the bot's thread
    _seed_threads(seeded, 2, user=APP_SLUG)  # a user account named like the App's bot (GraphQL login alike)
    counter = ApiCounter()
    conn = connect(settings(seeded, tmp_path, app=True), REPO, counter)
    try:
        threads = list_bot_threads(conn.client, REPO, PR, conn.bot_login)
        assert len(threads) == 150 and len({t.id for t in threads}) == 150
        assert [r.status for r in seeded.fake.calls("graphql/query")] == [200, 200]  # 100 + 55
        assert counter.reads == 2 and counter.writes == 0  # queries are reads, though sent as POST
        assert threads[0].comment_id is not None and threads[0].line == 1 and not threads[0].resolved

        assert resolve_thread(conn.client, threads[0].id) and resolve_thread(conn.client, threads[0].id)
        assert counter.writes == 2  # resolving a resolved thread is harmless, so a retry may repeat it
        with pytest.raises(ApiError) as caught:
            resolve_thread(conn.client, "PRRT_unknown")
        assert caught.value.status == 404  # GitHub's NOT_FOUND error type
    finally:
        conn.close()


def _full_schema() -> Path | None:
    given = os.environ.get("REVIEWBOT_GITHUB_GRAPHQL_SCHEMA")
    path = Path(given) if given else PROJECT_ROOT.parent / "shared" / "github" / "schema.graphql"
    return path if path.is_file() else None


@pytest.mark.skipif(
    _full_schema() is None,
    reason="no full GitHub GraphQL schema (REVIEWBOT_GITHUB_GRAPHQL_SCHEMA or ../shared/github/schema.graphql)",
)
def test_the_excerpt_is_part_of_githubs_published_schema() -> None:
    path = _full_schema()
    assert path is not None
    # GitHub's own file defines two fields twice; graphql-core refuses that unless told to trust it.
    full = build_schema(path.read_text(), assume_valid_sdl=True)
    excerpt = build_schema(SCHEMA_PATH.read_text())
    checked = 0
    for name, kind in excerpt.type_map.items():
        if name.startswith("__") or name in ("String", "Int", "Boolean", "ID", "Float"):
            continue
        real = full.get_type(name)
        assert real is not None and type(real) is type(kind), name
        assert {i.name for i in getattr(kind, "interfaces", [])} <= {
            i.name for i in getattr(real, "interfaces", [])
        }
        for field_name, field in getattr(kind, "fields", {}).items():
            real_field = getattr(real, "fields", {}).get(field_name)
            assert real_field is not None and str(real_field.type) == str(field.type), (name, field_name)
            assert getattr(real_field, "deprecation_reason", None) == getattr(
                field, "deprecation_reason", None
            )
            for arg, value in getattr(field, "args", {}).items():
                real_arg = real_field.args.get(arg)
                assert real_arg is not None and str(real_arg.type) == str(value.type), (name, field_name, arg)
                assert real_arg.default_value == value.default_value
            checked += 1
    assert checked >= 30
