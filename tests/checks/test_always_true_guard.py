"""always-true-guard: severities and evidence on the fixture cases (the reported lines are held by
test_fixtures)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.model.finding import Finding, Severity
from tests.checks.fixtures import FIXTURES, review_case

RULE = "always-true-guard"


def _findings(case: str, tmp_path: Path) -> dict[int, Finding]:
    return {f.line: f for f in review_case(FIXTURES / RULE / case, tmp_path / "repo") if f.rule == RULE}


def test_constant_guards_are_p0_and_misread_strings_p1(tmp_path: Path) -> None:
    found = _findings("py-env-and-names", tmp_path)
    holder = found[25]
    assert holder.severity is Severity.P0
    assert holder.title.startswith("`envs.USE_MODELSCOPE is True` is always `False`")
    assert holder.evidence == ("Used as an object at config/switches.py:28: `envs.USE_MODELSCOPE.get()`.",)
    assert found[36].severity is Severity.P0 and "always `False`" in found[36].title
    # the comparison quoted as the line writes it, not the facts' canonical form (`·==1`)
    assert found[36].title.startswith('`os.environ.get("USE_FAST_PATH") == 1` is always `False`')
    assert found[42].evidence[0].startswith("`REGISTRY` is bound to `Registry()` at config/switches.py:19")
    assert found[54].title.startswith('`MODE` is always `True`: `MODE` is bound to `"fast"`')
    raw = found[73]
    assert raw.severity is Severity.P1
    assert "`DISABLE_STREAM=0` → '0'" in raw.evidence[0]
    assert found[61].severity is Severity.P1 and "`%`" in found[61].title
    bound = found[82]  # assigned to a field: the finding names the field and the variable it reads
    assert bound.title.startswith("`check_server` takes `STORE_CHECK_SERVER` as a raw environment string")
    assert dict(bound.extra)["field"] == "STORE_CHECK_SERVER"  # the variable a deployment sets
    assert dict(bound.extra)["binding"] == "check_server"  # and the code's own name for it
    assert "binding" not in dict(raw.extra)  # used in place: no name of its own
    # a module-level name and a keyword argument: the facts bind them to nothing, the line names them
    assert found[86].title.startswith(
        "`USE_COMPILED_DAG` takes `ENGINE_USE_COMPILED_DAG` as a raw environment"
    )
    assert found[92].title.startswith("`check_server` takes `STORE_WAIT_FOR_MASTER` as a raw environment")
    assert sorted(found) == [25, 36, 42, 54, 61, 73, 82, 86, 92]
    assert "USE_MODELSCOPE" in holder.localized("zh").title and holder.localized("zh").title != holder.title


def test_a_function_name_tested_for_truth_in_cpp(tmp_path: Path) -> None:
    found = _findings("cpp-function-and-division", tmp_path)
    assert found[8].severity is Severity.P0
    assert (
        found[8].evidence[0]
        == "`useFastPath` is bound to `def useFastPath(...)` at cpp/Shards.cc:3 and never rebound."
    )
    assert sorted(found) == [8, 16]


def test_python_truth_tests_the_code_fixes(tmp_path: Path) -> None:
    found = _findings("py-truthy-tests", tmp_path)
    tuple_assert = found[20]
    assert tuple_assert.severity is Severity.P2  # a validation that never fails: only rejected configs run
    assert tuple_assert.title.startswith('`assert (self.max_elements >= self.dp, f"max_elements')
    assert "never fails" in tuple_assert.title
    operand = found[26]
    assert operand.severity is Severity.P1
    assert operand.title.startswith("`self.builder is None or NotImplementedBuilder` is always true")
    assert operand.evidence[0].startswith("`NotImplementedBuilder` is a class or function (defined or imported at engine/config.py:1)")  # fmt: skip
    assert "'finetune'" in found[32].title
    assert found[37].title.startswith("`self.use_cache` is always true: `use_cache` is a method (defined at engine/config.py:11)")  # fmt: skip
    assert found[43].title.startswith('`self.mode is "serve"` compares identity with a string literal')
    assert dict(found[43].extra)["field"] == "self.mode"  # what is tested, not the literal
    assert sorted(found) == [
        20,
        26,
        32,
        37,
        43,
        54,
    ]  # 54: `layer.use_cache = True` rebinds no method of this class
    assert found[37].localized("zh").title != found[37].title


def test_a_guard_on_a_macro_only_another_source_file_defines(tmp_path: Path) -> None:
    found = _findings("cpp-macro-elsewhere", tmp_path)
    assert sorted(found) == [7]
    guard = found[7]
    assert guard.severity is Severity.P1
    assert guard.title.startswith("`#ifndef GPU_SPLIT_MODE_SUPPORTED` is always true here")
    assert guard.evidence == (
        "`#define GPU_SPLIT_MODE_SUPPORTED` only at common/common.cpp:4: a separate translation unit; "
        "no header, build file or script defines or names it.",
    )


def test_the_suggestion_fits_what_the_operand_is(tmp_path: Path) -> None:
    found = _findings("py-truthy-tests", tmp_path)
    assert "isinstance(x, NotImplementedBuilder)" in found[26].suggestion  # a class: test against it
    assert "x in (..., 'finetune')" in found[32].suggestion  # a literal: compare with each


def test_a_switch_whose_default_is_what_it_stores(tmp_path: Path) -> None:
    # `store_true` with `default=True` (and the mirror image): P2, the value every launch gets is
    # named, and the fix names the destination argparse derives (`dest=`, or the long option's name);
    # P3 in a benchmark script beside the package.
    found = {
        (f.path, f.line): f
        for f in review_case(FIXTURES / RULE / "py-stuck-flags", tmp_path / "repo")
        if f.rule == RULE
    }
    assert sorted(found) == [
        ("benchmarks/bench_gemm.py", 6),
        ("pkg/args.py", 14),
        ("pkg/args.py", 19),
        ("pkg/args.py", 42),  # an existing option whose default flips to what it stores
    ]
    rank0, compile_ = found["pkg/args.py", 14], found["pkg/args.py", 19]
    assert (rank0.severity, compile_.severity) == (Severity.P2, Severity.P2)
    assert "`--metrics.rank_0_only` is always `True`" in str(rank0.title)
    assert dict(rank0.extra)["field"] == "metrics.rank_0_only"
    assert "`--no-compile` is always `False`" in str(compile_.title)
    assert "cannot set it to `True`" in str(compile_.title)  # it is off already: what is lost is on
    assert 'dest="compile_model"' in str(compile_.suggestion)
    assert "Default it to `True`" in str(compile_.suggestion)
    assert found["benchmarks/bench_gemm.py", 6].severity is Severity.P3
    assert "`default=True,` (pkg/args.py:14)" in rank0.evidence[0]  # quoted as written, at its line


def test_the_quoted_lines_are_the_lines_ast_and_git_count() -> None:
    # A form feed is a line break to `str.splitlines`, not to `ast` or git: quotes stay on their lines.
    import ast

    from reviewbot.analysis.stuck_flags import _quote, _stuck

    text = "import argparse\n\x0c\np = argparse.ArgumentParser()\np.add_argument(\n    '--use-cache',\n    default=True,\n    action='store_true',\n)\n"
    [(option, _, _)] = _stuck(ast.parse(text))
    assert _quote(text, option) == ((5, "'--use-cache',"), (6, "default=True,"), (7, "action='store_true',"))


def test_a_registry_entry_read_raw_cites_the_guard_that_tests_it(tmp_path: Path) -> None:
    [(line, f)] = _findings("py-env-registry-entry", tmp_path).items()
    assert (f.path, line, f.severity) == ("pkg/envs.py", 9, Severity.P1)
    assert f.evidence[0] == (
        "The registry entry returns this raw string; the change tests it as a bool at pkg/artifacts.py:10."
    )
    assert "`APP_HAS_CUBIN=0` → '0'" in f.evidence[1]
    assert dict(f.extra)["field"] == "APP_HAS_CUBIN"


def test_a_function_tested_without_its_call_quotes_a_call_of_it(tmp_path: Path) -> None:
    found = _findings("py-uncalled-calls", tmp_path)
    guard, assertion = found[13], found[36]
    assert guard.severity is Severity.P1 and assertion.severity is Severity.P2
    assert "`current_platform.is_cuda` is always true" in guard.title
    # the call that proves it is a function, quoted as written, from the code before the tests
    assert guard.evidence[0].startswith(
        'The repository calls it: `return "cuda" if current_platform.is_cuda() else "cpu"` (pkg/worker.py:5)'
    )
    assert guard.suggestion == "Call it: `current_platform.is_cuda()`."
    assert "`is_hip` is always true" in found[17].title


def test_an_option_parsed_with_bool_cannot_be_turned_off(tmp_path: Path) -> None:
    found = _findings("py-bool-type", tmp_path)
    assert sorted(found) == [11]
    f = found[11]
    assert f.severity is Severity.P2
    assert "`--onnx-safe false` and `--onnx-safe 0` give `True`" in f.title
    # the option string and the `type=bool` line, as written
    assert f.evidence == (
        'As written: `"--onnx-safe",` (engine/args.py:9), `type=bool,` (engine/args.py:11).',
    )
