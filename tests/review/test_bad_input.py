"""Bad input never gives a traceback: a note, coverage below 1.0, and a status that does not look clean."""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.change.patch import parse_patch
from reviewbot.model.change import ChangeSet, SkipReason
from reviewbot.model.review import Status
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.gitrepo import Repo

CLEAN = "def derive(cfg):\n    return cfg\n"


def _review_files(
    tmp_path: Path,
    base_files: dict[str, str],
    head_files: dict[str, str | bytes | None],
    settings: ReviewSettings | None = None,
):  # type: ignore[no-untyped-def]
    repo = Repo(tmp_path / "repo")
    base = repo.commit(base_files, "base")
    head = repo.commit(head_files, "head")
    change = load_change(repo.path, base, head)
    try:
        return review_change(change, settings)
    finally:
        change.close()


def _review_pr(tmp_path: Path, head_files: dict[str, str | bytes | None]):  # type: ignore[no-untyped-def]
    return _review_files(tmp_path, {"pkg/derive.py": CLEAN, "README": "x\n"}, head_files)


def test_binary_file_is_noted_and_lowers_coverage(tmp_path: Path) -> None:
    review = _review_pr(tmp_path, {"assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary"})
    assert any(n.reason is SkipReason.BINARY and n.path == "assets/logo.png" for n in review.notes)
    assert review.kpi["coverage"] < 1.0


def test_five_megabyte_generated_file_is_skipped_and_named(tmp_path: Path) -> None:
    big = "".join(f"GEN_{i} = {i}\n" for i in range(400_000))
    assert len(big) > 5_000_000
    review = _review_pr(tmp_path, {"pkg/generated.py": big, "pkg/derive.py": CLEAN + "\n\nX = 1\n"})
    notes = [n for n in review.notes if n.reason is SkipReason.TOO_LARGE]
    assert notes and notes[0].path == "pkg/generated.py" and "MB" in notes[0].message
    assert review.kpi["coverage"] < 1.0
    # A source file it could not read means it could not see everything: never a clean LGTM.
    assert review.status is Status.INCOMPLETE


def test_unparsable_cpp_file_is_noted_and_review_is_incomplete(tmp_path: Path) -> None:
    broken = "AttentionConfigs ModelConfig::get( const {\n  if (a && ) {{ config.x = ;\n"
    review = _review_pr(tmp_path, {"cpp/Broken.cc": broken})
    notes = [n for n in review.notes if n.reason is SkipReason.UNPARSABLE_CODE]
    assert notes and notes[0].path == "cpp/Broken.cc" and "could not read" in notes[0].message
    assert "1-2" in notes[0].message  # the changed lines that lie in unread code are named
    assert review.status is Status.INCOMPLETE
    assert review.kpi["coverage"] < 1.0


# A real inference-engine source: a CUDA kernel, its launch, an export macro and a macro tree-sitter has
# never heard of, in the same file as the config derivation the change touches.
_ENGINE_BASE = """\
#include "ModelConfig.h"

UNKNOWN_REGISTER_OP(fused_rope, 3) {
    int ??? weird;
}

__global__ void __launch_bounds__(256) ropeKernel(float* __restrict__ out, int n) {
    __shared__ float tile[32];
    out[threadIdx.x] = tile[0];
}

TORCH_API void launch(float* out, int n, cudaStream_t stream) {
    ropeKernel<<<n / 256, 256, 0, stream>>>(out, n);
}

AttentionConfigs ModelConfig::getAttentionConfigs() const {
    AttentionConfigs config;
    config.use_logn_attn = use_logn_attn;
    config.need_rope_kv_cache = true;
    return config;
}
"""
_ENGINE_HEAD = _ENGINE_BASE.replace(
    "    config.need_rope_kv_cache = true;\n",
    "    config.need_rope_kv_cache = true;\n"
    "    if (rope_config.style == RopeStyle::No && !use_kvcache) {\n"
    "        config.need_rope_kv_cache = false;\n"
    "    }\n",
)


def test_a_macro_and_a_cuda_kernel_elsewhere_do_not_hide_the_changed_derivation(tmp_path: Path) -> None:
    path = "rtp_llm/cpp/config/ModelConfig.cc"
    # An older test of the config mentions the field: the project tests this code.
    test = (
        "rtp_llm/cpp/config/test/ModelConfigTest.cc",
        "TEST(ModelConfig, Rope) { EXPECT_TRUE(need_rope_kv_cache); }\n",
    )
    # Embedding-style defaults (no rope, no KV cache): every default configuration takes the new row.
    header = (
        "rtp_llm/cpp/config/ModelConfig.h",
        "enum class RopeStyle { No = 0, Base = 1 };\n"
        "struct RopeConfig { RopeStyle style = RopeStyle::No; };\n"
        "struct ModelConfig { RopeConfig rope_config; bool use_kvcache = false; bool use_logn_attn = false; };\n",
    )
    base = {path: _ENGINE_BASE, test[0]: test[1], header[0]: header[1]}
    review = _review_files(tmp_path, base, {path: _ENGINE_HEAD})
    assert not [n for n in review.notes if n.reason is SkipReason.UNPARSABLE_CODE]
    assert review.status is not Status.INCOMPLETE
    lines = {(f.rule, f.line) for f in review.findings}
    assert ("missing-tests", 20) in lines  # the new branch is found and reviewed
    assert review.truth_tables  # ... down to its truth table


def test_a_change_inside_code_the_parser_cannot_read_is_incomplete_and_named(tmp_path: Path) -> None:
    path = "rtp_llm/cpp/config/ModelConfig.cc"
    head = _ENGINE_BASE.replace("    int ??? weird;\n", "    int ??? weirder;\n")
    review = _review_files(tmp_path, {path: _ENGINE_BASE}, {path: head})
    notes = [n for n in review.notes if n.reason is SkipReason.UNPARSABLE_CODE]
    assert [n.path for n in notes] == [path] and "line(s) 4 " in notes[0].message
    assert review.status is Status.INCOMPLETE


def test_garbage_diff_gives_a_note_and_zero_coverage() -> None:
    files, notes = parse_patch("this is not a diff\n@@ nonsense @@\n+++ ???\n")
    change = ChangeSet(
        base_sha="a" * 40, head_sha="b" * 40, merge_base="a" * 40, files=files, patch_bytes=40, notes=notes
    )
    review = review_change(change)
    assert any(n.reason is SkipReason.UNPARSABLE_DIFF for n in review.notes)
    assert review.kpi["coverage"] == 0.0
    assert review.status is Status.INCOMPLETE


def test_a_crashing_check_is_reported_and_the_round_goes_on(tmp_path: Path) -> None:
    from reviewbot.model.finding import Severity

    class Exploding:
        id = "exploding-check"
        severity = Severity.P3
        summary = "crashes on purpose"

        def run(self, ctx: object) -> list[object]:
            raise RuntimeError("boom")

    repo = Repo(tmp_path / "repo")
    base = repo.commit({"pkg/derive.py": CLEAN}, "base")
    head = repo.commit({"pkg/derive.py": CLEAN + "\n\nLIMIT = 3\n"}, "head")
    change = load_change(repo.path, base, head)
    review = review_change(change, ReviewSettings(extra_checks=[Exploding()]))
    change.close()
    crashed = [n for n in review.notes if n.reason is SkipReason.CHECK_CRASHED]
    assert crashed and "exploding-check" in crashed[0].message and "boom" in crashed[0].message
    assert review.kpi["checks_failed"] == 1 and review.kpi["coverage"] < 1.0
    assert review.status is Status.INCOMPLETE


_EXPORTED = """\
RTP_VISIBLE bool useFusedRope(const ModelConfig& model) {
    bool fused = true;
    if (model.rope_config.style == RopeStyle::No && !model.use_kvcache) {
        fused = false;
    }
    return fused;
}
"""


def test_a_repository_declares_its_own_macros(tmp_path: Path) -> None:

    path = "rtp_llm/cpp/config/Rope.cc"
    plain = _review_files(tmp_path / "plain", {"README": "x\n"}, {path: _EXPORTED})
    settings = ReviewSettings(cpp_macros=("RTP_VISIBLE",))
    declared = _review_files(tmp_path / "declared", {"README": "x\n"}, {path: _EXPORTED}, settings)
    unread = [n for n in plain.notes if n.reason is SkipReason.UNPARSABLE_CODE]
    assert unread and "line(s) 1 " in unread[0].message and plain.status is Status.INCOMPLETE
    assert not [n for n in declared.notes if n.reason is SkipReason.UNPARSABLE_CODE]
    assert declared.status is not Status.INCOMPLETE
