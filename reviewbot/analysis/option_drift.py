"""A command-line option added with a default that its config field does not have (pure).

Training launchers copy the parsed arguments into config dataclasses by field name (Megatron's
`core_transformer_config_from_args` takes every field of `TransformerConfig` that `args` has). An
option the change adds or re-defaults, whose destination is a field of a config class declared with
another plain default (`--mscale` defaults to `1.0`, `MLATransformerConfig.mscale` to `0.707`), gives
the command line and the Python API two values for one setting: whoever builds the config without the
parser gets the other one, and a fix to one copy leaves the other behind.

Judged only when it is unambiguous: both defaults plain literals (a number, a bool, a string), not
`None`; every config class of the repository that declares the field agrees on its default; the option
is on a line the change added; the option's file names the config class (it imports or builds it:
the copy is there to see). An option whose default reads the field (`default=Config.x`) is one copy,
not two; a program's own parser that never names the class (a load balancer's `--host`, beside the
server's `ServerArgs.host`) sets a setting of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from reviewbot.analysis.envs.parse import same_literal
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import OptionKind
from reviewbot.lang.facts import FieldDefault
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.owners import is_config_name

__all__ = ["added_option_names", "option_copies"]

# A plain literal default: a number, a bool, a quoted string (not None, not a reference or a call).
_PLAIN = re.compile(r"""-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|True|False|"[^"]*"|'[^']*'""")


def _same(a: str, b: str) -> bool:
    """One value however spelled: `1.0` / `1` / `1.`, quotes."""
    try:
        return float(a) == float(b)
    except ValueError:
        return same_literal(a, b)


def _added_options(s: Side) -> Iterable[tuple[str, str, int]]:
    """(destination, default, line) of the argparse options on lines the change added."""
    if s.head is None:
        return
    before = {
        o.name: o.default
        for o in (s.base.options if s.base is not None else ())
        if o.kind is OptionKind.ARGUMENT
    }
    for o in s.head.options:
        if o.kind is OptionKind.ARGUMENT and o.line in s.added and before.get(o.name) != o.default:
            yield o.name, o.default, o.line


def added_option_names(sides: Iterable[Side]) -> set[str]:
    """Destinations of the options the change adds or re-defaults (for the index: their config fields)."""
    return {name for s in sides for name, _, _ in _added_options(s)}


def option_copies(
    sides: list[Side], index: RepoIndex, texts: Mapping[str, str | None]
) -> list[tuple[Side, str, str, int, FieldDefault]]:
    """(side, destination, option default, line, the config field's default) of each added option whose
    config field is declared, by every config class that has it, with one other plain default; `texts`
    are the head texts of the changed files, by path."""
    out: list[tuple[Side, str, str, int, FieldDefault]] = []
    heads = [d for s in sides if s.head_facts is not None for d in s.head_facts.defaults]
    for s in sides:
        if is_test_path(s.path):
            continue
        for name, default, line in _added_options(s):
            if _PLAIN.fullmatch(default.strip()) is None:
                continue
            declared = {
                (d.owner, d.path, d.line): d
                for d in [*heads, *index.defaults(name)]
                if d.field == name and is_config_name(d.owner) and not is_test_path(d.path)
            }
            values = {d.value for d in declared.values()}
            if len(values) != 1:
                continue  # no config field, or classes that disagree among themselves: not one copy
            field = min(declared.values(), key=lambda d: (d.path, d.line))
            if not re.search(rf"\b{re.escape(field.owner)}\b", texts.get(s.path) or ""):
                continue  # the parser never names the class: nothing shows its options are copied there
            if _PLAIN.fullmatch(field.value.strip()) and not _same(field.value, default):
                out.append((s, name, default, line, field))
    return out
