"""Running a round's generated truth-table tests once on the head and once on the base: each side's tree
exported into the scratch directory, within what is left of the round's deadline; an export that fails or
a budget used up is that side's reason, never an error (the round goes on)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from reviewbot.change.git import checkout
from reviewbot.errors import ReviewbotError
from reviewbot.model.budget import ROUND_DEADLINE
from reviewbot.model.change import ChangeSet
from reviewbot.model.executed import Executed

__all__ = ["Side", "on_both_sides"]

# One side's results: (module, test) -> executed value, module -> why it did not import, and why the side
# did not run at all ("" when it ran).
Side = tuple[dict[tuple[str, str], Executed], dict[str, str], str]


def on_both_sides(
    change: ChangeSet,
    repo_path: Path,
    scratch: Path,
    prefix: str,
    timeout: float,
    run: Callable[[Path, Path, float], Side],
) -> dict[str, Side]:
    """`run(tree, run_dir, seconds)` on the head's and the base's tree (`scratch/<prefix><side>-tree`,
    run directory `scratch/<prefix>run-<side>`), each within `timeout` and the round's deadline."""
    deadline = ROUND_DEADLINE.get() or float("inf")
    sides: dict[str, Side] = {}
    for side, sha in (("head", change.head_sha), ("base", change.base_sha)):
        limit = min(timeout, deadline - time.monotonic())
        if limit < 1.0:
            sides[side] = ({}, {}, "the round's time budget was used up")
            continue
        tree = scratch / f"{prefix}{side}-tree"
        try:
            checkout(repo_path, sha, tree)
        except ReviewbotError as exc:
            sides[side] = ({}, {}, f"could not export {sha[:12]}: {exc}")
            continue
        sides[side] = run(tree, scratch / f"{prefix}run-{side}", limit)
    return sides
