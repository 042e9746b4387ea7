"""Benchmark: build the repository index over a generated repository; print the time and counters.

    python3 bench/bench_index.py                    # 5,000 files, 500 of them mention the names
    python3 bench/bench_index.py --files 5000 --mentioning 500 --lines 200 [--dense]

Target (docs, not an assertion): 5,000 files with about 500 mentioning the names in under ~5 s.
The repository is a real git repository read through `GitTree` (one `git cat-file --batch`). The
in-process CPU time excludes git and the parse workers (REVIEWBOT_PARSE_WORKERS=1 parses in-process);
the child CPU time counts both. CPU time is the figure to compare on a busy machine.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reviewbot.change.git import GitTree  # noqa: E402
from reviewbot.lang.build import build_index  # noqa: E402
from tests.gitrepo import Repo  # noqa: E402

# As the pipeline asks: fields and guard operands are parsed for; function names only searched in tests.
NAMES = {"need_rope_kv_cache", "use_kvcache", "RopeStyle"}
TEST_NAMES = NAMES | {"getAttentionConfigs"}

CPP_FUNC = """
AttentionConfigs Model{i}::derive{j}(int64_t tp_size) const {{
    AttentionConfigs config;
    config.head_num = attn_config.head_num / tp_size;
    config.value_{j} = attn_config.value_{j} * {j};
    if (config.rope_config.style == RopeStyle::No && !use_kvcache) {{
        config.need_rope_kv_cache = false;
    }} else if (config.flag_{j}) {{
        RTP_LLM_LOG_INFO("flag %d", {j});
        config.other_{j} = qk_norm ? 1 : 2;
    }}
    return config;
}}
"""

CPP_PLAIN = """
int helper_{i}_{j}(int a, int b) {{
    int s = 0;
    for (int k = 0; k < a; ++k) {{
        s += k * b + {j};
    }}
    return s > 100 ? s : -s;
}}
"""

PY_METHOD = """
    def forward_{j}(self, qkv, kv_cache):
        if self.need_rope_kv_cache and kv_cache is not None:
            qkv = self.rope_op_{j}.forward(qkv, kv_cache)
        elif self.attn_configs.rope_config.style != RopeStyle.No:
            qkv = apply_rope(qkv, self.rope_style)
        return fmha(qkv) if self.use_kvcache else qkv
"""

PY_PLAIN = """
    def compute_{j}(self, values):
        total = 0
        for v in values:
            if v > {j}:
                total += v * {j}
        return total
"""


def _uses(mention: bool, j: int, dense: bool) -> bool:
    # Realistic: a file that mentions a flag does so in a couple of functions; dense: every third one.
    return mention and (j % 3 == 0 if dense else j < 2)


def _cpp(i: int, lines: int, mention: bool, dense: bool = False) -> str:
    funcs: list[str] = []
    j = 0
    while sum(f.count("\n") for f in funcs) < lines:
        funcs.append((CPP_FUNC if _uses(mention, j, dense) else CPP_PLAIN).format(i=i, j=j))
        j += 1
    return '#include "config.h"\n\nnamespace gen {\n' + "".join(funcs) + "}  // namespace gen\n"


def _py(i: int, lines: int, mention: bool, dense: bool = False) -> str:
    methods: list[str] = []
    j = 0
    while sum(m.count("\n") for m in methods) < lines:
        methods.append((PY_METHOD if _uses(mention, j, dense) else PY_PLAIN).format(j=j))
        j += 1
    head = "from gen.ops import RopeStyle, apply_rope, fmha\n\n\n" if mention else "import math\n\n\n"
    return head + f"class Impl{i}:\n    def __init__(self, cfg):\n        self.cfg = cfg\n" + "".join(methods)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--mentioning", type=int, default=500)
    ap.add_argument("--lines", type=int, default=200, help="approximate lines per file")
    ap.add_argument(
        "--dense", action="store_true", help="every third function of a mentioning file uses a name"
    )
    args = ap.parse_args(argv)
    step = max(1, args.files // max(1, args.mentioning))
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo(Path(tmp) / "repo")
        files: dict[str, str | bytes | None] = {}
        for i in range(args.files):
            mention = (i // 2) % step == 0  # pairs of files: one C++ and one Python
            if i % 2:
                files[f"src/mod{i % 40:02d}/model_{i:05d}.cc"] = _cpp(i, args.lines, mention, args.dense)
            else:
                files[f"pkg/mod{i % 40:02d}/impl_{i:05d}.py"] = _py(i, args.lines, mention, args.dense)
        sha = repo.commit(files)
        size = sum(len(str(t)) for t in files.values())
        start = time.perf_counter()
        with GitTree(repo.path, sha) as tree:
            tree.read_many(tree.paths())
        read = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        with GitTree(repo.path, sha) as tree:
            index = build_index(tree, NAMES, test_names=TEST_NAMES)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        workers = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    print(
        f"build_index: {args.files} files ({size / 1e6:.1f} MB), scanned {index.scanned_files}, "
        f"parsed {index.parsed_files}, tests {index.test_files}: {elapsed:.2f} s wall, {cpu:.2f} s CPU in-process "
        f"+ {workers:.2f} s in child processes (parse workers, git) "
        f"(of which reading all files through GitTree alone takes {read:.2f} s) "
        f"-> {len(index.writers('need_rope_kv_cache'))} writers, {len(index.reads('need_rope_kv_cache'))} reads "
        "of need_rope_kv_cache"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
