"""`.ci/shape.py`, the code-shape limits CI holds reviewbot to, on a package made for the test."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "shape.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_shape", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shape = _load()


def _branchy(name: str, branches: int) -> str:
    # each `and` is one more branch for radon (ruff's C901 would not count it)
    cond = " and ".join(f"x{i}" for i in range(branches))
    return f"def {name}({', '.join(f'x{i}' for i in range(branches))}):\n    if {cond}:\n        return 1\n    return 0\n"


def test_a_function_over_25_and_a_module_over_400_lines_are_named(tmp_path: Path) -> None:
    pkg = tmp_path / "reviewbot"
    (pkg / "migrations").mkdir(parents=True)
    (pkg / "ok.py").write_text(_branchy("fine", 23))  # complexity 24
    (pkg / "knotted.py").write_text(
        "class C:\n    pass\n\n\n" + _branchy("knot", 26).replace("def ", "def ", 1)
    )
    (pkg / "long.py").write_text("x = 1\n" * 401)
    (pkg / "migrations" / "rev.py").write_text("x = 1\n" * 500)  # generated: not ours to shape
    found = shape.problems(pkg)
    assert found == [
        "reviewbot/knotted.py:5: knot has complexity 27 (limit 25)",
        "reviewbot/long.py: 401 lines (limit 400)",
    ]


def test_reviewbot_itself_is_within_the_limits() -> None:
    # CI runs this with the other tests: a function over 25 or a module over 400 lines fails the build.
    assert shape.problems() == []
