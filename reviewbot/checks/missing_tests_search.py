"""What missing-tests searches a change's tests for: the test lines the change wrote, and the names
(fields, a distinctive function, the guard's inputs) a test of a derivation would mention; whether
the code is practised by tests at all, and whether it sits in a file the change adds.

Pure: the check context in, test lines and names out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.reach.families import model_families
from reviewbot.checks.base import CheckContext
from reviewbot.checks.pinning import constant
from reviewbot.checks.util import is_builder, is_platform_atom, short_function
from reviewbot.lang.index import TestRef, is_test_path
from reviewbot.model.change import FileStatus
from reviewbot.model.finding import Severity

__all__ = [
    "ChangedTest", "changed_tests", "definitions", "guard_inputs", "has_rows", "mentions", "names_model", "new_file",
    "platform_narrowed", "practice", "searched", "severity_for", "tested_by_change",
]  # fmt: skip

_NOISE = frozenset({"self", "this", "config", "cfg", "True", "False", "None", "not", "and", "or"})
_IDENT = re.compile(r"[A-Za-z_]\w*")
_OPTION = re.compile(
    r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"
)  # a dashed long option, `--enable-dp-attention`
_ARCH_SUFFIX = re.compile(r"(?:For[A-Z]\w*|LMHeadModel|Model)$")


@dataclass(frozen=True)
class ChangedTest:
    """A test file the change adds or edits, and the lines of it that changed (with their test functions)."""

    path: str
    lines: tuple[tuple[int, str], ...]


def changed_tests(ctx: CheckContext) -> list[ChangedTest]:
    """The test files of the change with the lines a new or edited test consists of: added lines and
    every line of a function that holds one."""
    out: list[ChangedTest] = []
    for f in sorted(ctx.change.files, key=lambda f: f.path):
        if f.skipped is not None or f.head_text is None or not is_test_path(f.path):
            continue
        added = f.added_lines
        if not added:
            continue
        text = f.head_text.splitlines()
        facts = ctx.head_facts.get(f.path)
        keep: set[int] = set(added)
        if facts is not None:
            for n in added:
                fn = facts.function_at(n)
                if fn is not None:
                    keep.update(range(fn.start_line, fn.end_line + 1))
        out.append(ChangedTest(f.path, tuple((n, text[n - 1]) for n in sorted(keep) if 0 < n <= len(text))))
    return out


def guard_inputs(d: ChangedDerivation) -> list[str]:
    """Field names the guard reads (`use_kvcache`, `style`); enum members and literals left out."""
    a = d.head
    if a.guard is None:
        return []
    names: set[str] = set()
    for atom in a.guard.atoms():
        for m in re.finditer(r"[A-Za-z_][\w.]*", atom.text):
            parts = m.group(0).split(".")
            if parts[0][:1].isupper():
                continue  # `RopeStyle.No`: an enum constant, not an input
            leaf = parts[-1]
            if leaf not in _NOISE and len(leaf) > 2:
                names.add(leaf)
    return sorted(names)


def mentions(tests: list[ChangedTest], names: list[str]) -> list[TestRef]:
    """The changed test lines that name one of `names`, as an identifier or as the command-line option
    an end-to-end test launches with (`"--enable-deepep-moe"` names `enable_deepep_moe`)."""
    wanted = set(names)
    refs: list[TestRef] = []
    for t in tests:
        for n, line in t.lines:
            said = {*_IDENT.findall(line), *(o.replace("-", "_") for o in _OPTION.findall(line))}
            refs.extend(TestRef(t.path, n, line.strip(), w) for w in sorted(wanted.intersection(said)))
    return refs


def names_model(tests: list[ChangedTest], models: list[str]) -> list[TestRef]:
    """The changed test lines that name one of the guard's model architectures by its checkpoint
    (`"moonshotai/Kimi-Linear-48B-A3B-Instruct"` for `KimiLinearForCausalLM`): an end-to-end test of
    that model runs its rows. The architecture's stem must be distinctive (at least 5 letters)."""
    stems = {m: _alnum(_ARCH_SUFFIX.sub("", m)) for m in models}
    refs: list[TestRef] = []
    for t in tests:
        for n, line in t.lines:
            flat = _alnum(line)
            refs.extend(
                TestRef(t.path, n, line.strip(), m)
                for m, stem in stems.items()
                if len(stem) >= 5 and stem in flat
            )
    return refs


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def definitions(ctx: CheckContext) -> Counter[str]:
    """How many functions of the indexed source files carry each short name."""
    return Counter(
        short_function(fn.name)
        for facts in ctx.index.files.values()
        if not is_test_path(facts.path)
        for fn in facts.functions
    )


def new_file(ctx: CheckContext, d: ChangedDerivation) -> bool:
    """The derivation sits in a file the change adds (a new backend, a new model): no configuration
    ran it before, so no shipped behaviour changes under it until something wires it in."""
    f = ctx.change.file(d.head.path)
    return f is not None and f.status is FileStatus.ADDED


def practice(ctx: CheckContext, survived: bool, names: list[str], sev: Severity) -> tuple[Severity, bool]:
    """Is this code tested (a surviving mutant, tests naming it)? With no tree, unknown: a P3 nit."""
    if survived or ctx.index.tests_mentioning(names):
        return sev, True
    return (Severity.P3, True) if ctx.change.head_tree is None else (sev, False)


def severity_for(kind: str, reason: str, in_new_file: bool) -> Severity:
    """P1 for a population that ships; P2 for one named model's rows (a model-support change's own
    adjustments: both such P1s of dev-scan sample 3 were judged not merge-blocking); else a P3 note."""
    if kind != "production" or in_new_file:
        return Severity.P3
    return Severity.P2 if reason == "model" else Severity.P1


_COPY = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


_CONSTRUCTION = re.compile(r"^(?:\w+\.)*[A-Z]\w*\(")
_ALLOCATION = re.compile(r"^(?:torch|np|numpy|cupy|jnp)\.\w+\(")
# Whether one input is given: `config.moe is not None`, `bool(cfg.moe)`, `ptr != nullptr`,
# `opt.has_value()`; C++ values come normalised, `ptr!=None`. Its two rows are the input's own (given or not); nothing is decided here.
_PRESENCE = re.compile(
    r"^(?:not\s+)?[A-Za-z_][\w.]*\s+is\s+(?:not\s+)?None$"
    r"|^bool\(\s*[A-Za-z_][\w.]*\s*\)$"
    r"|^\(?\s*[A-Za-z_][\w.>-]*\s*[!=]=\s*(?:nullptr|NULL|None)\s*\)?$"
    r"|^[A-Za-z_][\w.>-]*\.has_value\(\)$"
)


def has_rows(d: ChangedDerivation) -> bool:
    """Does the derivation have truth-table rows a test could pin? A branch does, and so does a value
    computed from the environment, a condition or a formula in shared config code. A plain copy
    (`params.tp_size = init.tp_size_`) and a construction (`ParallelConfig(...)`) are wiring, a tensor
    allocation (`torch.empty(...)`) is no config at all, an unconditional value in a model's own config
    builder (`config.eos_token_id = 2` in `_create_config`) is that model's data, an unconditional
    literal anywhere (`model_config.async_mode = True`) has one row only, and an unconditional test of
    whether one input is given (`config.moe is not None`) has the input's rows only."""
    a = d.head
    if _CONSTRUCTION.match(a.value) or _ALLOCATION.match(a.value):
        return False  # a config object built from its parts (whichever branch builds it); a buffer
    if a.guard is not None:
        return True
    if is_builder(a.function):
        return False  # a model's own data
    if constant(a.value) is not None:
        return False  # one row, a literal (`model_config.async_mode = True`): nothing to tell apart
    if _PRESENCE.match(a.value.strip()):
        # whether one input is given (`self.moe_enabled = config.moe is not None`): a test can only
        # restate the input (dev-scan sample 13: three P1s on a refactor, judged wrong)
        return False
    return not _COPY.match(a.value)


def searched(open_: list[ChangedDerivation], fn: str, defined: Counter[str]) -> tuple[list[str], list[str]]:
    """(own, names): the derived fields and the function's name when it is distinctive, then those and
    the guards' inputs: what a test of these branches would mention. A test that calls `forward` or
    `derive` says nothing about this branch when many functions share that name; only a distinctive
    function name (defined once) counts as a mention."""
    fields = sorted({g.head.field for g in open_})
    own = [*fields, *([fn] if fn and defined[fn] <= 1 else [])]
    return own, list(dict.fromkeys([*own, *(n for g in open_ for n in guard_inputs(g))]))


def tested_by_change(tests: list[ChangedTest], names: list[str], open_: list[ChangedDerivation]) -> bool:
    """A test the change adds or edits mentions the names, or loads a checkpoint of a guard's model."""
    models = [m for g in open_ for m in model_families(g.head.guard)[0]]
    return bool(mentions(tests, names) or names_model(tests, models))


def platform_narrowed(d: ChangedDerivation) -> bool:
    """The change only added platform tests to the guard of a write it kept (`if is_sm100_supported():`
    becoming `if is_cuda() and is_sm100_supported():`, same value): the rows it changes are those of
    another platform, which a test run on one machine cannot pin (dev-scan sample 13, sglang
    1c1f8a118: judged a nit at most)."""
    if d.head.guard is None:
        return False
    head = {atom.text.strip() for atom in d.head.guard.atoms()}
    for b in d.base:
        if b.value.strip() != d.head.value.strip():
            continue
        before = {atom.text.strip() for atom in b.guard.atoms()} if b.guard is not None else set()
        added = head - before
        if before <= head and added and all(is_platform_atom(t) for t in added):
            return True
    return False
