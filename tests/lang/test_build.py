"""build_index: prefiltering by names, test references, reuse of changed facts, counters."""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.git import GitTree
from reviewbot.lang.build import build_index, names_pattern
from reviewbot.lang.parse import parse_file
from tests.gitrepo import Repo
from tests.lang.helpers import DirTree

FILES: dict[str, str | bytes | None] = {
    "src/derive.cc": "void D::run(Cfg& c) {\n    if (c.mode == Mode::Fast) { c.need_cache = false; }\n}\n",
    "src/unrelated.cc": "int add(int a, int b) { return a + b; }\n",
    "pkg/impl.py": "class Impl:\n    def f(self, cfg):\n        if cfg.need_cache:\n            self.put()\n",
    "pkg/other.py": "def g():\n    return 1\n",
    "README.md": "need_cache is documented here\n",
    "tests/test_derive.py": "def test_it():\n    assert derive().need_cache is False  # need_cache_set too\n",
    "tests/smoke.bzl": 'smoke(name = "need_cache_smoke", flag = "need_cache")\n',
    "src/derive_test.cc": "TEST(D, run) { EXPECT_EQ(Mode::Fast, pick()); }\n",
    "assets/blob.bin": b"\x00\xffneed_cache",
}


def _tree(tmp_path: Path) -> tuple[Repo, str]:
    repo = Repo(tmp_path / "repo")
    return repo, repo.commit(FILES)


def test_only_files_mentioning_a_name_are_parsed(tmp_path: Path) -> None:
    repo, sha = _tree(tmp_path)
    with GitTree(repo.path, sha) as tree:
        index = build_index(tree, {"need_cache"})
    assert sorted(index.files) == ["pkg/impl.py", "src/derive.cc", "tests/test_derive.py"]
    # One `git grep` picks the C++/Python sources and test-only files under test paths that mention a
    # name: 4 of the 7 candidates are read (README and the binary never are).
    assert index.scanned_files == 4 and index.parsed_files == 3 and index.test_files == 2
    assert [w.path for w in index.writers("need_cache")] == ["src/derive.cc"]
    assert [(r.path, r.in_condition) for r in index.reads("need_cache")] == [
        ("pkg/impl.py", True),
        ("tests/test_derive.py", False),
    ]


def test_test_refs_match_whole_words_and_scoped_names(tmp_path: Path) -> None:
    repo, sha = _tree(tmp_path)
    with GitTree(repo.path, sha) as tree:
        index = build_index(tree, {"need_cache", "Mode.Fast"})
    refs = index.tests_mentioning(["need_cache"])
    assert [(r.path, r.line) for r in refs] == [("tests/smoke.bzl", 1), ("tests/test_derive.py", 2)]
    assert refs[1].text == "assert derive().need_cache is False  # need_cache_set too"
    [scoped] = index.tests_mentioning(["Mode.Fast"])
    assert (scoped.path, scoped.name) == ("src/derive_test.cc", "Mode.Fast")


def test_changed_facts_are_reused_not_parsed_again(tmp_path: Path) -> None:
    repo, _ = _tree(tmp_path)
    repo.write({"src/derive.cc": FILES["src/derive.cc"]})
    text = str(FILES["src/derive.cc"]).replace("false", "true")
    changed = {"src/derive.cc": parse_file("src/derive.cc", text)}
    assert changed["src/derive.cc"] is not None
    tree = DirTree(repo.path)
    index = build_index(tree, {"need_cache"}, changed)  # type: ignore[arg-type]
    assert index.files["src/derive.cc"] is changed["src/derive.cc"]
    assert [w.value for w in index.writers("need_cache")] == ["True"]
    assert "src/derive.cc" not in tree.reads
    assert index.parsed_files == 2 and index.reused_files == 1


def test_no_names_parse_nothing(tmp_path: Path) -> None:
    repo, sha = _tree(tmp_path)
    with GitTree(repo.path, sha) as tree:
        index = build_index(tree, set())
    assert index.files == {} and index.parsed_files == 0 and index.scanned_files == 0


def test_names_pattern_is_word_bounded() -> None:
    pattern = names_pattern({"flag", "A.b", ""})
    assert pattern is not None
    assert pattern.search("x.flag") and pattern.search("A::b") and pattern.search("A->b")
    assert not pattern.search("flag_set") and not pattern.search("myflag") and not pattern.search("A.bc")
    assert names_pattern({"", "  "}) is None


IMPL = """class Impl:
    def forward(self, x):
        if self.rope_on:
            x = self.rope_op.forward(x)
        return x

    def unrelated(self, cfg):
        if cfg.other:
            cfg.mode = 1

    def __init__(self, cfg):
        self.rope_on = cfg.need_rope
"""


def test_unchanged_files_walk_only_functions_in_focus_and_alias_readers(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    sha = repo.commit({"pkg/impl.py": IMPL})
    with GitTree(repo.path, sha) as tree:
        index = build_index(tree, {"need_rope"})
    facts = index.files["pkg/impl.py"]
    assert [f.name for f in facts.functions] == ["Impl.forward", "Impl.unrelated", "Impl.__init__"]
    # forward never names need_rope, but reads its alias bound in __init__: walked in the second pass.
    [read] = [r for r in index.reads("need_rope") if r.in_condition]
    assert (read.function, read.alias, read.alias_line, read.in_condition) == (
        "Impl.forward",
        "self.rope_on",
        12,
        True,
    )
    assert [g.calls for g in read.gated] == [("rope_op", "forward")]
    assert index.writers("mode") == []  # `unrelated` is outside the focus
    full = parse_file("pkg/impl.py", IMPL)
    assert full is not None and [w.target for w in full.assignments if w.field == "mode"] == ["cfg.mode"]


def test_the_grep_prefilter_changes_what_is_read_not_what_is_found(tmp_path: Path) -> None:
    repo, sha = _tree(tmp_path)
    names = {"need_cache", "Mode.Fast", "operator=="}
    with GitTree(repo.path, sha) as tree:
        assert tree.grep(["need_cache"], ["*.py"]) == {"pkg/impl.py", "tests/test_derive.py"}
        grepped = build_index(tree, names)
    read_all = build_index(DirTree(repo.path), names)  # no `grep`: every candidate is read
    assert grepped.scanned_files < read_all.scanned_files
    assert sorted(grepped.files) == sorted(read_all.files)
    assert grepped.files == read_all.files
    assert grepped.tests_mentioning(sorted(names)) == read_all.tests_mentioning(sorted(names))


def test_many_names_read_every_candidate_instead_of_grepping(tmp_path: Path) -> None:
    repo, sha = _tree(tmp_path)
    many = {"need_cache", *(f"unused_name_{i}" for i in range(300))}

    class Counting(GitTree):
        greps = 0

        def grep(self, words, pathspecs=()):  # type: ignore[no-untyped-def]
            Counting.greps += 1
            return super().grep(words, pathspecs)

    with Counting(repo.path, sha) as tree:
        few = build_index(tree, {"need_cache"})
        assert Counting.greps == 1
        lots = build_index(tree, many)
    assert Counting.greps == 1  # past the bound, no git grep: every candidate is read
    assert lots.scanned_files == 7 and few.scanned_files == 4
    assert sorted(lots.files) == sorted(few.files)
