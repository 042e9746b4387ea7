"""analysis.unset_attributes: which `self.X` reads are reported, and the limits that keep generated code out."""

from __future__ import annotations

from types import SimpleNamespace

from reviewbot.analysis.unset_attributes import unset_attributes
from tests.lang.helpers import GrepTree


def _run(body: str, added: range) -> list[str]:
    text = f"class Args:\n    def derive(self):\n{body}"
    side = SimpleNamespace(path="pkg/args.py", added=frozenset(added))
    found = unset_attributes([side], {"pkg/args.py": text}, GrepTree({"pkg/args.py": text}))  # type: ignore[list-item]
    return [a.name for a in found]


def test_a_read_nothing_sets_is_reported_once() -> None:
    body = "        if self.decrypted_config_file:\n            return self.decrypted_config_file\n"
    assert _run(body, range(3, 5)) == ["decrypted_config_file"]


def test_generated_lines_and_bulk_edits_are_not_judged() -> None:
    long_guard = "        if " + " and ".join(f"self.v{j}" for j in range(60)) + ":\n            pass\n"
    assert _run(long_guard, range(3, 5)) == []  # a line over 400 characters
    many = "".join(f"        x = self.field_{j}\n" for j in range(21))
    assert _run(many, range(3, 24)) == []  # more than 20 unset names in one change
