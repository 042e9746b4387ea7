"""Guards, validations and derivations that a change removes (pure): base against head, per function.

Three shapes, each in a function the change touches and that still exists in the head:

- a **dropped guard**: a statement that ran under a condition at base runs under fewer conditions in
  the head (`if os.environ.get("OLD"): os.environ["NEW"] = ...` -> the same write, unguarded). The head
  statement is one the change rewrote (an added line), the same text in the same function, and its
  conditions are a strict subset of the old ones (a condition that was only rewritten is not dropped);
- a **removed validation**: a `raise` / `throw` under a condition, an `assert`, a check macro
  (`FT_CHECK`, `TORCH_CHECK`) on removed lines, with no validation left in the same function's
  rewritten lines and no validation of the same condition anywhere in the head's changed files;
- a **removed derivation**: a write of a field (`config.x = ...`, `self.x = ...`, a member) whose value
  or guard depends on something, or an environment write (`os.environ["NEW"] = os.environ.get("OLD")`),
  on removed lines, with no write of the same field left in the function and none elsewhere in the head
  with the same value or the same conditions (a derivation that moved is not removed).

Constructors' constant declarations (`self.x = False` in `__init__`) are defaults, judged by
`default-changed`, not derivations.

The first shape is found in `analysis.removals.dropped`; the records are in `analysis.removals.records`
(re-exported here) and the questions both ask of a statement in `analysis.removals.terms`.
"""

from __future__ import annotations

import re

from reviewbot.analysis.derive import derivation_writes
from reviewbot.analysis.removals.dropped import dropped_conditions, dropped_guards, flag_of
from reviewbot.analysis.removals.records import Removal, RemovalKind
from reviewbot.analysis.removals.terms import about_config, mentioned_names, touches, words
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import Clause, ClauseKind, Clauses
from reviewbot.lang.env import env_sources
from reviewbot.lang.facts import Assignment, FileFacts
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.owners import is_constant_value, is_init_function

__all__ = ["RemovalKind", "Removal", "removals", "removal_names", "subclasses"]

_UNIMPLEMENTED = re.compile(
    r"(?i)NotImplemented|UNIMPLEMENTED|not implemented|not yet implemented|^assert\s*\(?\s*(?:False|0)\s*\)?$"
    # a limitation of the implementation, lifted when the pull request adds the support:
    # `raise ValueError("Currently only TP size 1 is supported ...")`, "... is not supported yet"
    r"|\bcurrently only\b|\bnot (?:yet )?supported\b|\bis only supported\b|\bunsupported\b"
)


def _head_validations(heads: list[Side]) -> set[tuple[ClauseKind, frozenset[str]]]:
    """Validations of the head's changed files, by condition and by statement (a raise with the same
    message under a rewritten condition moved too). Once per change, not once per changed file."""
    return {
        key
        for t in heads if t.head is not None for h in t.head.clauses if h.kind.validates
        for key in ((h.kind, h.guard_atoms if h.guards else frozenset({h.text})), (h.kind, frozenset({h.text})),
                    (h.kind, frozenset({_receivers_aside(h.text)})))
    }  # fmt: skip


# The object a check starts from (`config["tp"]`, `args.tp`, `cfg->tp`): renamed when a check moves.
_RECEIVER = re.compile(r"(?<![\w.>\"'])[A-Za-z_]\w*(?=\s*(?:\[|\.|->))")


def _receivers_aside(text: str) -> str:
    """A check's text with the object it starts from left out: `CHECK(config["tp"].is<int64_t>())` in
    one function and `CHECK(model_config["tp"].is<int64_t>())` in another are one check that moved."""
    return "\x00" + _RECEIVER.sub("_", text)


def _validations(s: Side, elsewhere: set[tuple[ClauseKind, frozenset[str]]]) -> list[Removal]:
    assert s.base is not None and s.head is not None
    out: list[Removal] = []
    live = {h.function for h in s.head.clauses}
    for c in s.base.clauses:
        if not c.kind.validates or not any(n in s.removed for n in range(c.line, c.end_line + 1)):
            continue
        if not c.function or c.function not in live or _rewritten(c, s) or _downgraded(c, s):
            continue
        if _type_check_reparsed(c, s):
            continue  # `CHECK(config["top_p"].is<double>())` gone, `"top_p"` now read by a typed lookup
        key = (c.kind, c.guard_atoms if c.guards else frozenset({c.text}))
        moved = {(c.kind, frozenset({c.text})), (c.kind, frozenset({_receivers_aside(c.text)}))}
        if key in elsewhere or moved & elsewhere:
            continue  # the same validation, moved (an assert or raise re-nested under other conditions)
        if not about_config(c, s) or _UNIMPLEMENTED.search(c.text):
            continue  # a tensor's shape, a local's value, a "not implemented yet": not a configuration rule
        if _gone(c, s):
            continue  # what it validated (a local, a field, a switch) went with it
        first = min(n for n in [*(g.line for g in c.guards), c.line] if n in s.removed or n == c.line)
        lost = tuple(g.spelled for g in c.guards) or (c.text,)
        out.append(
            Removal(RemovalKind.VALIDATION, s.path, s.head_line(first), s.old_path, (first, c.end_line), c.function,
                    c.text, lost, names=mentioned_names(c))
        )  # fmt: skip
    return out


# A warning in either language: `warnings.warn(`, `logger.warning(`, `LOG(WARNING)`, `TM_LOG_WARNING(`.
_WARNING = re.compile(r"\bwarn(?:ings)?\.warn\(|\.warn(?:ing)?\(|\bWARN(?:ING)?\b|_WARN(?:ING)?\(")


def _downgraded(c: Clause, s: Side) -> bool:
    """The change turned the validation into a warning where it stood (`raise ValueError("...")` ->
    `warnings.warn("...")` under the same `if`): a decision to let those configurations run, with a
    message, not a check lost by accident."""
    at = s.head_line(c.line)
    return any(abs(n - at) <= 3 and _WARNING.search(text) is not None for h in s.hunks for n, text in h.added)


# A JSON value's type check: `config["top_p"].is<double>()` (picojson), `j["n"].is_number()` (nlohmann).
_JSON_TYPE_CHECK = re.compile(r"""\[\s*"([^"]+)"\s*\]\s*(?:\.|->)\s*is(?:<|_\w+\()""")


def _type_check_reparsed(c: Clause, s: Side) -> bool:
    """A JSON field's type check removed while lines the change added still read the field by its key
    (a typed lookup or a typed parameter took its place): the parsing moved, the check with it."""
    keys = _JSON_TYPE_CHECK.findall(c.text)
    added = [text for h in s.hunks for _, text in h.added]
    return bool(keys) and all(any(f'"{k}"' in t for t in added) for k in keys)


def _tested(c: Clause, s: Side) -> set[str]:
    """The names a validation tests: those of its removed conditions (else of the statement itself),
    and the environment variables they read."""
    removed = [g.text for g in c.guards if g.line in s.removed] or [c.text]
    return set(words(*removed)) | {n for t in removed for n in env_sources(t)}


# A validation's message: a string literal long enough to be the author's own words, not a key.
_MESSAGE = re.compile(r"""(["'])((?:(?!\1).){12,}?)\1""")


def _messages(text: str) -> set[str]:
    return {m.group(2) for m in _MESSAGE.finditer(text) if " " in m.group(2)}


def _rewritten(c: Clause, s: Side) -> bool:
    """The same function validates the same names, or says the same message, in lines the change
    wrote: a rewritten validation (`is not None` -> `== "1"`, a new message; a pydantic v1 validator's
    `if "b" in values and v > values["b"]: raise ValueError("a must be less than b")` -> v2's
    `assert self.a <= self.b, "a must be less than b"`), not a removed one."""
    assert s.head is not None
    tested, said = _tested(c, s), _messages(c.text)
    for h in s.head.clauses:
        if h.function != c.function or not h.kind.validates or not touches(h, s.added):
            continue
        if tested & _tested_head(h) or said & _messages(h.text):
            return True
    return False


def _tested_head(h: Clause) -> set[str]:
    texts = [g.text for g in h.guards] or [h.text]
    return set(words(*texts)) | {n for t in texts for n in env_sources(t)}


def _locals(facts: FileFacts | None, function: str) -> set[str]:
    """Names the function assigns as locals (not fields)."""
    if facts is None:
        return set()
    fn = {f.name for f in facts.functions if f.name.replace("::", ".") == function.replace("::", ".")}
    return {a.target for a in facts.assignments if a.function in fn and not _field_write(a)}


def _gone(c: Clause, s: Side) -> bool:
    """The validation tested locals of its function that the head no longer computes (`if not
    async_mode: raise ...` where `async_mode = ...` went too): what it validated went with it."""
    tested = _tested(c, s)
    before = _locals(s.base_facts, c.function)
    return bool(tested) and tested <= before and not (tested & _locals(s.head_facts, c.function))


def _field_write(a: Assignment) -> bool:
    """A write of a field (not a local): `cfg.x`, `self.x`, a C++ member."""
    return "." in a.target or bool(a.receiver) or a.owner_via.value == "self"


def _derivation(a: Assignment) -> bool:
    if not _field_write(a):
        return False
    if a.value == a.field or a.value.endswith("." + a.field):
        return False  # `ModelConfig(x=cfg.x)`, `self.x = cfg.x`: a value passed along, not derived
    if is_init_function(a.function) and a.guard is None and is_constant_value(a.value):
        return False  # a constructor's declaration: a default, not a derivation
    return a.guard is not None or not is_constant_value(a.value)


def _guard_atoms(a: Assignment) -> frozenset[str]:
    return frozenset({a.guard.key}) if a.guard is not None else frozenset()


_DOTTED = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)")


def _shape(value: str) -> str:
    """A value without its receivers: `params.gpt_init_parameter.nccl_ip_` and `gpt_init_params.nccl_ip_`
    read the same field."""
    return _DOTTED.sub(lambda m: m.group(1), value)


def _moved(a: Assignment, heads: list[Side], index: RepoIndex) -> bool:
    """The head writes the same field with the same value (receivers aside) or under the same guard."""
    writes = [
        w for t in heads if t.head_facts is not None for w in t.head_facts.assignments if w.field == a.field
    ]
    writes += index.writers(a.field)
    shape = _shape(a.value)
    return any(
        w.value == a.value
        or _shape(w.value) == shape
        or (a.guard is not None and _guard_atoms(w) == _guard_atoms(a))
        for w in writes
    )


def _head_env_writes(heads: list[Side]) -> set[str]:
    """The environment variables the head's changed files write (once per change)."""
    return {
        h.env_name
        for t in heads
        if t.head is not None
        for h in t.head.clauses
        if h.kind is ClauseKind.ENV_WRITE
    }


def _derivations(s: Side, heads: list[Side], kept: set[str], index: RepoIndex) -> list[Removal]:
    assert s.base_facts is not None and s.head_facts is not None and s.base is not None and s.head is not None
    return [
        *_field_derivations(s, s.base_facts, s.head_facts, heads, index),
        *_env_derivations(s, s.base, s.head, kept, index),
    ]


def _field_derivations(
    s: Side, base: FileFacts, head: FileFacts, heads: list[Side], index: RepoIndex
) -> list[Removal]:
    """Removed derivations (field writes the derivation rules see) whose field is still read, in a
    function that is still there, not moved elsewhere nor renamed."""
    out: list[Removal] = []
    live = s.head_functions()
    still = {(a.function, a.field) for a in head.assignments}
    # The same value now written to another field in the same function: a renamed target, not a removal.
    renamed = {(a.function, a.value) for a in head.assignments if a.line in s.added}
    # The derivations of the file as the derivation rules see them (config owners' fields, switches),
    # by their field write: a removed write of a weight, a response or a helper object is not one.
    derived = {(d.via_line or d.line, d.field) for d, _ in derivation_writes(base)}
    for a in base.assignments:
        if (a.line, a.field) not in derived:
            continue
        lines = range(a.stmt_start or a.line, (a.stmt_end or a.line) + 1)
        if not _derivation(a) or not all(n in s.removed for n in lines) or a.kind.value == "binding":
            continue
        if (
            not a.function
            or a.function not in live
            or (a.function, a.field) in still
            or _moved(a, heads, index)
        ):
            continue
        if (a.function, a.value) in renamed or not _read_in_head(a.field, index):
            continue
        lost = (a.guard_text,) if a.guard is not None and a.guard_text else ()
        first = a.guard_line if a.guard_line is not None and a.guard_line in s.removed else lines[0]
        out.append(
            Removal(RemovalKind.DERIVATION, s.path, s.head_line(first), s.old_path, (first, lines[-1]), a.function,
                    a.text or f"{a.target} = {a.value}", lost, target=a.target,
                    names=(a.field,))
        )  # fmt: skip
    return out


def _env_derivations(
    s: Side, base: Clauses, head: Clauses, kept: set[str], index: RepoIndex
) -> list[Removal]:
    """Removed environment writes (compatibility shims): `os.environ["NEW"] = os.environ.get("OLD")`;
    `kept`: the variables the head still writes."""
    out: list[Removal] = []
    live_clauses = {h.function for h in head.clauses}
    for c in base.clauses:
        if c.kind is not ClauseKind.ENV_WRITE or c.env_name in kept or c.function not in live_clauses:
            continue
        if not _read_in_head(c.env_name, index):
            continue
        if not all(n in s.removed for n in range(c.line, c.end_line + 1)):
            continue
        first = min([g.line for g in c.guards if g.line in s.removed] + [c.line])
        out.append(
            Removal(RemovalKind.DERIVATION, s.path, s.head_line(first), s.old_path, (first, c.end_line), c.function,
                    c.text, tuple(g.spelled for g in c.guards), target=c.env_name,
                    names=(c.env_name, *c.env_sources))
        )  # fmt: skip
    return out


def _read_in_head(name: str, index: RepoIndex) -> bool:
    """Something outside the tests still reads the field: a derivation nobody reads was dead."""
    return any(not is_test_path(r.path) for r in index.reads(name)) or any(
        not is_test_path(e.path) for e in index.env_reads(name)
    )


# Kernel sources: launch parameters set per call (`params.multi_block_mode = ...`), not configuration.
_KERNEL_DIRS = frozenset({"kernels", "kernel", "cuda_kernels", "cutlass_kernels", "cutlass_extensions"})


def _kernel_code(path: str) -> bool:
    return any(part.lower() in _KERNEL_DIRS for part in path.split("/")[:-1])


def removals(sides: list[Side], index: RepoIndex) -> list[Removal]:
    """Every removed guard, validation and derivation of the change, by path and line."""
    out: list[Removal] = []
    heads = [s for s in sides if s.head is not None]
    elsewhere, kept = _head_validations(heads), _head_env_writes(heads)
    for s in sides:
        if s.base is None or s.head is None or s.base_facts is None or s.head_facts is None:
            continue
        if _kernel_code(s.path):
            continue
        out += dropped_guards(s, index)
        out += _validations(s, elsewhere)
        out += _derivations(s, heads, kept, index)
    return sorted(out, key=lambda r: (r.path, r.line, r.kind.value, r.text))


def _bases(cls: str, index: RepoIndex) -> set[str]:
    out: set[str] = set()
    frontier = [cls]
    while frontier and len(out) < 64:
        for o in index.owners(frontier.pop()):
            for b in o.bases:
                if b not in out:
                    out.add(b)
                    frontier.append(b)
    return out


def subclasses(cls: str, index: RepoIndex) -> list[str]:
    """The indexed classes that derive from `cls`, directly or not (the models that run its constructor)."""
    if not cls:
        return []
    return sorted(o for o in index.family(cls) if o != cls and cls in _bases(o, index))


def removal_names(sides: list[Side]) -> set[str]:
    """What the index must know about to judge the removals: written fields and the classes whose
    constructors lost a guard (their subclasses say how many models run it)."""
    names: set[str] = set()
    for s in sides:
        if s.base_facts is None:
            continue
        for a in s.base_facts.assignments:
            if a.line in s.removed and _field_write(a):
                names.add(a.field)
        if s.base is None or s.head is None:
            continue
        for c, _, lost in dropped_conditions(s):
            names.update(f for f in map(flag_of, lost) if f)
            parts = c.function.replace("::", ".").split(".")
            if is_init_function(c.function) and len(parts) >= 2:
                names.add(parts[-2])
    return names
