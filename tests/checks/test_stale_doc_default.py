"""stale-doc-default's readers: C++ parse branches and help texts, and how stated values compare
(the whole rule runs on the annotated fixtures, tests/fixtures/checks/stale-doc-default)."""

from __future__ import annotations

from pathlib import Path

from reviewbot.analysis.defaults.cli_help import branches, help_defaults
from reviewbot.analysis.defaults.stale_help import same_value, shown_value

PARSER = """
bool parse(int argc, char ** argv, const std::string & arg, gpt_params & params, int & i, bool & invalid) {
    if (arg == "-b" || arg == "--batch-size") {
        if (++i >= argc) {
            invalid = true;
            return true;
        }
        params.n_batch = std::stoi(argv[i]);
        return true;
    }
    if (arg == "--log-format") {
        if (++i >= argc) {
            invalid = true;
            return true;
        }
        if (std::strcmp(argv[i], "json") == 0) {
            params.log_json = true;
        } else if (std::strcmp(argv[i], "text") == 0) {
            params.log_json = false;
        }
        return true;
    }
    if (arg == "--mirostat-both") {
        params.mirostat = std::stoi(argv[++i]);
        params.mirostat_eta = std::stof(argv[i]);
        return true;
    }
    if (arg == "--no-mmap") {
        params.use_mmap = false;
        return true;
    }
    return false;
}
"""


def test_a_branch_sets_its_field_directly_or_through_a_word_map() -> None:
    got = {b.flags: (b.field, b.direct, b.words) for b in branches(PARSER)}
    assert got[("--batch-size",)] == ("n_batch", True, ())
    assert got[("--log-format",)] == ("log_json", False, (("json", "true"), ("text", "false")))
    # Two fields from one option, or a switch that sets a constant: which default a help means is unknown.
    assert ("--mirostat-both",) not in got and ("--no-mmap",) not in got


def test_an_argument_table_entry_is_a_branch_with_its_handler() -> None:
    text = (
        'add_opt(common_arg({"-b", "--batch-size"}, "N", "logical batch size",\n'
        "    [](common_params & params, int value) { params.n_batch = value; }));\n"
    )
    (b,) = branches(text)
    assert (b.flags, b.field, b.direct) == (("--batch-size",), "n_batch", True)


def test_help_texts_that_hard_code_a_default_are_read_with_their_flags_and_line() -> None:
    text = "\n".join(
        [
            "void usage(const gpt_params & params) {",
            '    options.push_back({ "*", "-grt, --graph-reduce-type", "type (default: %s)", "f32" });',
            '    options.push_back({ "*", "       --log-format {text,json}",',
            "                        // a comment inside the statement",
            '                        "log output format: json or text (default: json)" });',
            '    printf("  -b N, --batch-size N  batch size (default: %d)\\n", params.n_batch);',
            '    printf("  --keep N  tokens to keep (default: 0, -1 = all)\\n");',
            "}",
        ]
    )
    got = [(h.flags, h.stated, h.from_arg, h.line) for h in help_defaults(text)]
    assert got == [
        (("--graph-reduce-type",), "f32", True, 2),
        (("--log-format",), "json", False, 5),
        (("--keep",), "0", False, 7),
    ]  # the batch size's default follows params.n_batch: nothing hard-coded


def test_stated_values_compare_by_kind() -> None:
    assert same_value("512", "512") is True and same_value("512.0", "512") is True
    assert same_value("0", "False") is True and same_value("1", "False") is False
    assert same_value("disabled", "false") is True
    assert same_value("f32", '"f16"') is False and same_value("fcfs", "'fcfs'") is True
    # No value to compare: a word that describes the default, a number for a string, an empty string.
    assert same_value("none", '"f16"') is None
    assert same_value("auto", "512") is None
    assert same_value("x", '""') is None


def test_values_are_shown_as_a_user_writes_them() -> None:
    assert shown_value("0.75f") == "0.75" and shown_value('"f16"') == "f16" and shown_value("2048") == "2048"
    assert shown_value("GGML_TYPE_F16") == "GGML_TYPE_F16"  # no number: left as written


def test_the_suggestion_is_in_the_files_own_terms(tmp_path: Path) -> None:
    # A C++ help text or a README gets no argparse placeholder (issue 23: suggestions in the file's language).
    from tests.checks.fixtures import FIXTURES, review_case

    for case, ends in (("cpp-help", ".cpp"), ("cpp-docs", ".md")):
        found = [
            f
            for f in review_case(FIXTURES / "stale-doc-default" / case, tmp_path / case)
            if f.rule == "stale-doc-default" and f.path.endswith(ends)
        ]
        assert found, case
        for f in found:
            assert "argparse" not in str(f.suggestion) and "%(default)s" not in str(f.suggestion)
