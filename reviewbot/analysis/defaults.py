"""Defaults that a change flips (pure): the value every deployment that never set something now gets.

Compared per changed file, before and after (`analysis.sides`):

- field defaults (`facts.FieldDefault`, `facts.FieldDecl.default`): a C++ member initialiser
  (`bool use_x = false;`), a Python class / dataclass default (`use_x: bool = False`), a constant an
  `__init__` assigns unconditionally (`self.use_x = False`) — same owner and field on both sides, a
  changed line, another value;
- environment defaults (`analysis.envs.default_changes`): `os.environ.get("X", "0") == "1"` with `"1"`;
- option defaults (`lang.clauses.OptionDefault`): `add_argument("--x", default=...)` and the parameter
  defaults of config builders and config constructors;
- a constructor's initialiser that takes its value from another config field with another default
  (`reserve_(cfg.reserve_blocks_)` -> `reserve_(cfg.reserve_ratio_ * free / 100)`; the read fields'
  defaults are looked up in the changed files and the index).

Not a default change: a brand-new field or option (nothing to flip); the same value spelled otherwise
(`1.0` / `1.`, quotes); a C++ in-class default that every constructor's initialiser list overrides; a
change that adds, in the same change, a guarded write of the old value to the same field (an explicit
opt-in that keeps the old behaviour) or keeps reading the old value under a deprecation switch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from reviewbot.analysis.derive import derivation_writes
from reviewbot.analysis.envparse import Outcome, Result, evaluate, same_literal, value_of_default
from reviewbot.analysis.envs import EnvDefaultChange, default_changes, unset_value
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import ClauseKind, OptionDefault, OptionKind
from reviewbot.lang.facts import Assignment, EnvRead, FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.owners import is_config_name, is_constant_value, is_init_function
from reviewbot.lang.predicate import And, Atom, Not, Or, Pred

__all__ = ["DefaultKind", "DefaultChange", "changed_defaults", "consumer_words", "reaches_numerics"]


class DefaultKind(str, Enum):
    FIELD = "field"
    ENV = "env"
    OPTION = "option"
    PARAMETER = "parameter"
    INITIALISER = "initialiser"
    AUTO = "auto"  # the value a derivation picks for a field nobody set
    CONSTANT = "constant"  # a module constant replaced by an environment read with another default


@dataclass(frozen=True)
class DefaultChange:
    kind: DefaultKind
    name: str  # `Owner.field`, the variable, the option or `function(param)`
    field: str  # the bare field / variable / option / parameter name
    owner: str  # the owner type ("" for env and options)
    old: str  # as written (canonical)
    new: str
    path: str  # head path and line of the new default
    line: int
    base_path: str
    base_line: int
    env: EnvDefaultChange | None = None
    old_effective: str = ""  # INITIALISER: the values with the read fields' defaults substituted
    new_effective: str = ""
    condition: str = ""  # AUTO: the condition it is picked under, as written
    silent: str = ""  # why `default-changed` does not report it ("" when it does); other rules may


_DEPLOYMENT_CLASS = re.compile(r"(?:Config|Configs|Args|Arguments|Settings|Options)$")
_BUILDER = re.compile(
    r"(?i)^_?(?:(?:create|build|make|get|default|new)_?\w*config\w*|from_\w+|\w*_config|\w*config|\w*_args|"
    r"\w*args)$"
)


def _defaults(facts: FileFacts | None) -> dict[tuple[str, str], tuple[str, int]]:
    """(owner, field) -> (value, line): member initialisers, class and `__init__` defaults."""
    out: dict[tuple[str, str], tuple[str, int]] = {}
    if facts is None:
        return out
    for d in facts.fields:
        if d.default is not None:
            out.setdefault((d.owner, d.field), (d.default, d.line))
    for fd in sorted(facts.defaults, key=lambda fd: fd.line):
        # A constant that `__init__` assigns later wins over the class-level declaration.
        out[(fd.owner, fd.field)] = (fd.value, fd.line)
    return out


_SCALAR = re.compile(
    r"""-?[\d.]+(?:[eE][-+]?\d+)?[fFlLuU]*|True|False|None|"[^"]*"|'[^']*'|[A-Z]\w*(?:\.\w+)+"""
)


def _scalar(value: str) -> bool:
    """A literal a deployment would set: a number, a bool, a string, None, an enum member."""
    return _SCALAR.fullmatch(value.strip()) is not None


def _config_owner(owner: str, s: Side, index: RepoIndex) -> bool:
    if is_config_name(owner) or index.is_config_owner(owner):
        return True
    return any(o.name == owner and o.config for f in (s.base_facts, s.head_facts) if f for o in f.owners)


def _overridden_by_constructor(
    owner: str, field: str, line: int, facts: list[FileFacts], index: RepoIndex
) -> bool:
    """Every object gets the field from a constructor's initialiser (or an unconditional write in
    `__init__` at another line): the declared default is never observed."""
    writes = [a for f in facts for a in f.assignments if a.field == field] + index.writers(field)
    for a in writes:
        if a.guard is not None or not is_init_function(a.function) or a.line == line:
            continue
        cls = (a.function or "").replace("::", ".").split(".")
        if (
            len(cls) >= 2
            and cls[-2] == owner
            and ("." not in a.target or a.target.startswith(("self.", "this.")))
        ):
            return True
    return False


def _opt_in(field: str, old: str, sides: list[Side]) -> bool:
    """The change also adds a guarded write of the old value to the same field: an explicit switch that
    keeps the old behaviour (`if os.environ.get("LEGACY_X"): self.x = False`)."""
    for s in sides:
        if s.head_facts is None:
            continue
        for a in s.head_facts.assignments:
            if a.field == field and a.guard is not None and a.line in s.added and same_literal(a.value, old):
                return True
    return False


_REFERENCE = re.compile(r"^([A-Z]\w*)\.([a-z_]\w*)$")


def _resolve(value: str, facts: list[FileFacts], index: RepoIndex) -> str | None:
    """A default that names another class's default (`EPLBConfig.window_size`) as that default's value;
    the value itself when it names nothing; None when the named default is not known."""
    for _ in range(3):
        m = _REFERENCE.match(value)
        if m is None:
            return value
        owner, field = m.groups()
        found = sorted({d.value for f in facts for d in f.defaults if (d.owner, d.field) == (owner, field)})
        found = found or sorted({d.value for d in index.defaults(field) if d.owner == owner})
        if len(found) != 1:
            return None
        value = found[0]
    return None


def _field_changes(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    out: list[DefaultChange] = []
    bases = [s.base_facts for s in sides if s.base_facts is not None]
    heads = [s.head_facts for s in sides if s.head_facts is not None]
    for s in sides:
        before, after = _defaults(s.base_facts), _defaults(s.head_facts)
        for key in sorted(set(before) & set(after)):
            (old, bline), (new, hline) = before[key], after[key]
            if same_literal(old, new) or (bline not in s.removed and hline not in s.added):
                continue
            # Changes `default-changed` does not report (other rules, such as derivation-drift, still see them):
            # a field made "unset" (derived elsewhere, or deprecated), another class's default that is not
            # known, the same value under another name.
            resolved_old, resolved_new = _resolve(old, bases, index), _resolve(new, heads, index)
            was, now = resolved_old or old, resolved_new or new
            silent = ""
            if new == "None":
                silent = "unset"
            elif resolved_old is None or resolved_new is None:
                silent = "unknown reference"
            elif same_literal(was, now):
                silent = "same value"
            owner, field = key
            sentinel = "None" in (was, now)
            if (sentinel or not (_scalar(was) and _scalar(now))) and not _config_owner(owner, s, index):
                continue  # a table (`W.strategy = {...}`) or a None sentinel of a non-config class: not a setting
            if _overridden_by_constructor(owner, field, hline, heads, index) or _opt_in(field, old, sides):
                continue
            out.append(
                DefaultChange(DefaultKind.FIELD, f"{owner}.{field}", field, owner, old, new, s.path, hline,
                              s.old_path, bline, silent=silent)
            )  # fmt: skip
    return out


def _option_key(o: OptionDefault) -> tuple[str, str, str]:
    return (o.kind.value, o.function, o.name)


def _is_config_function(function: str) -> bool:
    parts = function.replace("::", ".").split(".")
    short = parts[-1]
    if short in ("__init__", "__post_init__") or (len(parts) >= 2 and short == parts[-2]):
        # A deployment's configuration class (`ServerArgs`, `ModelConfig`), not an op's parameter pack
        # (`LayernormParams`): its constructor's defaults are what a deployment inherits.
        return len(parts) >= 2 and _DEPLOYMENT_CLASS.search(parts[-2]) is not None
    return bool(_BUILDER.match(short))


def _option_changes(sides: list[Side], fields: set[str]) -> list[DefaultChange]:
    out: list[DefaultChange] = []
    for s in sides:
        if s.base is None or s.head is None:
            continue
        before = {_option_key(o): o for o in s.base.options}
        after = {_option_key(o): o for o in s.head.options}
        for key in sorted(set(before) & set(after)):
            b, h = before[key], after[key]
            if same_literal(b.default, h.default) or (b.line not in s.removed and h.line not in s.added):
                continue
            if b.kind is OptionKind.PARAMETER and (not _is_config_function(b.function) or b.name in fields):
                continue  # a parameter of any function is not a deployment's default; `self.x = x` is a field
            kind = DefaultKind.OPTION if b.kind is OptionKind.ARGUMENT else DefaultKind.PARAMETER
            name = f"--{b.name}" if kind is DefaultKind.OPTION else f"{b.function}({b.name})"
            out.append(
                DefaultChange(
                    kind, name, b.name, "", b.default, h.default, s.path, h.line, s.old_path, b.line
                )
            )
    return out


_PATHS = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|(?<![\w.])[A-Za-z_]\w*_(?![\w(])")


def _substituted(value: str, defaults: dict[str, str]) -> tuple[str, frozenset[str]]:
    """`value` with each config field it reads replaced by that field's default, and the fields replaced."""
    used: set[str] = set()

    def sub(m: re.Match[str]) -> str:
        field = m.group(0).rsplit(".", 1)[-1]
        if field in defaults:
            used.add(field)
            return defaults[field]
        return m.group(0)

    return _PATHS.sub(sub, value), frozenset(used)


def _known_defaults(facts: list[FileFacts], index: RepoIndex, fields: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in facts:
        for fd in sorted(f.defaults, key=lambda fd: (fd.path, fd.line)):
            out.setdefault(fd.field, fd.value)
    for name in sorted(fields - set(out)):
        values = sorted({fd.value for fd in index.defaults(name)})
        if len(values) == 1:
            out[name] = values[0]
    return out


def _reads_of(value: str) -> set[str]:
    return {m.group(0).rsplit(".", 1)[-1] for m in _PATHS.finditer(value)}


def _initialiser_changes(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    out: list[DefaultChange] = []
    bases = [s.base_facts for s in sides if s.base_facts is not None]
    heads = [s.head_facts for s in sides if s.head_facts is not None]
    for s in sides:
        if s.base_facts is None or s.head_facts is None:
            continue
        old = {
            (a.function, a.target): a
            for a in s.base_facts.assignments
            if _initialiser(a) and a.line in s.removed
        }
        new = {
            (a.function, a.target): a
            for a in s.head_facts.assignments
            if _initialiser(a) and a.line in s.added
        }
        for key in sorted(set(old) & set(new), key=lambda k: (k[0] or "", k[1])):
            b, h = old[key], new[key]
            if b.value == h.value:
                continue
            fields = _reads_of(b.value) | _reads_of(h.value)
            was, used_b = _substituted(b.value, _known_defaults(bases, index, fields))
            now, used_h = _substituted(h.value, _known_defaults(heads, index, fields))
            # Only a value that now comes from another config field with its own default: a receiver
            # renamed, or a formula around the same field, is not a new default.
            if not used_b or not used_h or used_b == used_h or same_literal(was, now) or was == now:
                continue
            out.append(
                DefaultChange(DefaultKind.INITIALISER, h.target, h.field, "", b.value, h.value, s.path, h.line,
                              s.old_path, b.line, old_effective=was, new_effective=now)
            )  # fmt: skip
    return out


def _initialiser(a: Assignment) -> bool:
    return a.guard is None and is_init_function(a.function) and a.lang.value == "cpp"


def _unset_test(atom: str, negated: bool, field: str, defaults: list[str]) -> bool:
    """`x is None`, `None == x`, `not x`, `x == "auto"`, `x == 0` where 0 is its default: a test that the
    field was left at its default."""
    t, f = atom.replace(" ", ""), re.escape(field)
    if negated:
        return re.fullmatch(rf"(?:\w+\.)*{f}", t) is not None
    m = re.fullmatch(rf"(?:(?P<lhs>[^=<>!]+)==)?(?:\w+\.)*{f}(?:==(?P<rhs>.+)|(?P<none>isNone))?", t)
    if m is None or t == field or t.endswith("." + field):
        return False
    if m.group("none"):
        return True
    value = m.group("lhs") or m.group("rhs") or ""
    return value in ("None", '"auto"', "'auto'", '""', "''") or any(same_literal(value, d) for d in defaults)


def _literals(pred: Pred, negated: bool = False) -> list[tuple[str, bool]]:
    """The atoms of a predicate with their polarity (`not x` -> (`x`, True))."""
    if isinstance(pred, Atom):
        return [(pred.text, negated)]
    if isinstance(pred, Not):
        return _literals(pred.arg, not negated)
    if isinstance(pred, And | Or):
        return [lit for arg in pred.args for lit in _literals(arg, negated)]
    return []


def _base_defaults(field: str, sides: list[Side], index: RepoIndex) -> list[str] | None:
    """The field's defaults at base (None: the field did not exist, nothing to flip): the changed files'
    base declarations, else the head index's declarations in files the change did not touch."""
    changed = {s.path for s in sides} | {s.old_path for s in sides}
    found = [
        d.value for s in sides if s.base_facts is not None for d in s.base_facts.defaults if d.field == field
    ] + [
        d.default or "None" for s in sides if s.base_facts is not None for d in s.base_facts.fields if d.field == field
    ]  # fmt: skip
    found += [d.value for d in index.defaults(field) if d.path not in changed]
    return sorted(set(found)) if found else None


def _auto_changes(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """A constant a derivation now picks for a field nobody set (`if self.x is None: ... elif cond:
    self.x = "new"`, `if not self.flag and arch in (...): self.flag = True`, `if (x == 0) x = 128;`):
    the field's effective default for every deployment that meets the condition."""
    out: list[DefaultChange] = []
    for s in sides:
        if s.head_facts is None or s.base_facts is None:
            continue
        before = {
            (a.function, a.field, a.value, a.guard.key if a.guard else "") for a in s.base_facts.assignments
        }
        derived = {(d.via_line or d.line, d.field) for d, _ in derivation_writes(s.head_facts)}
        for a in s.head_facts.assignments:
            if a.line not in s.added or a.guard is None or not a.checks_target_first:
                continue
            if (a.line, a.field) not in derived or not is_constant_value(a.value):
                continue
            defaults = _base_defaults(a.field, sides, index)
            if defaults is None:
                continue  # a brand-new field: nothing to flip
            tests = [(t, neg) for t, neg in _literals(a.guard) if re.search(rf"\b{re.escape(a.field)}\b", t)]
            if not tests or not all(_unset_test(t, neg, a.field, defaults) for t, neg in tests):
                continue
            if (a.function, a.field, a.value, a.guard.key) in before:
                continue
            out.append(
                DefaultChange(DefaultKind.AUTO, f"{_owner_name(a)}.{a.field}", a.field, _owner_name(a),
                              defaults[0], a.value, s.path, a.line, s.old_path, a.line, condition=a.guard_text)
            )  # fmt: skip
    return out


def _owner_name(a: Assignment) -> str:
    parts = (a.function or "").replace("::", ".").split(".")
    return a.owner.rsplit(".", 1)[-1] if a.owner else (parts[-2] if len(parts) >= 2 else "")


_CONSTANT_NAME = re.compile(r"^([A-Z][A-Z0-9_]*)=(.+)$")


def _module_constants(s: Side) -> dict[str, str]:
    """Module-level constants the change removed (`FLASHINFER_WORKSPACE_SIZE = 256 * 1024 * 1024`)."""
    out: dict[str, str] = {}
    for c in s.base.clauses if s.base is not None else ():
        m = _CONSTANT_NAME.match(c.text)
        if c.function or c.kind is not ClauseKind.ASSIGN or c.line not in s.removed or m is None:
            continue
        if value_of_default(m.group(2)).outcome is Outcome.VALUE:
            out[m.group(1)] = m.group(2)
    return out


def _unset(e: EnvRead, index: RepoIndex) -> Result:
    """What a read gives when the variable is unset; a read without a default of its own (`envs.X`)
    takes the default of the variable's defining read (`int(os.getenv("X", "394"))` in `envs.py`)."""
    if e.default is not None:
        return unset_value(e)
    defining = {(r.default, r.parse) for r in index.env_reads(e.name) if r.default is not None}
    if len(defining) != 1:
        return Result(Outcome.UNKNOWN)
    default, parse = next(iter(defining))
    base = value_of_default(default)
    return evaluate(parse, base.value) if parse and base.outcome is Outcome.VALUE else base


def _constant_to_env(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """`SIZE = 256 MiB` removed and its use replaced by `envs.SIZE_ENV` whose default is 394 MiB: every
    deployment that never sets the variable gets another value than the constant it had."""
    out: list[DefaultChange] = []
    for s in sides:
        constants = _module_constants(s)
        if not constants or s.head_facts is None:
            continue
        for e in sorted(s.head_facts.env_reads, key=lambda e: (e.line, e.name)):
            if e.line not in s.added:
                continue
            hunk = next(
                (h for h in s.hunks if h.target_start <= e.line < h.target_start + h.target_length), None
            )
            if hunk is None:
                continue
            # The removed use the read replaced: a removed line (not a definition) that reads a constant,
            # nearest to the read's place in the hunk.
            at = e.line - hunk.target_start
            uses = sorted(
                (abs((n - hunk.source_start) - at), n, name)
                for n, t in hunk.removed
                if not _CONSTANT_NAME.match("".join(t.split()))
                for name in constants
                if re.search(rf"(?<![\w.]){name}(?!\w)", t)
            )
            if not uses:
                continue
            names = [uses[0][2]]
            old, new = value_of_default(constants[names[0]]), _unset(e, index)
            if old.outcome is not Outcome.VALUE or new.outcome is not Outcome.VALUE:
                continue
            if str(old.value) == str(new.value):
                continue  # the same value, now configurable
            out.append(
                DefaultChange(DefaultKind.CONSTANT, e.name, e.name, "", f"{names[0]} = {constants[names[0]]}",
                              str(new.value), s.path, e.line, s.old_path, _line_of(s, names[0]),
                              old_effective=str(old.value), new_effective=str(new.value))
            )  # fmt: skip
    return out


def _line_of(s: Side, name: str) -> int:
    for c in s.base.clauses if s.base is not None else ():
        if not c.function and c.text.startswith(name + "="):
            return c.line
    return 0


def changed_defaults(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """Every default the change flips, one per name, by path and line."""
    found = _field_changes(sides, index)
    fields = {c.field for c in found}
    found += _option_changes(sides, fields)
    found += _initialiser_changes(sides, index)
    found += _auto_changes(sides, index)
    found += _constant_to_env(sides, index)
    for e in default_changes(sides):
        found.append(
            DefaultChange(DefaultKind.ENV, e.name, e.name, "", e.base.default or "", e.head.default or "",
                          e.head.path, e.head.line, e.base.path, e.base.line, env=e)
        )  # fmt: skip
    unique: dict[tuple[str, str, int], DefaultChange] = {}
    for c in sorted(found, key=lambda c: (c.path, c.line, c.kind.value, c.name)):
        # One finding per default; a constant replaced at several reads is one per read (each its own use).
        unique.setdefault((c.kind.value, c.name, c.line if c.kind is DefaultKind.CONSTANT else 0), c)
    return sorted(unique.values(), key=lambda c: (c.path, c.line, c.name))


# Words that say a value changes numerics (types, precision, kernels that compute differently) or
# writes persistent data (files, engines, exports): a default reaching them is P1.
_NUMERIC_WORDS = frozenset(
    {"dtype", "precision", "fp8", "fp16", "bf16", "fp32", "half", "int8", "int4", "quant", "quantization",
     "quantize", "trt", "tensorrt", "onnx", "scale", "scaling", "eps", "epsilon", "rounding", "logn", "kernel",
     "attention_backend", "mha", "mla", "fmha"}
)  # fmt: skip
_PERSISTENT_WORDS = frozenset(
    {"save", "dump", "export", "persist", "serialize", "checkpoint", "mkdir", "makedirs", "onnx", "engine_dir",
     "cache_dir", "backup", "retention"}
)  # fmt: skip
_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def consumer_words(texts: list[str]) -> set[str]:
    """Lower-case words of identifiers (`VITEngine` -> vit, engine; `use_fp8_kv` -> use, fp8, kv)."""
    words: set[str] = set()
    for t in texts:
        for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", t):
            words.add(ident.lower())
            for part in ident.split("_"):
                words.update(w.lower() for w in _SPLIT.findall(part))
                if part:
                    words.add(part.lower())
    return words


def reaches_numerics(texts: list[str]) -> str:
    """The first word (sorted) of `texts` that says numerics or persistent data; "" for none."""
    words = consumer_words(texts)
    hits = sorted(words & (_NUMERIC_WORDS | _PERSISTENT_WORDS))
    return hits[0] if hits else ""


def default_names(sides: list[Side]) -> set[str]:
    """Fields, options and variables whose default differs on a changed line (for the index: their
    consumers and explicit writers), and the fields changed constructor initialisers read."""
    names: set[str] = set()
    for s in sides:
        before, after = _defaults(s.base_facts), _defaults(s.head_facts)
        for key in set(before) & set(after):
            if not same_literal(before[key][0], after[key][0]):
                names.add(key[1])
        for facts, lines in ((s.base_facts, s.removed), (s.head_facts, s.added)):
            for a in facts.assignments if facts is not None else ():
                if a.line in lines and _initialiser(a):
                    names.update(_reads_of(a.value))
    return names
