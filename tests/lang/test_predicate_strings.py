"""String literals keep their spelling: predicates that differ only inside a literal are different."""

from __future__ import annotations

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.predicate import Atom, loose_key


def test_whitespace_inside_a_literal_is_kept() -> None:
    assert Atom.comparison("mode", "==", '"a b"') != Atom.comparison("mode", "==", '"ab"')
    assert canonical_expr('x == "a  b"') == 'x=="a  b"'


def test_dotted_text_inside_a_literal_is_not_a_receiver_path() -> None:
    first = loose_key(Atom.comparison("cfg.path", "==", '"model.bin"'))
    second = loose_key(Atom.comparison("cfg.path", "==", '"other.bin"'))
    assert first != second
    assert first == loose_key(Atom.comparison("self.path", "==", '"model.bin"'))
