"""The name a raw environment read is bound to, and the test it is compared in, read off its line as
written (pure).

The facts name the field an environment read is assigned to inside a method (`self.check = ...`), not a
keyword argument (`check_server=bool(os.getenv("MOONCAKE_CHECK_SERVER", False))`) nor a module-level name
(`USE_RAY_COMPILED_DAG = bool(os.getenv("VLLM_USE_RAY_COMPILED_DAG", 0))`). A finding about the read names
the setting that holds the wrong value, which is what a reader (and a reviewer's label) looks for.
"""

from __future__ import annotations

import re

__all__ = ["bound_name", "written_comparison"]


def bound_name(variable: str, line: str) -> str:
    """The name (`check_server`, `USE_RAY_COMPILED_DAG`, `self.x`) that `line` assigns a read of
    `variable` to, through `bool(...)` at most; "" when the read is not assigned there."""
    m = re.search(
        rf"([A-Za-z_][\w.]*)\s*=(?!=)\s*(?:bool\s*\(\s*)?os\.(?:getenv|environ\.get)\(\s*[\"']{re.escape(variable)}[\"']",
        line,
    )
    return m.group(1) if m else ""


_READ = r"os\.(?:getenv|environ\.get)\(\s*[\"']{name}[\"'][^()]*\)|os\.environ\[\s*[\"']{name}[\"']\s*\]"
_OPERAND = r"\s*(?:==|!=|\bis\s+not\b|\bis\b)\s*(?:\"[^\"]*\"|'[^']*'|[\w.]+)"


def written_comparison(variable: str, line: str) -> str:
    """The comparison of a read of `variable` exactly as `line` writes it (`os.environ.get("X") !=
    "spawn"`), so a finding quotes the source and not the facts' canonical form (`·!="spawn"`); ""
    when the line does not hold one in that shape."""
    m = re.search(f"(?:{_READ.format(name=re.escape(variable))}){_OPERAND}", line)
    return m.group(0) if m else ""
