"""Timing figure for GitTree over a generated 5,000-file repository (not a test; run by hand).

python3 -m tests.change.bench_gittree [FILES]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from reviewbot.change.git import GitTree, resolve
from tests.gitrepo import Repo


def _time(path: Path, sha: str, label: str) -> None:
    start = time.perf_counter()
    with GitTree(path, sha) as tree:
        paths = tree.paths()
        listed = time.perf_counter()
        texts = tree.read_many(paths)
        done = time.perf_counter()
    total = sum(len(t or "") for t in texts.values())
    print(
        f"{label}: {len(paths)} files, {total / 1e6:.1f} MB: ls-tree {1000 * (listed - start):.0f} ms, "
        f"read_many {1000 * (done - listed):.0f} ms ({1e6 * (done - listed) / len(paths):.0f} us/file)"
    )


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 5000
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo(Path(tmp) / "repo")
        repo.git("config", "gc.auto", "0")  # no background gc racing the explicit one below
        files: dict[str, str | bytes | None] = {}
        for i in range(count):
            body = "".join(f"int value_{i}_{j} = {j};  // generated line\n" for j in range(60))
            files[f"src/mod{i % 50:02d}/file_{i:05d}.cc"] = body
        repo.commit(files)
        sha = resolve(repo.path, "HEAD")
        _time(repo.path, sha, "loose objects (fresh commits)")
        repo.git("gc", "-q")
        _time(repo.path, sha, "packed (after git gc, like a clone)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
