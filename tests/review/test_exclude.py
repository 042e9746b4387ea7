"""`[review] exclude` reaches the analysis: excluded and vendored paths are neither indexed nor tests."""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.review.pipeline import index_stage, parse_stage
from tests.gitrepo import Repo

CONFIG = "class Config:\n    use_cache: bool = True\n    flag: bool = True\n"
DERIVE = "def derive(cfg):\n    if not cfg.use_cache:\n        cfg.flag = False\n    return cfg\n"
OTHER = "def build(cfg):\n    cfg.flag = True\n    return cfg\n"
TEST = "def test_flag():\n    assert derive(Config()).flag\n"


def test_excluded_and_vendored_paths_are_not_indexed_or_counted_as_tests(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit(
        {
            "pkg/config.py": CONFIG,
            "pkg/derive.py": "def derive(cfg):\n    return cfg\n",
            "legacy/build.py": OTHER,
            "third_party/lib/build.py": OTHER,
            "legacy/tests/test_flag.py": TEST,
            "tests/test_flag.py": TEST,
        },
        "base",
    )
    head = repo.commit({"pkg/derive.py": DERIVE}, "head")
    change = load_change(repo.path, base, head)
    parsed = parse_stage(change, ("legacy/**",))
    assert [d.head.field for d in parsed.derivations] == ["flag"]
    indexed = index_stage(change, parsed, ("legacy/**",))
    assert not any(p.startswith(("legacy/", "third_party/")) for p in indexed.index.files)
    assert indexed.test_files == ["tests/test_flag.py"]
    # Without the glob, the legacy tree is the project's own code again (the vendored tree never is).
    plain = index_stage(change, parse_stage(change))
    assert "legacy/build.py" in plain.index.files and "third_party/lib/build.py" not in plain.index.files
    assert "legacy/tests/test_flag.py" in plain.test_files
