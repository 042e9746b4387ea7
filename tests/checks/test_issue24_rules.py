"""The pure helpers behind undefined-name, env-name-typo, renamed-flag-still-referenced and
validation-rejects-default: which names count as one typo apart, which flags a parser defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbot.analysis.envs.typos import mixed_case, one_edit
from reviewbot.analysis.removals.named_flags import defined_flags, dest, in_comment
from reviewbot.checks.registry import CHECKS
from tests.checks.fixtures import FIXTURES, review_case


@pytest.mark.parametrize(
    ("a", "b", "typo"),
    [
        ("SCHEDULER_RESERVE_RATO", "SCHEDULER_RESERVE_RATIO", True),  # dropped letter
        ("ENABLE_FMHA_KERNL", "ENABLE_FMHA_KERNEL", True),
        ("KVCACHE_SIZE", "KV_CACHE_SIZE", True),  # dropped separator
        ("REUSE_CAChE", "REUSE_CACHE", True),  # case only
        ("PP_SIZE", "TP_SIZE", False),  # a short word: another variable
        ("MODEL_V2_PATH", "MODEL_V1_PATH", False),  # a digit: another variable
        ("USE_CACHE", "USE_CACHE", False),
        ("MAX_BATCH", "MAX_BATCHES", False),  # two edits
        ("GTPQ_BITS", "GPTQ_BITS", True),  # two letters swapped
        ("MODEL_V12", "MODEL_V21", False),  # swapped digits: another variable
        ("TPQ_BITS", "PTQ_BITS", False),  # a swap inside a short word
        ("DLWS_JOB_ID", "DLTS_JOB_ID", False),  # another letter of a vowel-less acronym: another system
        ("NCCL_DEBUG", "NCCL_DEBUF", True),  # the acronym is kept, the word after it misspelled
    ],
)
def test_one_edit(a: str, b: str, typo: bool) -> None:
    assert one_edit(a, b) is typo
    assert one_edit(b, a) is typo


def test_mixed_case_is_a_stray_letter_not_a_lower_case_word() -> None:
    assert mixed_case("SCHEDUlER_RESERVE_RESOURCE_RATIO")
    assert not mixed_case("HF_token")
    assert not mixed_case("SCHEDULER_RATIO")


def test_defined_flags_python_and_cpp() -> None:
    py = 'p.add_argument("--max-len", "-m", type=int)\np.add_argument(\n    "--flash-attn", action="store_true")\nprint("--not-a-flag")\n'
    assert defined_flags(py, "python") == {"--max-len": [1], "--flash-attn": [3]}
    cpp = 'if (arg == "-fa" || arg == "--flash-attn") {}\nadd_opt(common_arg({"-c", "--ctx-size"}, "N"));\nLOG("--help-text");\n'
    assert defined_flags(cpp, "cpp") == {"--flash-attn": [1], "--ctx-size": [2]}
    assert dest("--standalone-embedding-stage") == "standalone_embedding_stage"


def test_the_new_rules_are_registered_with_their_severities() -> None:
    assert {r: CHECKS[r].severity.value for r in ("undefined-name", "validation-rejects-default")} == {
        "undefined-name": "P0",
        "validation-rejects-default": "P1",
    }
    assert CHECKS["env-name-typo"].severity.value == "P2"
    assert CHECKS["renamed-flag-still-referenced"].severity.value == "P2"


def test_every_one_edit_variant_holds_one_of_the_anchors() -> None:
    import random

    from reviewbot.analysis.envs.typos import _edits, anchors

    rng = random.Random(7)
    for _ in range(100):
        name = "".join(rng.choice("ABCDEFGHIJKLMNOP_0123") for _ in range(rng.randint(6, 32)))
        found = anchors(name)
        assert all(any(a in v for a in found) for v in _edits(name)), name


def test_a_copied_name_is_one_inner_word_longer_and_read_into_the_same_local() -> None:
    from reviewbot.analysis.envs.segments import _shorter, _target

    # the first word (the project's prefix) and the last stay: only inner words are dropped
    assert _shorter("MEGATRON_BRIDGE_LOGGING_LEVEL") == {
        "MEGATRON_LOGGING_LEVEL": "BRIDGE",
        "MEGATRON_BRIDGE_LEVEL": "LOGGING",
    }
    assert _target('    env_logging_level = os.getenv("X_Y", None)', "X_Y") == "env_logging_level"
    assert _target('    const char* env_level = std::getenv("X_Y");', "X_Y") == "env_level"
    assert _target('    if os.getenv("X_Y") == "1":', "X_Y") is None


def test_a_flag_generated_from_a_dataclass_field_is_not_gone(tmp_path: Path) -> None:
    # py-generated-flags: the parser became `tyro.cli(JobConfig)`; `Training.steps` still gives
    # `--training.steps`, while `--training.warmup` has no field left and a script still passes it.
    found = review_case(FIXTURES / "renamed-flag-still-referenced" / "py-generated-flags", tmp_path / "repo")
    titles = [f.title for f in found if f.rule == "renamed-flag-still-referenced"]
    assert len(titles) == 1 and titles[0].startswith("`--training.warmup` is no longer a flag")


def test_an_unbound_name_is_one_finding_naming_its_other_uses(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-import-moved", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    [f] = found
    assert (f.path, f.line) == ("engine/kv_store.py", 11)
    assert dict(f.extra)["also"] == "34"  # the bench matches a label there through it
    assert "engine/kv_store.py:34" in f.evidence[-1]


def test_an_unbound_names_severity_follows_who_reaches_it(tmp_path: Path) -> None:
    every = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-reach", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    found = {f.line: f for f in every if f.path == "engine/config.py"}
    assert {n: f.severity.value for n, f in found.items()} == {
        8: "P0",
        12: "P1",
        15: "P3",
        18: "P3",
        22: "P1",  # a log line, but in the constructor: that configuration fails to start
    }
    log, spread = sorted((f for f in every if f.path == "engine/runner.py"), key=lambda f: f.line)
    assert log.severity.value == "P2"  # a log line off the start-up path: the path meant to warn raises
    assert (spread.line, spread.severity.value) == (23, "P2")  # an argument of a log call over lines
    assert (
        found[12].evidence[-1] == "Only the configurations that take the condition around it reach this line."
    )
    assert "`NameError`" in found[15].evidence[-1]


def test_an_underscore_spelling_the_common_parser_still_reads_is_not_gone(tmp_path: Path) -> None:
    case = FIXTURES / "renamed-flag-still-referenced" / "cpp-underscore-spelling"
    found = {
        dict(f.extra)["flag"]
        for f in review_case(case, tmp_path / "repo")
        if f.rule == "renamed-flag-still-referenced"
    }
    # `--ctx_size` reaches `--ctx-size` through common.cpp's `std::replace(..., '_', '-')`; the bench
    # tool's own parser has no such line
    assert found == {"--slots-endpoint-disable", "--n_prompt"}


def test_a_registry_attribute_the_registry_lacks_is_an_attribute_error(tmp_path: Path) -> None:
    # `envs.X` with X missing from the registry module raises AttributeError, not NameError: the title
    # says what the evidence says.
    [f] = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-env-registry", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    assert f.title == (
        "`envs.ENGINE_PREFETCH_PAGES` is read in `prefetch_pages` but `engine/environ.py` declares no "
        "`ENGINE_PREFETCH_PAGES`: `AttributeError` when the line runs."
    )
    assert "NameError" not in f.title and "AttributeError" in f.localized("zh").title


def test_a_namespace_read_no_option_registers_names_the_option_to_add(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-unset-option", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    # `setup` builds the configuration (P0); `validate_args` reads its attribute only under a condition (P1)
    assert sorted((f.path, f.line, f.severity.value) for f in found) == [
        ("trainer/arguments.py", 22, "P1"),
        ("trainer/training.py", 8, "P0"),
    ]
    found.sort(key=lambda f: f.path, reverse=True)
    assert found[0].title.startswith("`args.use_fused_rope` is read in `setup`")
    assert 'add_argument("--use-fused-rope", ...)' in found[0].suggestion
    assert found[0].evidence[-1] == "The same function reads, equally unset: `args.fused_rope_theta`."
    assert "Only the configurations that take the condition around it reach this line." in found[1].evidence


@pytest.mark.parametrize(
    ("path", "line", "commented"),
    [
        ("run.sh", "# Check if --old is in the arguments", True),
        ("run.sh", "python train.py --old  # the old way", False),  # the command passes it
        ("run.sh", 'echo "# --old"', False),  # inside a string
        ("run.sh", "n=$# ; run --old", False),  # `$#` is no comment
        ("cfg.yaml", "args: --old  # legacy", False),
        ("train.py", "# parser passes --old", True),
        ("arg.cpp", "// --old was renamed", True),
        ("arg.cpp", " * the --old flag", True),  # a block comment's line
        ("arg.cpp", 'printf("--old // x");', False),
        ("README.md", "# --old", False),  # a Markdown heading, not a comment
    ],
)
def test_a_flag_named_only_in_a_comment(path: str, line: str, commented: bool) -> None:
    assert in_comment(path, line, line.index("--old")) is commented


def test_a_default_outside_the_choices_names_where_both_are_set(tmp_path: Path) -> None:
    found = {
        f.path: f
        for f in review_case(FIXTURES / "choices-exclude-default" / "py-server-args", tmp_path / "repo")
        if f.rule == "choices-exclude-default"
    }
    server, bench = found["engine/server_args.py"], found["benchmarks/bench_moe.py"]
    assert (server.severity.value, bench.severity.value) == ("P2", "P3")
    assert server.evidence == (
        'The choices at engine/server_args.py:25: `choices=["mxfp4", "bf16"],`.',
        'The default comes from engine/server_args.py:10: `flashinfer_mxfp4_moe_precision: Literal["default", "bf16"] = "default"`.',
    )


def test_a_source_modules_self_test_is_a_note(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-self-test", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    assert [(f.line, f.severity.value) for f in found] == [(12, "P3")]
    assert any('`if __name__ == "__main__":`' in e for e in found[0].evidence)


def test_code_nothing_runs_is_a_note(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-unreferenced", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    # the class Llava builds keeps its severity; a private method nothing calls and a tower only an
    # unnamed class builds are notes, saying why
    assert [(f.line, f.severity.value) for f in found] == [(10, "P0"), (18, "P3"), (26, "P3")]
    assert any("`VisionTower._mask`, a private method" in e for e in found[1].evidence)
    assert any(
        "a method of `TextTower`, which no file of the repository names" in e for e in found[2].evidence
    )


def test_an_option_the_scripts_parser_never_registers(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(FIXTURES / "undefined-name" / "py-unregistered-option", tmp_path / "repo")
        if f.rule == "undefined-name"
    ]
    assert [(f.path, f.line, f.severity.value) for f in found] == [
        ("tools/build_sequences.py", 22, "P0"),
        ("tools/build_sequences.py", 31, "P3"),
    ]
    assert "registers `--path-to-sequences-json`" in found[0].evidence[1]
    assert any("error raised anyway" in e for e in found[1].evidence)
