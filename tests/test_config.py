"""The `.reviewbot.toml` model: one parser, every section and key known, rule ids checked."""

from __future__ import annotations

import pytest

from reviewbot.checks.registry import KNOWN_RULES
from reviewbot.config import RepoConfigError, parse_repo_config
from reviewbot.errors import UsageError


def test_repo_config_sections() -> None:
    cfg = parse_repo_config(
        '[review]\nchecklists = ["general", "x.yaml"]\ndisabled = ["formatting-noise"]\n'
        'exclude = ["third_party/**"]\n[tests]\ncommand = "make test"\n',
        rules=KNOWN_RULES,
        checklists=["general"],
    )
    assert cfg.checklists == ("general", "x.yaml")
    assert cfg.disabled == frozenset({"formatting-noise"})
    assert cfg.exclude == ("third_party/**",)
    assert cfg.tests is not None and (cfg.tests.command, cfg.tests.timeout) == ("make test", 600.0)
    assert not cfg.tests.junit_configured


def test_opt_in_rules_are_enabled_by_name() -> None:
    cfg = parse_repo_config('[review]\nenabled = ["flag-removed-without-alias"]\n', rules=KNOWN_RULES)
    assert cfg.enabled == frozenset({"flag-removed-without-alias"})
    assert parse_repo_config("").enabled == frozenset()


def test_the_defaults_when_a_section_is_left_out() -> None:
    cfg = parse_repo_config("")
    assert (cfg.checklists, cfg.disabled, cfg.exclude, cfg.tests) == (("general",), frozenset(), (), None)


def test_repo_config_errors_name_the_problem() -> None:
    with pytest.raises(UsageError, match="not valid TOML"):
        parse_repo_config("[review")
    with pytest.raises(RepoConfigError, match=r"\[review\] disabled must be a list of rule ids, not 3"):
        parse_repo_config("[review]\ndisabled = 3\n")
    # A bare string is not a list of one (it would be read letter by letter).
    with pytest.raises(RepoConfigError, match=r"\[review\] disabled must be a list"):
        parse_repo_config('[review]\ndisabled = "formatting-noise"\n')


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[revew]\ndisabled = []\n", "unknown section(s) [revew]; allowed: [review], [tests]"),
        ('[review]\nchecklist = ["general"]\n', "unknown key(s) in [review]: checklist; allowed: checklists"),
        ('[tests]\ncommand = "x"\nshell = "sh"\n', "unknown key(s) in [tests]: shell; allowed: command"),
        ('disabled = ["formatting-noise"]\n', "unknown top-level key(s) disabled"),
        (
            '[review]\ndisabled = ["no-such-rule"]\n',
            "[review] disabled: unknown rule id(s) no-such-rule; known:",
        ),
        (
            '[review]\nenabled = ["flag-removed-without-alias"]\ndisabled = ["flag-removed-without-alias"]\n',
            "[review] flag-removed-without-alias is both enabled and disabled",
        ),
        (
            '[review]\nenabled = ["flag-removed-without-alais"]\n',
            "[review] enabled: unknown rule id(s) flag-removed-without-alais; known:",
        ),
        ('[review]\nchecklists = ["genral"]\n', "unknown checklist(s) genral; bundled: general"),
        ('[review]\nexclude = ["../vendor/**"]\n', "[review] exclude must be a list of relative globs"),
        ('[review]\nexclude = ["/abs/**"]\n', "[review] exclude must be a list of relative globs"),
        ("[tests]\ntimeout = 3\n", "[tests] needs `command"),
        ('[tests]\ncommand = "x"\ntimeout = "3"\n', "[tests] timeout must be a positive number"),
        ('[tests]\ncommand = "x"\njunit_configured = true\n', "unknown key(s) in [tests]: junit_configured"),
        ("tests = 3\n", "[tests] must be a table"),
    ],
)
def test_every_mistake_is_one_line_naming_file_key_and_what_is_allowed(text: str, message: str) -> None:
    with pytest.raises(RepoConfigError) as info:
        parse_repo_config(text, ".reviewbot.toml (base)", rules=KNOWN_RULES, checklists=["general"])
    error = str(info.value)
    assert error.startswith(".reviewbot.toml (base): ") and message in error
    assert "\n" not in error


def test_known_rule_ids_are_those_of_the_registry() -> None:
    names = ", ".join(f'"{r}"' for r in sorted(KNOWN_RULES))
    every = f"[review]\ndisabled = [{names}]\n"
    assert parse_repo_config(every, rules=KNOWN_RULES).disabled == KNOWN_RULES
    # Without a registry (the execution stage reading [tests] only) rule ids are not judged.
    assert parse_repo_config('[review]\ndisabled = ["later-rule"]\n').disabled == {"later-rule"}
