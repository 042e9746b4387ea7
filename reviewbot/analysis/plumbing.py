"""Writes with nothing for a test to pin, by their shape alone: an argument parser's branch, runtime state.

`untested_reach` asks these before sizing a population: a row that is what the user typed, a value no
test can reproduce, an object's private handle left empty or a fallback that only inherits another setting
configures nothing a focused test of the change could fix.

Pure: an assignment in, an answer out.
"""

from __future__ import annotations

import re

from reviewbot.lang.facts import Assignment, Lang

__all__ = ["CMP", "STRING", "parse_table", "state"]

STRING = r"(?:\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')"
CMP = re.compile(r"^(?P<left>.+?)\s*(?P<op>==|!=)\s*(?P<right>.+)$")
_BARE = re.compile(r"^[A-Za-z_]\w*$")
_COPY = re.compile(r"^[A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*)+$")  # another object's field, not a literal
_OPTION = re.compile(r"^--?[A-Za-z][\w-]*$")  # a command-line option's spelling: `-ctk`, `--cache-type-k`
# A value no test can pin: random, a fresh identifier, the clock.
_NONDETERMINISTIC = re.compile(
    r"\b(?:uuid\d?|\w*_uuid|random\.\w+|randint|secrets\.\w+|random_device"
    r"|time\.(?:time|monotonic|perf_counter)\w*|datetime\.now)\b"
)
# A plain read of a declared environment setting: the registry (`envs.py`) holds its default and parsing.
_REGISTRY_READ = re.compile(r"^envs\.[A-Z][A-Z0-9_]*(?:\.get\(\))?$")
_PLAIN_STRING = re.compile(rf"(?<![A-Za-z]){STRING}")  # f-strings keep their calls


def _text_test(atom: str) -> str | None:
    """The string literal a bare name (a parameter or local) is compared with (`arg == "--x"`), or None."""
    m = CMP.match(atom)
    if m is None:
        return None
    left, right = m.group("left").strip(), m.group("right").strip()
    for x, y in ((left, right), (right, left)):
        if _BARE.match(x) and re.fullmatch(STRING, y):
            return y[1:-1]
    return None


def parse_table(a: Assignment) -> bool:
    """A branch of an argument parser: every atom compares a bare name (a parameter or local: the
    option's text) with a string literal (`value == "none"`, `arg == "--no-cont-batching"`), or one
    atom tests an option's spelling (`arg == "-ctk-first" || ...`) and the others only check the text
    the user passed (`p.size() == 2`): either way the row is what the user asked for."""
    if a.guard is None:
        return False
    atoms = [atom.text for atom in a.guard.atoms()]
    if not atoms:
        return False
    tests = [_text_test(atom) for atom in atoms]
    if all(t is not None for t in tests):
        return True
    return any(t is not None and _OPTION.match(t) for t in tests)


_TYPE_TEST = re.compile(r"^(?:not\s+)?isinstance\(\s*(?P<name>[A-Za-z_][\w.]*)\s*,[^()]*\)\s*:?$")


def _normalises(a: Assignment) -> bool:
    """The innermost condition only tests the type of an input the value is built from
    (`if isinstance(p, str): x = (p,) else: x = p`): each branch writes that input, as one type."""
    if a.guard is None or not a.guard_text:
        return False
    m = _TYPE_TEST.match(a.guard_text.strip())
    if m is None or m.end() == 0:
        return False
    name = m.group("name")
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", a.value) is not None


def _tests_target(a: Assignment) -> bool:
    """The guard tests the written target itself, receiver and all (`dft.n_gpu_layers < 0` for
    `dft.n_gpu_layers = ...`), not only a field of the same name elsewhere (`args.n`)."""
    assert a.guard is not None
    target = re.compile(rf"(?<![\w.>]){re.escape(a.target)}(?!\w)")
    return any(target.search(atom.text) for atom in a.guard.atoms())


def state(a: Assignment) -> str:
    """Why the write is no setting a test could pin, or "": a value no test can reproduce (a random
    suffix, a fresh id, the clock), an object's private handle left empty (`self._endpoint = None`: its own
    state; `self._perf = os.environ.get(...)` is still a setting), or a fallback that fills an unset field with another setting's value
    (`if (dft.n_gpu_layers < 0) dft.n_gpu_layers = base.n_gpu_layers;`: the row is "inherit")."""
    if _NONDETERMINISTIC.search(_PLAIN_STRING.sub('""', a.value)):
        return "nondeterministic"
    if (
        a.lang is Lang.PYTHON
        and a.receiver == "self"
        and a.field.startswith("_")
        and not a.field.endswith("__")
        and a.value.strip() == "None"
    ):
        return "private-state"
    if a.guard is None and _REGISTRY_READ.match(a.value.strip()):
        return "registry-read"
    if _normalises(a):
        return "normalise"
    if a.guard is not None and _COPY.match(a.value.strip()) and _tests_target(a):
        return "fill-unset"
    return ""
