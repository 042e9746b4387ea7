"""build.NameSet: whole-word matching by word-set intersection agrees with the word-bounded pattern;
build_index: names searched only in tests."""

from __future__ import annotations

import random
from pathlib import Path

from reviewbot.change.git import GitTree
from reviewbot.lang import index as lang_index
from reviewbot.lang.build import NameSet, build_index, names_pattern
from tests.gitrepo import Repo

TEXTS = [
    "x.flag = 1;",
    "if (A::b) { y->flag_set = 2; }",
    "myflag + flag2 + _flag",
    "obj->b + A.bc + A . b",
    "call(A->b)",
    "ns::A::b::c",
    "operator==(x)",
    "Übflag flag",
    "",
]
NAMES = {"flag", "A.b", "A::b", "operator==", "c", "  ", ""}


def test_found_names_agree_with_the_pattern_of_each_name() -> None:
    names = NameSet(NAMES)
    for text in TEXTS:
        expected = set()
        for name in names.names:
            pattern = names_pattern({name})
            assert pattern is not None
            if pattern.search(text):
                expected.add(name)
        assert names.found(text) == expected, text


def test_few_names_are_found_as_the_word_set_finds_them() -> None:
    """Up to `_FEW_NAMES` names are searched one by one (no word set): the same answer, on random
    texts over an alphabet of word, separator and non-ASCII characters."""
    rng = random.Random(14)
    alphabet = ["a", "b", "_", "1", "é", ".", "::", "->", " ", "(", "=", "A"]
    for _ in range(3000):
        pool = ["a", "ab", "b_", "A.b", "A::a", "a->b", "é", "operator==", "a1"]
        names = NameSet(rng.sample(pool, rng.randint(1, len(pool))))
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert names.few
        assert names.found(text) == names.found(text, NameSet.words(text)), (text, names.names)


def test_scoped_names_match_every_separator_and_whole_words_only() -> None:
    names = NameSet({"Mode.Fast"})
    assert names.found("EXPECT_EQ(Mode::Fast, pick())") == {"Mode.Fast"}
    assert names.mentions("m->Mode->Fast") and names.mentions("x = cfg.Mode.Fast")
    assert not names.mentions("Mode.Faster") and not names.mentions("Mode + Fast")


def test_no_names_find_nothing() -> None:
    assert not NameSet({"", " "}) and NameSet({"", " "}).found("anything") == set()
    assert not NameSet(set()).mentions("flag")


def test_names_only_searched_in_tests_make_no_file_be_parsed(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    sha = repo.commit(
        {
            "src/model.py": "class M:\n    def forward(self, x):\n        return x\n",
            "src/derive.cc": "void D::derive(Cfg& c) {\n    c.need_cache = false;\n}\n",
            "tests/test_model.py": "def test_forward():\n    assert M().forward(1) == 1\n",
        }
    )
    with GitTree(repo.path, sha) as tree:
        index = build_index(tree, {"need_cache"}, test_names={"need_cache", "forward", "derive"})
    assert sorted(index.files) == ["src/derive.cc"]
    assert [(r.path, r.line, r.name) for r in index.tests_mentioning(["forward", "derive"])] == [
        ("tests/test_model.py", 2, "forward")
    ]


def test_tests_mentioning_merges_names_in_path_and_line_order() -> None:
    index = lang_index.RepoIndex()
    index.add_test_refs(
        [
            lang_index.TestRef("tests/b.py", 3, "forward(x)", "forward"),
            lang_index.TestRef("tests/a.py", 9, "forward(x)", "forward"),
            lang_index.TestRef("tests/a.py", 9, "forward(x)", "forward"),
        ]
    )
    assert [(r.path, r.line) for r in index.tests_mentioning(["forward"])] == [
        ("tests/a.py", 9),
        ("tests/b.py", 3),
    ]
    index.add_test_refs(
        [
            lang_index.TestRef("tests/a.py", 9, "forward(x).flag", "flag"),
            lang_index.TestRef("tests/c.py", 1, "flag", "flag"),
        ]
    )
    assert [
        (r.path, r.line, r.name) for r in index.tests_mentioning(["forward", "flag", "forward", "none"])
    ] == [
        ("tests/a.py", 9, "flag"),
        ("tests/a.py", 9, "forward"),
        ("tests/b.py", 3, "forward"),
        ("tests/c.py", 1, "flag"),
    ]
    assert index.tests_mentioning(["none"]) == [] and index.tests_mentioning([]) == []
