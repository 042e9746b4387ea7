"""bench/executed_tables.py --probe-imports: which changed modules import here, path or not, and the page line."""

from __future__ import annotations

import sys
from pathlib import Path

from reviewbot.change.diff import load_change
from tests.bench.scripts import load_script
from tests.execution.test_harness_rounds import CONFIG_HEAD as CONFIG  # a table in __post_init__
from tests.gitrepo import Repo

bench = load_script("bench_executed_tables", "executed_tables.py")
page = sys.modules["executed_tables_page"]


def test_each_module_holding_a_table_is_imported_on_the_head_and_a_failure_says_why(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit(
        {
            "pkg/__init__.py": "",
            "pkg/config.py": CONFIG,
            "src/gpu/__init__.py": "",
            "src/gpu/kernels.py": "import triton_not_installed_here\n\n" + CONFIG,
        },
        "base",
    )
    head = repo.commit(
        {
            "pkg/config.py": CONFIG.replace("if self.cache:", "if self.cache or not self.use_rope:"),
            "src/gpu/kernels.py": "import triton_not_installed_here\n\n"
            + CONFIG.replace("if self.cache:", "if not self.cache:"),
        },
        "head",
    )
    change = load_change(repo.path, base, head)
    try:
        tables, _, found, modules = bench._static(change)
        assert tables == 2 and found == 2
        assert sorted(modules) == [("", "pkg.config"), ("src", "gpu.kernels")]
        probed = bench._probe(change, repo.path, modules, 60.0)
    finally:
        change.close()
    by_module = dict(zip([m for _, m in modules], probed, strict=True))
    assert by_module["pkg.config"] == ""
    assert by_module["gpu.kernels"] == (
        "gpu.kernels: ModuleNotFoundError: No module named 'triton_not_installed_here'"
    )


def test_the_page_counts_the_tables_and_rows_of_the_commits_whose_modules_import() -> None:
    ok = page.CommitResult("a-1", "r", "1", tables=3, with_harness=1, executed=1, rows=2, agreed=1)
    ok.modules, ok.modules_import = 2, 1
    failing = page.CommitResult("b-2", "r", "2", tables=5, modules=1, import_failures=["m: ImportError: x"])
    unprobed = page.CommitResult("c-3", "r", "3", tables=4)
    (line,) = page._probed([ok, failing, unprobed])
    assert "probed (every module holding a Python table, imported on the head in the sandbox): 2" in line
    assert "with at least one module that imports here: 1 (a-1); their tables: 3" in line
    assert "executed: 1 (in 1 commits); rows run: 2, agreed: 1, wrong: 0" in line
    assert page._probed([unprobed]) == []
    text = page.render([ok, failing, unprobed], [], "cmd")
    assert "## Why probed modules do not import here\n\n- 1 × ImportError: x" in text
