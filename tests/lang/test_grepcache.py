"""The prefilter's grep answers kept in the facts cache: the same answer as `git grep` on the same
tree, on a later tree (brought up to date by the diff) and after git forgot the kept tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.change.tree import GitTree
from reviewbot.lang.build import _GREP_PATHSPECS, prefilter
from reviewbot.lang.cache import FactsCache, use
from reviewbot.lang.grepcache import MAX_CHANGED, GrepHits, grep_key
from tests.gitrepo import Repo

NAMES = {"need_rope_kv_cache", "ModelConfig::use_mla"}


def _files(n: int) -> dict[str, str | bytes | None]:
    files: dict[str, str | bytes | None] = {
        f"src/f{i}.cc": f"int f{i}() {{ return {i}; }}\n" for i in range(n)
    }
    files["src/config.cc"] = "void g(ModelConfig& c) { c.need_rope_kv_cache = true; }\n"
    files["src/mla.h"] = "struct ModelConfig { bool use_mla; };\n"
    files["src/prefix.py"] = "need_rope_kv_cache_old = 1\n"  # not a whole word: no hit
    files["docs/notes.md"] = "need_rope_kv_cache\n"  # outside the pathspecs
    return files


class CountingTree(GitTree):
    """A GitTree that counts the `git grep`s it runs."""

    greps = 0

    def grep(self, words: object, pathspecs: object = ()) -> set[str] | None:
        CountingTree.greps += 1
        return super().grep(words, pathspecs)  # type: ignore[arg-type]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def _plain(repo: Repo, sha: str) -> set[str] | None:
    with GitTree(repo.path, sha) as tree:
        return prefilter(tree, NAMES)


def _cached(repo: Repo, sha: str, store: FactsCache) -> tuple[set[str] | None, int]:
    before = CountingTree.greps
    with use(store), CountingTree(repo.path, sha) as tree:
        return prefilter(tree, NAMES), CountingTree.greps - before


def test_same_tree_is_answered_from_the_cache(repo: Repo, tmp_path: Path) -> None:
    sha = repo.commit(_files(5))
    store = FactsCache(tmp_path / "facts.sqlite")
    first, greps = _cached(repo, sha, store)
    assert first == {"src/config.cc", "src/mla.h"} and greps == 1
    again, greps = _cached(repo, sha, store)
    assert again == first == _plain(repo, sha) and greps == 0
    assert (store.hits, store.misses) == (0, 0)  # the facts-cache KPI counts parses only


def test_a_later_tree_is_brought_up_to_date_by_its_diff(repo: Repo, tmp_path: Path) -> None:
    first = repo.commit(_files(5))
    store = FactsCache(tmp_path / "facts.sqlite")
    _cached(repo, first, store)
    later = repo.commit(
        {
            "src/config.cc": None,  # a hit deleted
            "src/f1.cc": "bool x(ModelConfig m) { return m.use_mla; }\n",  # a new hit
            "src/f2.cc": "int need_rope_kv_cache_x;\n",  # changed, still no whole word
            "src/new.py": "if cfg.need_rope_kv_cache:\n    pass\n",  # added
            "src/mla.h": "struct ModelConfig { bool use_mla = false; };\n",  # a hit changed, still a hit
        }
    )
    answer, greps = _cached(repo, later, store)
    assert greps == 0
    assert answer == _plain(repo, later) == {"src/f1.cc", "src/new.py", "src/mla.h"}
    kept = store.get_values([grep_key({"need_rope_kv_cache", "ModelConfig"}, _GREP_PATHSPECS)], GrepHits)
    assert [k.tree for k in kept.values()] == [later]


def test_a_forgotten_or_distant_tree_falls_back_to_git_grep(repo: Repo, tmp_path: Path) -> None:
    first = repo.commit(_files(5))
    store = FactsCache(tmp_path / "facts.sqlite")
    _cached(repo, first, store)
    # Another repository answered last: git here does not know that tree.
    other = Repo(tmp_path / "other")
    elsewhere = other.commit({"a.cc": "ModelConfig c;\n"})
    assert _cached(other, elsewhere, store) == ({"a.cc"}, 1)
    assert _cached(repo, first, store) == (_plain(repo, first), 1)
    # More changed paths than are worth reading one by one.
    far = repo.commit({f"src/f{i}.cc": f"int f{i}() {{ return -1; }}\n" for i in range(MAX_CHANGED + 1)})
    assert _cached(repo, far, store) == (_plain(repo, far), 1)


def test_an_answer_from_a_clone_lacking_objects_is_not_reused_by_a_complete_one(
    repo: Repo, tmp_path: Path
) -> None:
    """A mirror that leaves some blobs out answers without them; a full clone of the same commit
    greps again rather than miss those files."""
    sha = repo.commit(_files(3))
    full = Repo(tmp_path / "full")
    full.git("fetch", "-q", str(repo.path), "main")
    lost = repo.git("rev-parse", f"{sha}:src/mla.h")
    (repo.path / ".git" / "objects" / lost[:2] / lost[2:]).unlink()  # the mirror lacks that blob
    store = FactsCache(tmp_path / "facts.sqlite")
    partial, greps = _cached(repo, sha, store)
    assert partial == {"src/config.cc"} and greps == 1
    assert _cached(full, sha, store) == ({"src/config.cc", "src/mla.h"}, 1)
    assert _cached(full, sha, store) == ({"src/config.cc", "src/mla.h"}, 0)
