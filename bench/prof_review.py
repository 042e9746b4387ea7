"""Profile one in-process review of a generated large change (see bench_review.py for the modes).

    python3 bench/prof_review.py --files 1000 --changed 100 [--dense] [--sort tottime] [--top 30]

Prints the stage timings of the review and the functions that cost most under cProfile (which
slows Python code down by about 2x: compare stages between runs of this script, not with the bench).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_review import generate_large  # noqa: E402
from reviewbot.change.diff import load_change  # noqa: E402
from reviewbot.review.pipeline import review_change  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--changed", type=int, default=100)
    ap.add_argument("--lines", type=int, default=17)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--sort", default="cumulative", choices=["cumulative", "tottime", "ncalls"])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--no-profile", action="store_true", help="only time the stages")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="reviewbot-prof-") as tmp:
        path, base, head = generate_large(Path(tmp) / "r", args.files, args.changed, args.lines, args.dense)
        change = load_change(path, base, head)
        prof = cProfile.Profile()
        wall, cpu = time.perf_counter(), time.process_time()
        if not args.no_profile:
            prof.enable()
        review = review_change(change)
        prof.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"review_change: {wall:.2f} s wall, {cpu:.2f} s CPU in this process; index {review.kpi.get('index')}"
    )
    print("stages (ms)", review.kpi["timings_ms"])
    if not args.no_profile:
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
