"""The front ends and the index on the bundled example (examples/pr1361), read from its work tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.change.git import GitTree
from reviewbot.example import ExampleRepo, build_example
from reviewbot.lang.build import build_index
from reviewbot.lang.facts import AssignKind, Lang
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import And, Or, loose_key
from tests.gitrepo import git
from tests.lang.helpers import DirTree

MODEL_CONFIG = "rtp_llm/cpp/config/ModelConfig.cc"
FUNCTION = "ModelConfig::getAttentionConfigs"
NAMES = {"need_rope_kv_cache", "getAttentionConfigs", "use_kvcache", "style", "RopeStyle", "rope_config"}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleRepo:
    return build_example(tmp_path_factory.mktemp("ex") / "pr1361")


@pytest.fixture(scope="module")
def round1(example: ExampleRepo) -> RepoIndex:
    git(example.path, "checkout", "-q", example.round1)
    try:
        return build_index(DirTree(example.path), NAMES)
    finally:
        git(example.path, "checkout", "-q", "main")


def test_new_guarded_write_matches_the_ternary_sub_predicate(round1: RepoIndex) -> None:
    facts = round1.files[MODEL_CONFIG]
    [write] = [a for a in facts.assignments if a.field == "need_rope_kv_cache" and a.value == "False"]
    assert (write.function, write.kind, write.target) == (
        FUNCTION,
        AssignKind.PLAIN,
        "config.need_rope_kv_cache",
    )
    assert write.guard is not None and write.guard_line is not None
    assert write.guard_text == "config.rope_config.style == RopeStyle::No && !use_kvcache"
    assert write.branch_start == write.guard_line and write.branch_end == write.guard_line + 2
    assert write.comment_above.startswith("Skip rope+bias+transpose kernel entirely")
    assert not write.logs_in_branch and not write.checks_target_first
    off, on = [
        a for a in facts.assignments if a.field == "fuse_qkv_add_bias" and a.kind is AssignKind.TERNARY
    ]
    assert (off.value, on.value) == ("False", "True")
    # The `false` arm runs when `qk_norm || (style == No && !use_kvcache)`; the new guard is its conjunct.
    assert isinstance(off.guard, Or)
    [conjunct] = [p for p in off.guard.args if isinstance(p, And)]
    assert loose_key(conjunct) == loose_key(write.guard)
    assert loose_key(on.guard) != loose_key(write.guard)  # type: ignore[arg-type]


def test_the_predicate_is_written_twice_in_cpp_and_once_in_python(round1: RepoIndex) -> None:
    write = next(
        a for a in round1.writers("need_rope_kv_cache") if a.value == "False" and a.path == MODEL_CONFIG
    )
    assert write.guard is not None
    uses = round1.predicate_uses(loose_key(write.guard))
    in_function = [u for u in uses if u.path == MODEL_CONFIG and u.function == FUNCTION]
    assert len(in_function) == 2 and write.guard_line in {u.line for u in in_function}
    [python_use] = [u for u in uses if u.lang is Lang.PYTHON]
    assert python_use.path == "rtp_llm/config/model_config.py"
    assert python_use.function == "ModelConfig.fuse_qkv_add_bias"
    assert python_use.text == "self.attn_config.rope_config.style == RopeStyle.No and not self.use_kvcache"


def test_reads_of_the_flag_and_what_they_gate(round1: RepoIndex) -> None:
    sites = {r.path.rsplit("/", 1)[-1]: r for r in round1.reads("need_rope_kv_cache") if r.in_condition}
    aiter, flashinfer = sites["aiter.py"], sites["py_flashinfer_mha.py"]
    assert aiter.alias is None and aiter.function == "AiterPrefillImpl.forward"
    assert [g.calls for g in aiter.gated] == [("rope_kvcache_op", "forward")]
    assert aiter.gated[0].text == "fmha_input = self.rope_kvcache_op.forward(qkv, kv_cache, seq_len)"
    assert flashinfer.alias == "self.need_rope_kv_cache" and flashinfer.alias_line is not None
    assert flashinfer.alias_line < flashinfer.line
    assert [g.calls for g in flashinfer.gated] == [("kv_cache_write_op", "forward")]


def test_writers_defaults_and_enums(round1: RepoIndex) -> None:
    writers = {(w.path, w.kind) for w in round1.writers("need_rope_kv_cache")}
    assert ("rtp_llm/models/bert.py", AssignKind.PLAIN) in writers
    assert ("rtp_llm/cpp/pybind/ConfigInit.cc", AssignKind.BINDING) in writers
    assert (MODEL_CONFIG, AssignKind.PLAIN) in writers
    defaults = {
        (d.owner, d.field, d.value, d.lang)
        for f in ("need_rope_kv_cache", "style", "use_kvcache")
        for d in round1.defaults(f)
    }
    assert ("AttentionConfigs", "need_rope_kv_cache", "True", Lang.CPP) in defaults
    assert ("AttentionConfigs", "need_rope_kv_cache", "True", Lang.PYTHON) in defaults
    assert ("RopeConfig", "style", "RopeStyle.No", Lang.CPP) in defaults
    assert ("ModelConfig", "use_kvcache", "True", Lang.CPP) in defaults
    assert round1.enum_members("RopeStyle")[0] == "No"
    [derived] = [w for w in round1.writers("use_kvcache") if w.lang is Lang.PYTHON]
    assert (
        derived.value == "task_type==TaskType.LANGUAGE_MODEL"
        and derived.function == "ModelConfig.use_kvcache"
    )


def test_tests_mentioning_the_flag_appear_only_in_round2(example: ExampleRepo, round1: RepoIndex) -> None:
    assert round1.tests_mentioning(["need_rope_kv_cache", "getAttentionConfigs"]) == []
    assert {r.path for r in round1.tests_mentioning(["use_kvcache"])} == {"rtp_llm/test/test_model_config.py"}
    with GitTree(example.path, example.round2) as tree:
        round2 = build_index(tree, NAMES)
    refs = round2.tests_mentioning(["need_rope_kv_cache", "getAttentionConfigs"])
    assert {r.path for r in refs} == {"rtp_llm/cpp/config/test/attention_configs_test.cc"}
    assert any(r.name == "getAttentionConfigs" and "getAttentionConfigs(1)" in r.text for r in refs)


def test_git_tree_and_work_tree_give_the_same_index(example: ExampleRepo, round1: RepoIndex) -> None:
    with GitTree(example.path, example.round1) as tree:
        batched = build_index(tree, NAMES)
    assert sorted(batched.files) == sorted(round1.files)
    # The git tree reads only what `git grep` finds (the work tree reads every candidate).
    assert batched.parsed_files == round1.parsed_files
    assert batched.scanned_files <= round1.scanned_files
    assert batched.files[MODEL_CONFIG] == round1.files[MODEL_CONFIG]


def test_index_counts(round1: RepoIndex, example: ExampleRepo) -> None:
    sources = [p for p in DirTree(Path(example.path)).paths() if p.endswith((".py", ".cc", ".h"))]
    assert round1.scanned_files == len(sources)
    assert 0 < round1.parsed_files < round1.scanned_files  # the __init__.py files mention no name
    assert round1.test_files == 1
