"""Benchmark: review the bundled example and a generated large change; print wall, CPU, peak RSS, stages.

    python3 bench/bench_review.py                    # the example and the large change (realistic mode)
    python3 bench/bench_review.py --example          # only the example
    python3 bench/bench_review.py --large            # only the large change, realistic mode
    python3 bench/bench_review.py --large --dense    # only the large change, dense mode
    python3 bench/bench_review.py --large --both     # the large change in both modes
    python3 bench/bench_review.py --large --files 5000 --changed 500 --lines 17
    python3 bench/bench_review.py --vs-semgrep       # reviewbot against semgrep on the bundled example
    python3 bench/bench_review.py --vs-semgrep --repo PATH --base REV --head REV [--runs 5]
                                                     # ... on a real checkout: see bench/bench_vs_semgrep.py

Targets (docs, not assertions): the example under 1 s as a whole process; the large change (about
10,000 changed lines over 500 files in a 5,000-file repository) under 20 s wall and 1 GB peak RSS.
Each review runs as its own `reviewbot` process so the figures include start-up and imports. CPU
time is that process's user + system time including its worker processes (on a loaded machine the
wall time grows, the CPU time much less). Peak RSS is given two ways: the largest single process
(`ru_maxrss`) and the largest sum over the process tree seen by sampling /proc every 20 ms (the figure
for "the whole process" once parsing runs in a pool; it counts pages shared after fork once per process,
so it overstates).

What the two modes of the large change model:

- realistic (default): a repository of model code where each derivation file derives its own flags from
  its own inputs. 10% of the files are tests; the rest are half C++ derivation files
  (`gen/cpp/derive_<i>.cc`: `Derive<i>::derive` sets `need_cache_<i>`, `fuse_bias_<i>` from `model.*_<i>`
  and an enum `Mode<i>`), half Python model files (`gen/py/model_<i>.py`: `Model<i>.forward` reads
  `need_cache_<i>` through `self.need_cache_<i> = cfg.need_cache_<i>` and gates an op with it). One
  file pair in 14 (about 7%) shares the common config fields and predicate (`rope_style ==
  RopeStyle::No && !use_kvcache`, `need_rope_kv_cache`), and one Python file in 50 defines a
  `_create_config` builder that sets shared fields. Tests mention their model's class and function
  (`derive`, `forward`) and, for the shared minority, the shared fields. The change touches `changed`
  files, alternating C++ and Python: each adds a guarded derivation of its own flag (the shared ones:
  the shared flag under the shared predicate) and rewrites `lines` value lines. Function names are common
  (`derive`, `forward` in every file), as in real code.
- dense (`--dense`, the worst case): every one of the files contains the same compound predicate and
  the same identifiers (`rope_style`, `RopeStyle`, `use_kvcache`, `style`, `cache`, `forward`), so
  every file mentions every searched name and the index parses the whole repository; 50 small tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accuracy import byte_compile  # noqa: E402
from bench_vs_semgrep import add_arguments as add_vs_semgrep_arguments  # noqa: E402
from bench_vs_semgrep import run as run_vs_semgrep  # noqa: E402
from bench_vs_semgrep import tree_rss_kb  # noqa: E402

from reviewbot.example import build_example  # noqa: E402
from tests.gitrepo import Repo  # noqa: E402

Tree = dict[str, str | bytes | None]

# --- dense mode: every file holds the same predicate and identifiers ---------------------------------

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


def _dense(files: int, changed: int, lines: int) -> tuple[Tree, Tree]:
    half = files // 2
    tree: Tree = {"gen/enums.py": "class Style:\n    NO = 0\n    BASE = 1\n"}
    for i in range(half):
        tree[f"gen/cpp/derive_{i}.cc"] = CPP_TEMPLATE.format(i=i, body=_cpp_body(i, lines, False))
    for i in range(files - half):
        tree[f"gen/py/model_{i}.py"] = PY_TEMPLATE.format(i=i, body=_py_body(i, lines, False))
    for i in range(0, 50):
        tree[f"tests/test_gen_{i}.py"] = f"def test_{i}():\n    assert {i} == {i}\n"
    head: Tree = {}
    for j in range(changed):
        i = j // 2
        if j % 2 == 0:
            head[f"gen/cpp/derive_{i}.cc"] = CPP_TEMPLATE.format(i=i, body=_cpp_body(i, lines, True))
        else:
            head[f"gen/py/model_{i}.py"] = PY_TEMPLATE.format(i=i, body=_py_body(i, lines, True))
    return tree, head


# --- realistic mode: each file derives its own flags; a minority shares fields and predicates --------

SHARE_EVERY = 14  # one file pair in 14 (about 7%) uses the shared config fields and predicate
BUILDER_EVERY = 50  # one Python model in 50 defines a config builder

R_CPP = """#include "gen/config_{i}.h"

namespace gen {{

enum class Mode{i} {{ Off, On, Auto }};

Flags Derive{i}::derive(const Model{i}& model, bool use_cache_{i}) const {{
    Flags config;
    config.mode_{i} = model.mode_{i};
    config.need_cache_{i} = model.need_cache_{i};
    config.fuse_bias_{i} = model.norm_{i} || ({pred}) ? false : true;
{body}
    return config;
}}

}}  // namespace gen
"""

R_CPP_SHARED = """#include "gen/config_{i}.h"

namespace gen {{

Flags Derive{i}::derive(const Model{i}& model, bool use_kvcache) const {{
    Flags config;
    config.rope_style = model.rope_style;
    config.need_cache_{i} = model.need_cache_{i};
    config.need_rope_kv_cache = model.need_rope_kv_cache;
    config.fuse_bias_{i} = model.norm_{i} || ({pred}) ? false : true;
{body}
    return config;
}}

}}  // namespace gen
"""

R_PY = """from gen.ops import CacheOp{i}, apply_{i}


class Model{i}:
    def __init__(self, cfg):
        self.need_cache_{i} = cfg.need_cache_{i}
        self.style_{i} = cfg.style_{i}{shared_init}

    def forward(self, x, cache_{i}):
        if self.need_cache_{i}:
            x = self.cache_op_{i}.forward(x, cache_{i})
        else:
            x = apply_{i}(x)
{shared_read}{body}
        return x
{builder}"""

R_PY_SHARED_INIT = "\n        self.need_rope_kv_cache = cfg.need_rope_kv_cache"
R_PY_SHARED_READ = """        if self.need_rope_kv_cache:
            x = self.rope_op.forward(x, cache_{i})
"""
R_PY_BUILDER = """

def _create_config(task_type):
    cfg = Config{i}()
    cfg.rope_style = RopeStyle.Base
    cfg.use_kvcache = task_type == TaskType.LANGUAGE_MODEL
    return cfg
"""

R_PY_TEST = """from gen.py.model_{i} import Model{i}


def test_model_{i}_forward():
    m = Model{i}(Cfg(need_cache_{i}=True, style_{i}=0))
    assert m.forward(1, None) == 1
"""
R_CPP_TEST = """#include "gen/config_{i}.h"

TEST(Derive{i}, derive) {{
    Model{i} model;
    EXPECT_FALSE(Derive{i}().derive(model, true).fuse_bias_{i});{shared}
}}
"""


def _shared(i: int) -> bool:
    return i % SHARE_EVERY == 0


def _r_pred(i: int) -> str:
    return (
        "config.rope_style == RopeStyle::No && !use_kvcache"
        if _shared(i)
        else (f"config.mode_{i} == Mode{i}::Off && !use_cache_{i}")
    )


def _r_cpp(i: int, lines: int, head: bool) -> str:
    out = [f"    config.value_{i}_{k} = model.value_{i}_{k} * {2 if head else 1};" for k in range(lines)]
    if head:
        flag = "need_rope_kv_cache" if _shared(i) else f"need_cache_{i}"
        out += [f"    if ({_r_pred(i)}) {{", f"        config.{flag} = false;", "    }"]
    template = R_CPP_SHARED if _shared(i) else R_CPP
    return template.format(i=i, pred=_r_pred(i), body="\n".join(out))


def _r_py(i: int, lines: int, head: bool) -> str:
    out = [f"        x = x + {k if not head else k + 1}  # step {k}" for k in range(lines)]
    if head:
        out += [
            f"        if self.style_{i} == Style{i}.OFF and not cache_{i}:",
            f"            self.need_cache_{i} = False",
        ]
    return R_PY.format(
        i=i,
        shared_init=R_PY_SHARED_INIT if _shared(i) else "",
        shared_read=R_PY_SHARED_READ.format(i=i) if _shared(i) else "",
        body="\n".join(out),
        builder=R_PY_BUILDER.format(i=i) if i % BUILDER_EVERY == 0 else "",
    )


def _realistic(files: int, changed: int, lines: int) -> tuple[Tree, Tree]:
    tests = files // 10
    pairs = (files - tests) // 2
    tree: Tree = {}
    for i in range(pairs):
        tree[f"gen/cpp/derive_{i}.cc"] = _r_cpp(i, lines, False)
        tree[f"gen/py/model_{i}.py"] = _r_py(i, lines, False)
    for t in range(tests):
        i = t * 7 % max(1, pairs)
        if t % 2 == 0:
            tree[f"tests/test_model_{t}.py"] = R_PY_TEST.format(i=i)
        else:
            shared = "\n    EXPECT_TRUE(Flags().need_rope_kv_cache);" if _shared(i) else ""
            tree[f"tests/derive_{t}_test.cc"] = R_CPP_TEST.format(i=i, shared=shared)
    head: Tree = {}
    for j in range(changed):
        i = j // 2
        if j % 2 == 0:
            head[f"gen/cpp/derive_{i}.cc"] = _r_cpp(i, lines, True)
        else:
            head[f"gen/py/model_{i}.py"] = _r_py(i, lines, True)
    return tree, head


def generate_large(
    dest: Path, files: int, changed: int, lines_per_change: int, dense: bool = False
) -> tuple[Path, str, str]:
    """A git repository at `dest` with a base commit and a change commit; see the module doc for the modes."""
    repo = Repo(dest)
    tree, head_tree = (_dense if dense else _realistic)(files, changed, lines_per_change)
    base = repo.commit(tree, "base")
    repo.checkout("pr", create=True)
    head = repo.commit(head_tree, "change")
    return dest, base, head


# --- measuring -----------------------------------------------------------------------------------


def run_review(path: Path, base: str, head: str, label: str) -> dict:
    cmd = [sys.executable, "-m", "reviewbot.cli", "run", "--path", str(path), "--base", base]
    cmd += ["--head", head, "--format", "json", "--no-tests"]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    peak_tree = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak_tree[0] = max(peak_tree[0], tree_rss_kb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    if proc.returncode != 0:
        print(err, file=sys.stderr)
        raise SystemExit(f"{label}: reviewbot exited {proc.returncode}")
    report = json.loads(out)
    kpi = report["kpi"]
    print(f"== {label}")
    print(f"wall time      {wall:8.2f} s")
    print(f"CPU time       {cpu:8.2f} s (user + system, with worker processes)")
    print(f"peak RSS       {after.ru_maxrss / 1024:8.1f} MB largest process (largest of all runs so far)")
    print(f"               {peak_tree[0] / 1024:8.1f} MB largest sum over the process tree (sampled)")
    print(f"status         {report['status']}, findings {len(report['findings'])}, files {kpi['files']}")
    print(f"patch bytes    {kpi['patch_bytes']}, coverage {kpi['coverage']}, index {kpi.get('index')}")
    stages = kpi.get("timings_ms", {})
    print("stages (ms)    " + ", ".join(f"{k} {v:.0f}" for k, v in stages.items()))
    return {"wall_s": wall, "cpu_s": cpu, "peak_tree_mb": peak_tree[0] / 1024, "stages": stages}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", action="store_true", help="review the bundled example")
    parser.add_argument("--large", action="store_true", help="review the generated large change")
    parser.add_argument("--dense", action="store_true", help="the large change in dense mode only")
    parser.add_argument("--both", action="store_true", help="the large change in both modes")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=500)
    parser.add_argument(
        "--lines", type=int, default=17, help="changed lines per file (about 20 with the branch)"
    )
    parser.add_argument(
        "--vs-semgrep",
        action="store_true",
        help="reviewbot against semgrep, alternately (bench_vs_semgrep.py)",
    )
    add_vs_semgrep_arguments(parser.add_argument_group("--vs-semgrep options"))
    args = parser.parse_args()
    if args.vs_semgrep:
        return run_vs_semgrep(args)
    if args.repo or args.base or args.head:
        parser.error("--repo, --base and --head go with --vs-semgrep")
    everything = not (args.example or args.large or args.dense or args.both)
    byte_compile(ROOT / "reviewbot")  # as installed: the reviews below import compiled modules
    modes = ["realistic", "dense"] if args.both else ["dense"] if args.dense else ["realistic"]
    with tempfile.TemporaryDirectory(prefix="reviewbot-bench-") as tmp:
        if args.example or everything:
            ex = build_example(Path(tmp) / "example")
            run_review(ex.path, ex.base, ex.round1, "bundled example (target < 1 s)")
        if args.large or args.dense or args.both or everything:
            for mode in modes:
                start = time.perf_counter()
                dest = Path(tmp) / f"large-{mode}"
                path, base, head = generate_large(dest, args.files, args.changed, args.lines, mode == "dense")
                took = time.perf_counter() - start
                print(f"(generated {args.files} files, {args.changed} changed, {mode}, in {took:.1f} s)")
                label = f"large change, {mode} ({args.changed} files of {args.files}; target < 20 s, < 1 GB)"
                run_review(path, base, head, label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
