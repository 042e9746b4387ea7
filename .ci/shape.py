"""The code-shape limits CI holds reviewbot to (issue 26): no function over cyclomatic complexity 25 as
radon counts it (each `and`/`or` is a branch, which ruff's C901 does not count), no module over 400 lines.

    python3 .ci/shape.py            # lists what breaks a limit; exit 1 if anything does
"""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

MAX_COMPLEXITY = 25
MAX_LINES = 400
PACKAGE = Path(__file__).resolve().parent.parent / "reviewbot"


def problems(package: Path = PACKAGE) -> list[str]:
    out: list[str] = []
    for path in sorted(package.rglob("*.py")):
        if "migrations" in path.parts:  # Alembic's generated revisions are not ours to shape
            continue
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(package.parent)
        lines = text.count("\n")
        if lines > MAX_LINES:
            out.append(f"{rel}: {lines} lines (limit {MAX_LINES})")
        for block in cc_visit(text):  # functions and methods (a class's figure is an average: skipped)
            if isinstance(block, Function) and block.complexity > MAX_COMPLEXITY:
                out.append(
                    f"{rel}:{block.lineno}: {block.fullname} has complexity {block.complexity} "
                    f"(limit {MAX_COMPLEXITY})"
                )
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
