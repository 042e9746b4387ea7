"""Benchmark: review the bundled example and a generated large change; print wall time, peak RSS, stages.

    python3 bench/bench_review.py            # both
    python3 bench/bench_review.py --example  # only the example
    python3 bench/bench_review.py --large --files 5000 --changed 500

Targets (docs, not assertions): the example under 1 s as a whole process; the large change (about
10,000 changed lines over 500 files in a 5,000-file repository) under 20 s and 1 GB peak RSS.
Each review runs as its own `reviewbot` process so the figures include start-up and imports.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reviewbot.example import build_example  # noqa: E402
from tests.gitrepo import Repo  # noqa: E402

CPP_TEMPLATE = """#include "gen/config_{i}.h"

namespace gen {{

Flags Derive{i}::derive(const Model& model, bool use_kvcache) const {{
    Flags config;
    config.rope_style = model.rope_style;
    config.need_cache_{i} = model.need_cache_{i};
    config.fuse_bias_{i} = model.qk_norm || (config.rope_style == RopeStyle::No && !use_kvcache) ? false : true;
{body}
    return config;
}}

}}  // namespace gen
"""

PY_TEMPLATE = """from gen.enums import Style


class Model{i}:
    def __init__(self, cfg):
        self.need_cache_{i} = cfg.need_cache_{i}
        self.style = cfg.style

    def forward(self, x, cache):
        if self.need_cache_{i}:
            x = self.cache_op_{i}.forward(x, cache)
{body}
        return x
"""


def _cpp_body(i: int, lines: int, head: bool) -> str:
    out = []
    for k in range(lines):
        out.append(f"    config.value_{i}_{k} = model.value_{i}_{k} * {2 if head else 1};")
    if head:
        out.append("    if (config.rope_style == RopeStyle::No && !use_kvcache) {")
        out.append(f"        config.need_cache_{i} = false;")
        out.append("    }")
    return "\n".join(out)


def _py_body(i: int, lines: int, head: bool) -> str:
    out = []
    for k in range(lines):
        out.append(f"        x = x + {k if not head else k + 1}  # step {k}")
    if head:
        out.append("        if self.style == Style.NO and not cache:")
        out.append(f"            self.need_cache_{i} = False")
    return "\n".join(out)


def generate_large(dest: Path, files: int, changed: int, lines_per_change: int) -> tuple[Path, str, str]:
    repo = Repo(dest)
    half = files // 2
    tree: dict[str, str | bytes | None] = {"gen/enums.py": "class Style:\n    NO = 0\n    BASE = 1\n"}
    for i in range(half):
        tree[f"gen/cpp/derive_{i}.cc"] = CPP_TEMPLATE.format(i=i, body=_cpp_body(i, lines_per_change, False))
    for i in range(files - half):
        tree[f"gen/py/model_{i}.py"] = PY_TEMPLATE.format(i=i, body=_py_body(i, lines_per_change, False))
    for i in range(0, 50):
        tree[f"tests/test_gen_{i}.py"] = f"def test_{i}():\n    assert {i} == {i}\n"
    base = repo.commit(tree, "base")
    repo.checkout("pr", create=True)
    head_tree: dict[str, str | bytes | None] = {}
    for j in range(changed):
        if j % 2 == 0:
            i = j // 2
            head_tree[f"gen/cpp/derive_{i}.cc"] = CPP_TEMPLATE.format(
                i=i, body=_cpp_body(i, lines_per_change, True)
            )
        else:
            i = j // 2
            head_tree[f"gen/py/model_{i}.py"] = PY_TEMPLATE.format(
                i=i, body=_py_body(i, lines_per_change, True)
            )
    head = repo.commit(head_tree, "change")
    return dest, base, head


def run_review(path: Path, base: str, head: str, label: str) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "reviewbot.cli",
        "run",
        "--path",
        str(path),
        "--base",
        base,
        "--head",
        head,
        "--format",
        "json",
        "--no-tests",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    wall = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        raise SystemExit(f"{label}: reviewbot exited {proc.returncode}")
    report = json.loads(proc.stdout)
    kpi = report["kpi"]
    print(f"== {label}")
    print(f"wall time      {wall:8.2f} s")
    print(f"peak RSS       {max(peak_kb, before) / 1024:8.1f} MB (largest child so far)")
    print(f"status         {report['status']}, findings {len(report['findings'])}, files {kpi['files']}")
    print(f"patch bytes    {kpi['patch_bytes']}, coverage {kpi['coverage']}, index {kpi.get('index')}")
    stages = kpi.get("timings_ms", {})
    print("stages (ms)    " + ", ".join(f"{k} {v:.0f}" for k, v in stages.items()))
    return {"wall_s": wall, "peak_mb": peak_kb / 1024, "stages": stages}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--example", action="store_true")
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=500)
    parser.add_argument(
        "--lines", type=int, default=17, help="changed lines per file (about 20 with the branch)"
    )
    args = parser.parse_args()
    both = not (args.example or args.large)
    with tempfile.TemporaryDirectory(prefix="reviewbot-bench-") as tmp:
        if args.example or both:
            ex = build_example(Path(tmp) / "example")
            run_review(ex.path, ex.base, ex.round1, "bundled example (target < 1 s)")
        if args.large or both:
            start = time.perf_counter()
            path, base, head = generate_large(Path(tmp) / "large", args.files, args.changed, args.lines)
            print(
                f"(generated {args.files} files, {args.changed} changed, in {time.perf_counter() - start:.1f} s)"
            )
            run_review(
                path,
                base,
                head,
                f"large change ({args.changed} files of {args.files}; target < 20 s, < 1 GB)",
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
