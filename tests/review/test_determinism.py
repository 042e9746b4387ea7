"""Byte-identical reviews: the same change gives the same JSON and markdown, whatever PYTHONHASHSEED and
however many processes parse the repository (apart from `reviewed_at` and `timings_ms`).

The repository is generated here, at a real size (about 2,500 files), around the bundled example's
seed change so every rule has candidates to choose among: many model configs write the seed's flag
and set its guard's inputs (writers, reach), many attention impls read the flag and gate ops that
consume other switches (coupled flags, overloading), many C++ derivations repeat the seed's predicate
(duplicated predicates), and the PR edits a share of them. Over 512 files mention the focused names,
so the index parses them in a process pool when workers are allowed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewbot.example import EXAMPLE_DIR
from reviewbot.lang.parse import MIN_PARALLEL
from reviewbot.report.marker import decode_state
from tests.gitrepo import Repo

ROOT = Path(__file__).resolve().parents[2]
MODELS = 520  # model config builders: writers of the seed's flag and of its guard's inputs
IMPLS = 30  # attention impls reading the flag (the call graph follows at most 48 files)
DERIVE = 240  # C++ derivations repeating the seed's predicate
FILLER = 1600  # unrelated code
CHANGED = 24  # generated files the PR edits (plus the seed's hunk)
TASKS = ("LANGUAGE_MODEL", "DENSE_EMBEDDING", "RERANKER", "BGE_M3")
STYLES = ("Base", "No", "Yarn")

MODEL = """from rtp_llm.config.model_config import ModelConfig, TaskType
from rtp_llm.ops import RopeStyle


class Gen{i}:
    @staticmethod
    def _create_config(ckpt: dict) -> ModelConfig:
        config = ModelConfig(task_type=TaskType.{task})
        config.attn_config.head_num = ckpt.get("num_attention_heads", {heads})
        config.attn_config.rope_config.style = RopeStyle.{style}
        config.attn_config.need_rope_kv_cache = {need}
        return config
"""

# Every impl runs one shared op when the flag is set: its reads are reached from many skipped sites
# at the same depth, so only a total order among those sites makes the evidence stable.
SHARED_OP = """from rtp_llm.models_py.modules.attention.ops import apply_logn_scaling, apply_rope, write_kv_cache


class GenRopeOp:
    def __init__(self, attn_configs) -> None:
        self.attn_configs = attn_configs
        self.use_logn_attn = attn_configs.use_logn_attn

    def forward(self, qkv, kv_cache, seq_len: int):
        if self.use_logn_attn:
            qkv = apply_logn_scaling(qkv, seq_len)
        qkv = apply_rope(qkv, self.attn_configs.rope_config.style)
        write_kv_cache(qkv, kv_cache, self.attn_configs.kv_head_num)
        return qkv
"""

IMPL = """from rtp_llm.models_py.modules.attention.ops import fmha
from rtp_llm.models_py.modules.attention.gen_rope_op import GenRopeOp


class GenImpl{i}:
    def __init__(self, attn_configs) -> None:
        self.attn_configs = attn_configs
        self.rope_op = GenRopeOp(attn_configs)

    def forward(self, qkv, kv_cache, seq_len: int):
        if self.attn_configs.need_rope_kv_cache:
            qkv = self.rope_op.forward(qkv, kv_cache, seq_len)
        return fmha(qkv)
"""

DERIVE_CC = """#include "rtp_llm/cpp/config/ModelConfig.h"
namespace rtp_llm {{

AttentionConfigs GenConfig{i}::derive(int64_t tp_size) const {{
    AttentionConfigs config;
    config.head_num           = attn_config.head_num / tp_size;
    config.rope_config        = attn_config.rope_config;
    config.need_rope_kv_cache = attn_config.need_rope_kv_cache;
    config.fuse_qkv_add_bias  = qk_norm || (config.rope_config.style == RopeStyle::No && !use_kvcache) ? false : true;
{body}
    return config;
}}

}}  // namespace rtp_llm
"""

CHANGE_CC = """    if (config.rope_config.style == RopeStyle::No && !use_kvcache) {{
        config.need_rope_kv_cache = false;
        config.flag_{i} = {value};
    }}"""

FILLER_PY = '''"""Unrelated module {i}."""


def helper_{i}(values):
    total = 0
    for v in values:
        total += v * {k}
    return total
'''

FILLER_CC = """namespace util {{
int scale_{i}(int v) {{ return v * {k}; }}
}}  // namespace util
"""

TEST = """from rtp_llm.models.gen.model_{i} import Gen{i}


def test_gen_{i}_builds() -> None:
    assert Gen{i}._create_config({{}}) is not None
"""


def _overlay(name: str) -> dict[str, str | bytes | None]:
    root = EXAMPLE_DIR / name
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _repository(dest: Path) -> tuple[Path, str, str]:
    base: dict[str, str | bytes | None] = _overlay("base")
    for i in range(MODELS):
        base[f"rtp_llm/models/gen/model_{i}.py"] = MODEL.format(
            i=i,
            task=TASKS[i % len(TASKS)],
            heads=8 + i % 5,
            style=STYLES[i % len(STYLES)],
            need=i % 3 != 0,
        )
    base["rtp_llm/models_py/modules/attention/gen_rope_op.py"] = SHARED_OP
    for i in range(IMPLS):
        base[f"rtp_llm/models_py/modules/attention/gen/impl_{i}.py"] = IMPL.format(i=i)
    for i in range(DERIVE):
        base[f"rtp_llm/cpp/config/gen/derive_{i}.cc"] = DERIVE_CC.format(i=i, body="")
    for i in range(FILLER):
        path = f"rtp_llm/util/gen/u_{i}.py" if i % 2 else f"rtp_llm/cpp/util/gen/u_{i}.cc"
        base[path] = (FILLER_PY if i % 2 else FILLER_CC).format(i=i, k=i % 7 + 1)
    for i in range(0, MODELS, 40):
        base[f"rtp_llm/test/gen/test_model_{i}.py"] = TEST.format(i=i)
    head: dict[str, str | bytes | None] = _overlay("round1")
    for j in range(CHANGED):
        i = j * (DERIVE // CHANGED)
        body = CHANGE_CC.format(i=i, value="true" if j % 2 else "false")
        head[f"rtp_llm/cpp/config/gen/derive_{i}.cc"] = DERIVE_CC.format(i=i, body=body)
    repo = Repo(dest)
    base_sha = repo.commit(base, "base")
    repo.checkout("pr", create=True)
    return dest, base_sha, repo.commit(head, "change")


# One review in a fresh interpreter: what `reviewbot run` does, printing both the JSON and the markdown.
_REVIEW = """
import json, sys
from reviewbot.runner import run_local_round
out = run_local_round(sys.argv[1], sys.argv[2], sys.argv[3], None, None)
json.dump({"json": out.json, "markdown": out.markdown}, sys.stdout, ensure_ascii=False)
"""


def _review(repo: Path, base: str, head: str, seed: str, workers: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "REVIEWBOT_PARSE_WORKERS": str(workers)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", _REVIEW, str(repo), base, head],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def _untimed(doc: Any) -> Any:
    """`doc` without `reviewed_at` and `timings_ms`, wherever they are (the history rows too)."""
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k not in ("reviewed_at", "timings_ms")}
    if isinstance(doc, list):
        return [_untimed(v) for v in doc]
    return doc


def _comparable(run: dict[str, Any]) -> tuple[str, str, Any]:
    """(JSON text, markdown without its state marker, the marker's state), untimed."""
    doc = run["json"]
    markdown = run["markdown"].replace(doc["reviewed_at"], "<reviewed_at>")
    state = decode_state(run["markdown"])
    assert state is not None
    marker = re.compile(r"^<!-- reviewbot:state v\d+ .*-->$", re.MULTILINE)
    assert len(marker.findall(markdown)) == 1
    untimed_state = {**state.__dict__, "history": _untimed([h.to_json() for h in state.history])}
    return json.dumps(_untimed(doc), sort_keys=True, indent=1), marker.sub("", markdown), untimed_state


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    return _repository(tmp_path_factory.mktemp("determinism") / "repo")


def test_three_runs_with_other_hash_seeds_and_parse_workers_are_byte_identical(
    generated: tuple[Path, str, str],
) -> None:
    repo, base, head = generated
    runs = [_review(repo, base, head, seed, workers) for seed, workers in (("0", 1), ("1", 2), ("4242", 3))]
    first = runs[0]["json"]
    # The review is not trivial: every rule class has candidates, and the index used a pool.
    assert first["status"] == "BLOCKING"
    rules = {f["rule"] for f in first["findings"]}
    wanted = {"missing-tests", "unconditional-override", "duplicated-predicate", "guard-ignores-coupled-flag"}
    assert rules >= wanted, f"the generated change no longer exercises {wanted - rules}: adapt the generator"
    assert first["kpi"]["index"]["parsed"] >= 3 * MIN_PARALLEL // 2  # three workers have work
    assert len(runs[0]["markdown"]) <= 65_536
    reference = _comparable(runs[0])
    for run in runs[1:]:
        got = _comparable(run)
        assert got[0] == reference[0], "the JSON differs between runs"
        assert got[1] == reference[1], "the markdown differs between runs"
        assert got[2] == reference[2], "the state marker differs between runs"
