"""How a round's truth tables find and import their modules (execution/harness_module.py, tables.py), on
real mini repositories reviewed end to end (the real sandbox, pytest, the head and the base).

One changed module that does not import leaves the other tables of the round running (pytest goes on
past a collection error); a module whose relative imports climb above its topmost package (a namespace
directory without `__init__.py` above it) is imported by its full dotted path.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewbot.change.diff import load_change
from reviewbot.execution.execute import executor
from reviewbot.execution.harness_module import lifted
from reviewbot.report.render import render_json
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.execution.probe import toml
from tests.execution.test_executed_tables import SETTINGS
from tests.gitrepo import Repo

CONFIG = """from dataclasses import dataclass


@dataclass
class Config:
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        if self.cache:
            self.use_rope = True
"""
CONFIG_HEAD = CONFIG.replace("            self.use_rope = True\n", "            self.use_rope = False\n")


def _round(tmp_path: Path, base: dict[str, str | bytes | None], head: dict[str, str | bytes | None]) -> Any:
    repo = Repo(tmp_path / "repo")
    files: dict[str, str | bytes | None] = {".reviewbot.toml": toml(f"{sys.executable} -c pass", timeout=120)}
    b = repo.commit({**files, **base}, "base")
    repo.checkout("pr", create=True)
    h = repo.commit(head, "head")
    review = review_change(
        load_change(repo.path, b, h), ReviewSettings(execute=executor(repo.path, SETTINGS))
    )
    return render_json(review)


def test_a_module_that_does_not_import_leaves_the_other_tables_running(tmp_path: Path) -> None:
    broken = "import not_a_package_here  # noqa: F401\n\n" + CONFIG.replace("class Config", "class Other")
    broken_head = "import not_a_package_here  # noqa: F401\n\n" + CONFIG_HEAD.replace(
        "class Config", "class Other"
    )
    doc = _round(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/other.py": broken},
        {"pkg/config.py": CONFIG_HEAD, "pkg/other.py": broken_head},
    )
    tables = {t["path"]: t for t in doc["executed_tables"]}
    assert set(tables) == {"pkg/config.py", "pkg/other.py"}
    assert tables["pkg/other.py"]["executed"] is False
    assert "not_a_package_here" in tables["pkg/other.py"]["reason"]
    ran = tables["pkg/config.py"]
    assert ran["executed"] is True and ran["reason"] == "" and ran["wrong_rows"] == []
    assert ran["rows"] and all(r["executed"]["head"]["outcome"] == "value" for r in ran["rows"])


@pytest.mark.parametrize("spelled", ["from ..core import ROPE", "from top.core import ROPE"])
def test_a_module_naming_the_directory_above_its_topmost_package_imports_by_its_full_path(
    tmp_path: Path, spelled: str
) -> None:
    # `top/` has no `__init__.py`: `top/pkg/config.py` reaches `top/core.py` as `..core` or `top.core`
    relative = f"{spelled}\n\n" + CONFIG.replace("use_rope: bool = True", "use_rope: bool = ROPE")
    head = f"{spelled}\n\n" + CONFIG_HEAD.replace("use_rope: bool = True", "use_rope: bool = ROPE")
    doc = _round(
        tmp_path,
        {"top/core.py": "ROPE = True\n", "top/pkg/__init__.py": "", "top/pkg/config.py": relative},
        {"top/pkg/config.py": head},
    )
    (table,) = doc["executed_tables"]
    assert (table["harness"]["module"], table["harness"]["import_root"]) == ("top.pkg.config", "")
    assert table["executed"] is True and table["reason"] == "", table["reason"]
    assert table["wrong_rows"] == [] and table["verified"] is True


def test_a_package_under_a_plain_source_directory_keeps_its_own_name() -> None:
    # `python/sglang/srt/x.py`: `python/` is a source directory, not a package the module names
    tree = ast.parse("from sglang.srt.utils import is_cuda\n")
    assert lifted(("python", "sglang.srt.x"), tree) == ("python", "sglang.srt.x")
    assert lifted(("python", "sglang.srt.x"), ast.parse("from python.sglang.srt import y\n")) == (
        "",
        "python.sglang.srt.x",
    )
