"""The bench scripts are files, not a package: tests load them by path, once each."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_script(name: str, filename: str) -> ModuleType:
    """`bench/<filename>` as the module `name`, registered in `sys.modules` (dataclasses look their
    module up there). The bench folder joins `sys.path` for the scripts' own sibling imports."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
