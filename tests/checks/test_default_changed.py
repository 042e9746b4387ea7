"""default-changed: severity and evidence on the fixture cases (the reported lines are held by
test_fixtures), and the words that make a default reach numerics or persistent data."""

from __future__ import annotations

from pathlib import Path

from reviewbot.analysis.defaults.changes import consumer_words, reaches_numerics
from reviewbot.model.finding import Finding, Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "default-changed"


def _findings(case: str, tmp_path: Path) -> dict[tuple[str, int], Finding]:
    return {
        (f.path, f.line): f for f in review_case(FIXTURES / RULE / case, tmp_path / "repo") if f.rule == RULE
    }


def test_identifier_words_split_snake_and_camel_case() -> None:
    assert {"vit", "engine", "use", "fp8", "kv"} <= consumer_words(["VITEngine(use_fp8_kv)"])
    assert reaches_numerics(["VIT_TRT"]) == "trt"
    assert reaches_numerics(["self.visual = VITEngine(vit)"]) == ""  # an engine class alone says nothing
    assert reaches_numerics(["torch.save(state, path)"]) == "save"


def test_an_env_default_that_turns_on_a_tensorrt_engine_is_a_note_naming_the_engine(tmp_path: Path) -> None:
    # A note (P3) like every default flip: the numerics words did not tell the right findings apart
    # held out. The evidence still names what it reaches.
    found = _findings("py-env-default", tmp_path)
    f = found[("models/vision.py", 8)]
    assert f.severity is Severity.P3 and not f.blocking
    assert f.title.startswith('Environment switch `VIT_TRT` now defaults to `"1"` (was `"0"`)')
    assert "gives `True` instead of `False`" in f.title
    assert f.evidence[0] == 'Was `"0"` at base models/vision.py:7.'
    assert "`trt`" in f.evidence[-1]
    assert "VIT_TRT" in f.localized("zh").title and f.localized("zh").title != f.title


def test_a_new_switch_that_defaults_on_is_a_note(tmp_path: Path) -> None:
    # Not a blocker of its own: a new switch on by default is one more default.
    f = _findings("py-new-switch-on", tmp_path)[("core/config.py", 9)]
    assert f.severity is Severity.P3
    assert f.title.startswith("`TrainConfig.cpu_offloading` is a new switch that defaults to `True`")


def test_a_new_switch_whose_checks_reject_configurations_is_p1(tmp_path: Path) -> None:
    # On by default, it turns on a raise for every pipeline-parallel launch: a maintainer must act.
    f = _findings("py-new-switch-rejects", tmp_path)[("core/config.py", 10)]
    assert f.severity is Severity.P1
    assert f.evidence[0] == "On by default, it turns on checks that reject configurations: core/config.py:14."


def test_a_dataclass_default_names_its_consumers(tmp_path: Path) -> None:
    found = _findings("py-field-default", tmp_path)
    flag = found[("config/server_args.py", 8)]
    assert flag.severity is Severity.P3
    assert flag.title.startswith("`ServerArgs.enable_chunked_prefill` now defaults to `True` (was `False`)")
    assert flag.evidence[1].startswith("Nothing in the repository sets it explicitly")
    assert flag.evidence[2] == "Consumed at config/server_args.py:30."
    assert found[("config/server_args.py", 21)].title.startswith(
        "`--port` now defaults to `30001` (was `30000`)"
    )


def test_cpp_values_keep_their_spelling_and_a_new_initialiser_source_is_named(tmp_path: Path) -> None:
    member = _findings("cpp-member-default", tmp_path)
    fused = member[("cpp/AttentionConfig.h", 5)]
    assert fused.title.startswith("`AttentionConfig.use_fused_qkv` now defaults to `true` (was `false`)")
    assert fused.evidence[0] == "Was `false` at base cpp/AttentionConfig.h:4."
    assert member[("cpp/Env.cc", 5)].title.startswith("`USE_FAST_PATH` now defaults to `true` (was `false`)")
    init = _findings("cpp-initialiser", tmp_path / "init")
    (f,) = init.values()
    assert "`params.reserve_ratio_*free_blocks/100` (5*free_blocks/100 with the defaults)" in f.title
    assert "instead of `params.reserve_block_num_` (2)" in f.title


def test_a_new_default_every_shipped_config_already_sets_is_a_note(tmp_path: Path) -> None:
    # Both shipped configs set `dump_folder = "./outputs"`: the change aligns the default with them and
    # none of them moves, and the evidence says so first. They disagree on `log_freq` (10 and 20): no
    # such line there.
    found = _findings("py-shipped-configs", tmp_path)
    dump, freq = found[("pkg/job_config.py", 8)], found[("pkg/job_config.py", 11)]
    assert dump.severity is Severity.P3
    assert dump.evidence[0] == (
        "Every config file the project ships that sets it (2, e.g. train_configs/debug_model.toml:2)"
        ' already sets `"./outputs"`: none of them changes.'
    )
    assert "ships" not in " ".join(freq.evidence)
