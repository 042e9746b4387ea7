"""The name a raw environment read is bound to, read off its line as written (pure).

The facts name the field an environment read is assigned to inside a method (`self.check = ...`), not a
keyword argument (`check_server=bool(os.getenv("MOONCAKE_CHECK_SERVER", False))`) nor a module-level name
(`USE_RAY_COMPILED_DAG = bool(os.getenv("VLLM_USE_RAY_COMPILED_DAG", 0))`). A finding about the read names
the setting that holds the wrong value, which is what a reader (and a reviewer's label) looks for.
"""

from __future__ import annotations

import re

__all__ = ["bound_name"]


def bound_name(variable: str, line: str) -> str:
    """The name (`check_server`, `USE_RAY_COMPILED_DAG`, `self.x`) that `line` assigns a read of
    `variable` to, through `bool(...)` at most; "" when the read is not assigned there."""
    m = re.search(
        rf"([A-Za-z_][\w.]*)\s*=(?!=)\s*(?:bool\s*\(\s*)?os\.(?:getenv|environ\.get)\(\s*[\"']{re.escape(variable)}[\"']",
        line,
    )
    return m.group(1) if m else ""
