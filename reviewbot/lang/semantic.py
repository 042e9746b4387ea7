"""The owner model of the repository index: owners, fields, bindings, environment reads, and matching
writers and readers to the owner they land in (the lookups other rules call).

`OwnerModel` is a base of `RepoIndex`; it keeps what the front ends found (`FileFacts.owners`,
`fields`, `bindings`, `env_reads`) and answers:

- `owner_of(write_or_read)`: the type a write or read lands in, with how it was found (see
  `lang/owners.py` for the order). The receiver's name is the last, documented resort: a receiver
  named like its type (`model_config` -> `ModelConfig`, `rope_config` -> `RopeConfig`), or a
  config-like name (`config`, `cfg`, `params`, `args`) when exactly one indexed owner declares the
  field. Anything else stays unknown: a bare attribute name never matches across unrelated classes.
- `writers_of(owner, field)` / `readers_of(owner, field)`: writes and reads of that field of that owner,
  its subclasses and bases, the Python classes that forward to it (`__getattr__` to a bound object),
  and across a binding (`def_readwrite("head_num", &T::head_num_)`: Python `x.head_num` is `T::head_num_`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from reviewbot.lang.facts import (
    Assignment,
    Binding,
    EnvRead,
    FieldDecl,
    FieldDefault,
    FieldRead,
    FileFacts,
    Owner,
    OwnerVia,
)
from reviewbot.lang.owners import snake_to_camel

__all__ = ["OwnerModel"]

_MAX_DEPTH = 6  # base classes and type paths followed at most this deep (cycles, huge hierarchies)
# Receiver names that say "a configuration object" without naming its type.
_CONFIG_RECEIVERS = frozenset(
    {"config", "cfg", "conf", "configs", "params", "param", "parameters", "args", "arguments", "opts",
     "options", "settings"}
)  # fmt: skip


def _receiver_of(expr: str, receiver: str) -> str:
    """The last name of the written/read object: `self.config` -> `config`; `x.rope.style` -> `rope`."""
    if receiver:
        return receiver.rsplit(".", 1)[-1]
    return expr.rsplit(".", 2)[-2] if expr.count(".") >= 1 else ""


@dataclass
class OwnerModel:
    _owners: dict[str, list[Owner]] = field(default_factory=lambda: defaultdict(list))
    _fields: dict[tuple[str, str], list[FieldDecl]] = field(default_factory=lambda: defaultdict(list))
    _owner_fields: dict[str, list[FieldDecl]] = field(default_factory=lambda: defaultdict(list))
    _declaring: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # field -> owners
    _bindings: dict[str, list[Binding]] = field(default_factory=lambda: defaultdict(list))  # by C++ owner
    _env: dict[str, list[EnvRead]] = field(default_factory=lambda: defaultdict(list))
    _subclasses: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _memo: dict[object, object] = field(default_factory=dict)  # owner_of / family results; reset by add

    # --- filled by RepoIndex ------------------------------------------------------------------------

    def writers(self, field_name: str) -> list[Assignment]:
        raise NotImplementedError

    def reads(self, field_name: str) -> list[FieldRead]:
        raise NotImplementedError

    def defaults(self, field_name: str) -> list[FieldDefault]:
        raise NotImplementedError

    def add_semantics(self, facts: FileFacts) -> None:
        """Index one file's owners, fields, bindings and environment reads."""
        self._memo.clear()
        for o in facts.owners:
            self._owners[o.name].append(o)
            for base in o.bases:
                self._subclasses[base].add(o.name)
        for d in facts.fields:
            self._fields[(d.owner, d.field)].append(d)
            self._owner_fields[d.owner].append(d)
            self._declaring[d.field].add(d.owner)
        for fd in facts.defaults:
            self._declaring[fd.field].add(fd.owner)
        for b in facts.bindings:
            self._bindings[b.owner].append(b)
            self._declaring[b.name].add(b.owner)
            self._declaring[b.member].add(b.owner)
        for e in facts.env_reads:
            self._env[e.name].append(e)

    # --- what is declared ----------------------------------------------------------------------------

    def owners(self, name: str) -> list[Owner]:
        """Owners (types) of that short name, by path and line."""
        return sorted(self._owners.get(name, ()), key=lambda o: (o.path, o.line))

    def is_config_owner(self, name: str) -> bool:
        return any(o.config for o in self._owners.get(name, ())) or bool(self._bindings.get(name))

    def fields_of(self, owner: str) -> list[FieldDecl]:
        """Fields the owner itself declares, by path and line."""
        return sorted(self._owner_fields.get(owner, ()), key=lambda d: (d.path, d.line, d.field))

    def bindings_of(self, owner: str) -> list[Binding]:
        """What the C++ class `owner` exposes to Python, by path and line."""
        return sorted(self._bindings.get(owner, ()), key=lambda b: (b.path, b.line, b.name))

    def env_reads(self, name: str | None = None) -> list[EnvRead]:
        """Reads of environment variable `name` (all reads without a name), by path and line."""
        if name is not None:
            found = list(self._env.get(name, ()))
        else:
            found = [e for reads in self._env.values() for e in reads]
        return sorted(found, key=lambda e: (e.path, e.line, e.name, e.parse))

    def field_decl(self, owner: str, name: str) -> FieldDecl | None:
        """The declaration of `owner.name`: its own, a base class's, or (for a Python class forwarding
        to a bound C++ object) the bound member's; the first by path and line."""
        for o in self._ancestry(owner):
            found = self._fields.get((o, name))
            if found:
                return min(found, key=lambda d: (d.path, d.line))
        target = self._delegate_type(owner)
        if target:
            for b in self.bindings_of(target):
                if b.name == name and b.member:
                    return self.field_decl(target, b.member)
        return None

    def _ancestry(self, owner: str) -> list[str]:
        """`owner` and its base classes, nearest first."""
        out: list[str] = []
        frontier = [owner]
        while frontier and len(out) < 32:
            name = frontier.pop(0)
            if name in out:
                continue
            out.append(name)
            for o in self.owners(name):
                frontier.extend(o.bases)
        return out

    def _delegate_type(self, owner: str) -> str:
        """The type a Python class forwards unknown attributes to (`__getattr__` -> `self.params`)."""
        for o in self.owners(owner):
            if o.delegate:
                decl = self._fields.get((owner, o.delegate))
                if decl:
                    return min(decl, key=lambda d: (d.path, d.line)).type
        return ""

    def resolve_type(self, path: str) -> str:
        """The type a type path ends in: `ModelConfig.rope_config` -> the declared type of
        `ModelConfig::rope_config` (`RopeConfig`); "" when a step is not known."""
        parts = path.split(".")
        current = parts[0]
        for member in parts[1 : _MAX_DEPTH + 1]:
            decl = self.field_decl(current, member)
            if decl is None or not decl.type:
                return ""
            current = decl.type
        return current

    # --- matching --------------------------------------------------------------------------------

    def owner_of(self, x: Assignment | FieldRead) -> tuple[str, OwnerVia]:
        """The owner (short type name) a write or read lands in and how it was found; ("", NONE) when
        it cannot be known (see the module doc for the receiver-name resort)."""
        key = (
            type(x).__name__,
            x.path,
            x.line,
            x.field,
            x.owner,
            x.expr if isinstance(x, FieldRead) else x.target,
        )
        found = self._memo.get(key)
        if isinstance(found, tuple):
            return found
        result = self._owner_of(x)
        self._memo[key] = result
        return result

    def _owner_of(self, x: Assignment | FieldRead) -> tuple[str, OwnerVia]:
        if x.owner:
            resolved = self.resolve_type(x.owner) if "." in x.owner else x.owner
            if resolved:
                return resolved, x.owner_via
        expr = x.expr if isinstance(x, FieldRead) else x.target
        receiver = x.owner.rsplit(".", 1)[-1] if x.owner else _receiver_of(expr, getattr(x, "receiver", ""))
        if not receiver or receiver in ("self", "this"):
            return "", OwnerVia.NONE
        declaring = sorted(self._declaring.get(x.field, ()))
        camel = snake_to_camel(receiver)
        named = [o for o in declaring if o == camel or (len(camel) > 3 and o.endswith(camel))]
        if len(named) == 1:
            return named[0], OwnerVia.NAME
        if not named and len(declaring) == 1 and receiver.lower() in _CONFIG_RECEIVERS:
            return declaring[0], OwnerVia.NAME
        return "", OwnerVia.NONE

    def family(self, owner: str) -> frozenset[str]:
        """Types whose instances hold `owner`'s fields: `owner`, its bases and subclasses, the Python
        classes that forward to it, the type it forwards to, and the name its binding exposes."""
        key = ("family", owner)
        found = self._memo.get(key)
        if isinstance(found, frozenset):
            return found
        out = set(self._ancestry(owner))
        frontier = [owner]
        while frontier and len(out) < 256:
            name = frontier.pop()
            for sub in sorted(self._subclasses.get(name, ())):
                if sub not in out:
                    out.add(sub)
                    frontier.append(sub)
        for name in sorted(self._owners):
            if self._delegate_type(name) in out:
                out.add(name)
        target = self._delegate_type(owner)
        if target:
            out.add(target)
        out.update(b.exposed_as for b in self._bindings.get(owner, ()) if b.exposed_as)
        result = frozenset(out)
        self._memo[key] = result
        return result

    def _names(self, owner: str, name: str) -> list[str]:
        """The field's names on both sides of a binding: `head_num_` (C++) and `head_num` (Python)."""
        names = {name}
        for o in self.family(owner):
            for b in self._bindings.get(o, ()):
                if b.member == name and b.name:
                    names.add(b.name)
                if b.name == name and b.member:
                    names.add(b.member)
        return sorted(names)

    def writers_of(self, owner: str, name: str) -> list[Assignment]:
        """Writes of `owner.name` (see the module doc), bindings included, by path and line."""
        family = self.family(owner)
        out = [w for n in self._names(owner, name) for w in self.writers(n) if self.owner_of(w)[0] in family]
        return sorted(set(out), key=lambda w: (w.path, w.line, w.target, w.value))

    def readers_of(self, owner: str, name: str) -> list[FieldRead]:
        """Reads of `owner.name` (see the module doc), by path and line."""
        family = self.family(owner)
        out = [r for n in self._names(owner, name) for r in self.reads(n) if self.owner_of(r)[0] in family]
        return sorted(set(out), key=lambda r: (r.path, r.line, r.expr))
