"""unconditional-override on an environment setting the operator exports (analysis.writes.env_overwrites):
the reported lines are held by test_fixtures; here, what the finding says."""

from __future__ import annotations

from pathlib import Path

from reviewbot.model.finding import Severity
from tests.checks.fixtures import FIXTURES, review_case


def test_an_exported_project_setting_overwritten_names_its_reader(tmp_path: Path) -> None:
    found = [
        f
        for f in review_case(FIXTURES / "unconditional-override" / "py-env-overwrite", tmp_path / "repo")
        if f.rule == "unconditional-override"
    ]
    [f] = [f for f in found if f.line == 13]
    assert (f.path, f.line, f.severity) == ("app/server_args.py", 13, Severity.P2)
    assert f.title.startswith("`APP_TOOL_STRICT_LEVEL` is set through `os.environ` without checking")
    assert f.evidence[0] == (
        "`APP_TOOL_STRICT_LEVEL` is a setting of the project the operator exports; the repository reads it at "
        'app/envs.py:4: `TOOL_STRICT_LEVEL = int(os.getenv("APP_TOOL_STRICT_LEVEL", "1"))`.'
    )
    assert f.evidence[1].startswith(
        'Overwritten at app/server_args.py:13: `os.environ["APP_TOOL_STRICT_LEVEL"] = "2"`'
    )
    assert f.localized("zh").title != f.title
