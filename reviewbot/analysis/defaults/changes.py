"""Defaults that a change flips (pure): the value every deployment that never set something now gets.

Compared per changed file, before and after (`analysis.sides`):

- field defaults (`facts.FieldDefault`, `facts.FieldDecl.default`): a C++ member initialiser
  (`bool use_x = false;`), a Python class / dataclass default (`use_x: bool = False`), a constant an
  `__init__` assigns unconditionally (`self.use_x = False`) — same owner and field on both sides, a
  changed line, another value;
- environment defaults (`analysis.envs.default_changes`): `os.environ.get("X", "0") == "1"` with `"1"`;
- option defaults (`lang.clauses.OptionDefault`): `add_argument("--x", default=...)` and the parameter
  defaults of config builders and config constructors;
- the defaults code picks rather than declares (`analysis.defaults.picked`): the value a derivation now
  chooses for a field nobody set, a module constant replaced by an environment read with another default;
- a brand-new bool switch of a config owner that defaults on and is read only on added lines, never
  negated, gating at least one statement the change adds (not code it only wraps or re-indents);
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
from dataclasses import replace

from reviewbot.analysis.defaults.consumers import consumer_words, reaches_numerics
from reviewbot.analysis.defaults.initialisers import initialiser, initialiser_changes, reads_of
from reviewbot.analysis.defaults.picked import auto_changes, constant_to_env
from reviewbot.analysis.defaults.records import DefaultChange, DefaultKind
from reviewbot.analysis.defaults.respelled import runtime_record, scalar, silent_reason
from reviewbot.analysis.defaults.switch_atoms import copied_as_is, switch_atom
from reviewbot.analysis.envs.parse import same_literal
from reviewbot.analysis.envs.switches import default_changes
from reviewbot.analysis.reach.configs import shared
from reviewbot.analysis.sides import Side
from reviewbot.lang.clauses import ClauseKind, OptionDefault, OptionKind
from reviewbot.lang.facts import FieldRead, FileFacts
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.owners import is_config_name, is_init_function

__all__ = ["DefaultKind", "DefaultChange", "changed_defaults", "consumer_words", "reaches_numerics"]


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


def _placeholder(owner: str, field: str, line: int, base: FileFacts | None) -> bool:
    """The base's `self.x = None` in `__init__` was a placeholder: another method of the class writes the
    field unconditionally (`_initialize` reading `get_scalar_param(d, KEY, KEY_DEFAULT)`), so the value a
    deployment got was never `None`."""
    if base is None:
        return False
    for a in base.assignments:
        parts = (a.function or "").replace("::", ".").split(".")
        if (
            a.field == field and a.line != line and a.guard is None and len(parts) >= 2 and parts[-2] == owner
            and ("." not in a.target or a.target.startswith(("self.", "this."))) and a.value.strip() != "None"
        ):  # fmt: skip
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
            silent = silent_reason(key[1], new, (resolved_old, resolved_new), sides)
            owner, field = key
            sentinel = "None" in (was, now)
            if runtime_record(owner) and not _config_owner(owner, s, index):
                continue  # per-batch metadata, counters, results: runtime records, not settings
            if (sentinel or not (scalar(was) and scalar(now))) and not _config_owner(owner, s, index):
                continue  # a table (`W.strategy = {...}`) or a None sentinel of a non-config class: not a setting
            if _overridden_by_constructor(owner, field, hline, heads, index) or _opt_in(field, old, sides):
                continue
            if was == "None" and _placeholder(owner, field, bline, s.base_facts):
                continue  # the base's `None` was filled in by another method: its real default is not known here
            out.append(
                DefaultChange(DefaultKind.FIELD, f"{owner}.{field}", field, owner, old, new, s.path, hline,
                              s.old_path, bline, silent=silent)
            )  # fmt: skip
    return out


def _late_bound(s: Side, function: str, name: str, old: str) -> bool:
    """A parameter default made `None` that the function binds back to the old value when it is `None`
    (`args=None` ... `if args is None: args = sys.argv[1:]`): the same default, evaluated at call time."""
    if s.head is None:
        return False
    flat = "".join(old.split())
    for c in s.head.clauses:
        if c.function != function or c.kind is not ClauseKind.ASSIGN:
            continue
        text = "".join(c.text.split())
        m = re.fullmatch(rf"{re.escape(name)}=(.+)", text)
        if m is None:
            continue
        value = m.group(1)
        if value in (
            f"{name}or{flat}",
            f"{name}if{name}isnotNoneelse{flat}",
            f"{flat}if{name}isNoneelse{name}",
        ):
            return True
        unset = (rf"{re.escape(name)}isNone", rf"not{re.escape(name)}", rf"{re.escape(name)}==None")
        if value == flat and any(
            not g.negated and any(re.fullmatch(u, "".join(g.text.split())) for u in unset) for g in c.guards
        ):
            return True
    return False


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
            if h.default == "None" and _late_bound(s, h.function, h.name, b.default):
                continue  # `x=OLD` -> `x=None` + `if x is None: x = OLD`: the same default, bound late
            kind = DefaultKind.OPTION if b.kind is OptionKind.ARGUMENT else DefaultKind.PARAMETER
            name = f"--{b.name}" if kind is DefaultKind.OPTION else f"{b.function}({b.name})"
            out.append(
                DefaultChange(
                    kind, name, b.name, "", b.default, h.default, s.path, h.line, s.old_path, b.line
                )
            )
    return out


def changed_defaults(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """Every default the change flips, one per name, by path and line (once per round: two rules ask)."""
    return list(shared("changed_defaults", index, (sides,), lambda: tuple(_changed_defaults(sides, index))))


_ON = frozenset({"True", "true"})


def _new_switches(sides: list[Side]) -> list[tuple[Side, str, str, str, int]]:
    """(side, owner, field, value, line) of bool fields the change adds to a config owner defaulting on
    (no owner of any changed file declared the field at the base), in files the base had."""
    known = {key[1] for s in sides for key in _defaults(s.base_facts)}
    out: list[tuple[Side, str, str, str, int]] = []
    for s in sides:
        if s.base_facts is None:
            continue  # a new file (a new model's config): no deployment ran with it before
        for (owner, field), (value, line) in sorted(_defaults(s.head_facts).items()):
            if value in _ON and line in s.added and field not in known:
                out.append((s, owner, field, value, line))
    return out


def _moved(text: str, sides: list[Side]) -> bool:
    """A statement the change only re-indented or moved (the same text on a removed line)."""
    flat = "".join(text.split())
    return any("".join(t.split()) == flat for s in sides for h in s.hunks for _, t in h.removed)


def _live_reads(field: str, sides: list[Side], index: RepoIndex) -> list[FieldRead]:
    """Reads of `field` in the head, the changed files' own included, outside tests and vendored code."""
    reads = {(r.path, r.line, r.expr): r for r in index.reads(field)}
    for t in sides:
        for r in t.head_facts.reads if t.head_facts is not None else ():
            if r.field == field:
                reads[(r.path, r.line, r.expr)] = r
    return [r for r in reads.values() if not is_test_path(r.path) and "/vendor" not in r.path]


def _new_on_changes(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    """A brand-new switch that defaults on, read only on lines the change adds, never as `not x` / `!x`,
    and not wrapping code that existed before (an opt-out around old behaviour): the new code runs for
    every deployment that never sets it. Only a condition that tests the switch itself gates code; one
    that uses it as a number (`if len(t) < seq_len + cfg.add_extra_token:`) gates nothing of its own."""
    out: list[DefaultChange] = []
    by_path = {s.path: s for s in sides}
    for s, owner, field, value, line in _new_switches(sides):
        if not _config_owner(owner, s, index):
            continue
        live = _live_reads(field, sides, index)
        if not live or any(r.negated for r in live):
            continue
        if any(r.path not in by_path or r.line not in by_path[r.path].added for r in live):
            continue  # read by code that was there before: the switch wraps existing behaviour
        direct = [r for r in live if r.alias is None]  # not the reads of a local it was copied into
        if direct and all(copied_as_is(r, value, by_path[r.path]) for r in direct):
            continue  # at its default it gives the value its code uses without it: nothing new runs
        switches = [r for r in live if r.in_condition and switch_atom(r, by_path[r.path])]
        gated = [(r.path, g) for r in switches for g in r.gated]
        if gated and not any(g.line in by_path[p].added and not _moved(g.text, sides) for p, g in gated):
            continue  # an opt-out around statements that were there before (kept or only re-indented)
        out.append(
            DefaultChange(DefaultKind.NEW_ON, f"{owner}.{field}", field, owner, "", value, s.path, line,
                          s.old_path, line, condition=place_of(live[0]))
        )  # fmt: skip
    return out


def place_of(r: FieldRead) -> str:
    return f"{r.path}:{r.line}"


def _changed_defaults(sides: list[Side], index: RepoIndex) -> list[DefaultChange]:
    found = _field_changes(sides, index)
    found += _new_on_changes(sides, index)
    fields = {c.field for c in found}
    found += _option_changes(sides, fields)
    found += initialiser_changes(sides, index)
    found += auto_changes(sides, index)
    found += constant_to_env(sides, index)
    for e in default_changes(sides):
        found.append(
            DefaultChange(DefaultKind.ENV, e.name, e.name, "", e.base.default or "", e.head.default or "",
                          e.head.path, e.head.line, e.base.path, e.base.line, env=e)
        )  # fmt: skip
    unique: dict[tuple[str, str, int], DefaultChange] = {}
    for c in sorted(found, key=lambda c: (c.path, c.line, c.kind.value, c.name)):
        # One finding per default; a constant replaced at several reads is one per read (each its own use).
        unique.setdefault((c.kind.value, c.name, c.line if c.kind is DefaultKind.CONSTANT else 0), c)
    return _fold_copies(sorted(unique.values(), key=lambda c: (c.path, c.line, c.name)))


def _fold_copies(changes: list[DefaultChange]) -> list[DefaultChange]:
    """The same field flipped from the same value to the same value on two owners in one change (a CLI
    params struct and the module struct it is copied into) is one decision: reported once, on the first
    copy by path and line, naming the others; the others stay visible to other rules (silent)."""
    first: dict[tuple[str, str, str], int] = {}
    out = list(changes)
    for i, c in enumerate(out):
        if c.kind is not DefaultKind.FIELD or c.silent:
            continue
        key = (c.field.rstrip("_"), "".join(c.old.split()), "".join(c.new.split()))
        if key not in first:
            first[key] = i
            continue
        j = first[key]
        out[j] = replace(out[j], copies=(*out[j].copies, (c.path, c.line)))
        out[i] = replace(c, silent="another copy of the same default")
    return out


def default_names(sides: list[Side]) -> set[str]:
    """Fields, options and variables whose default differs on a changed line (for the index: their
    consumers and explicit writers), and the fields changed constructor initialisers read."""
    names: set[str] = {field for _, _, field, _, _ in _new_switches(sides)}
    for s in sides:
        before, after = _defaults(s.base_facts), _defaults(s.head_facts)
        for key in set(before) & set(after):
            if not same_literal(before[key][0], after[key][0]):
                names.add(key[1])
        for facts, lines in ((s.base_facts, s.removed), (s.head_facts, s.added)):
            for a in facts.assignments if facts is not None else ():
                if a.line in lines and initialiser(a):
                    names.update(reads_of(a.value))
    return names
