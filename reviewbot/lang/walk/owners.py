"""The owner model's half of a front end: receiver types, owners, fields, bindings, environment reads.

`Walker` (walk/walker.py) inherits these emitters; the C++ and Python bodies call them. The type of the
current function's locals and parameters is kept in `types` (name -> type path and how it is known;
see `lang/owners.py`), so a write or read can say which owner it lands in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tree_sitter import Node

from reviewbot.lang import treesitter as ts
from reviewbot.lang.common import canonical_expr, last_component
from reviewbot.lang.facts import (
    AssignKind,
    Assignment,
    Binding,
    DeclOrigin,
    EnvRead,
    FieldDecl,
    Lang,
    Owner,
    OwnerVia,
)

if TYPE_CHECKING:
    from reviewbot.lang.walk.walker import Ctx

__all__ = ["Recv", "NO_RECV", "OwnerEmitters", "short_class"]


@dataclass(frozen=True)
class Recv:
    """The object a write or read lands in: as written, and its type path (see `lang/owners.py`)."""

    receiver: str = ""
    owner: str = ""
    via: OwnerVia = OwnerVia.NONE


NO_RECV = Recv()
_HOLE = "__env_read__"  # stands for the read while the enclosing expression is canonicalised
_PARSE_MAX = 80  # longest `EnvRead.parse` kept; longer means the read is buried in an expression


class OwnerEmitters:
    """Owner-model emitters; the state they fill is declared (as dataclass fields) by `Walker`."""

    path: str
    lang: Lang
    lines: list[str]
    assignments: list[Assignment]
    owners: list[Owner]
    field_decls: list[FieldDecl]
    bindings: list[Binding]
    env_reads: list[EnvRead]
    types: dict[str, tuple[str, OwnerVia]]
    env_target: str
    _declared: set[tuple[str, str]]

    txt = staticmethod(ts.text)
    line = staticmethod(ts.first_line)
    end_line = staticmethod(ts.last_line)

    def source_line(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def recv_of(self, ctx: Ctx, receiver: str, member_root: bool = False) -> Recv:
        """The type path of a receiver written `receiver` (`self`, `config.rope_config`, `this`).

        `member_root`: the receiver's first name is an implicit C++ member (`config_.x` in a method)."""
        parts = receiver.replace("->", ".").replace("::", ".").split(".")
        if not receiver or not all(p.isidentifier() for p in parts):
            return Recv(receiver)
        cls = short_class(ctx.cls)
        root, rest = parts[0], parts[1:]
        if root in ("self", "this") and cls and ctx.method:
            owner, via = cls, OwnerVia.SELF
        elif root in self.types:
            owner, via = self.types[root]
        elif member_root and cls:
            owner, via, rest = cls, OwnerVia.SELF, parts
        else:
            return Recv(receiver)
        if not owner:
            return Recv(receiver)
        return Recv(receiver, ".".join([owner, *rest]), via)

    def set_type(self, name: str, type_path: str, via: OwnerVia) -> None:
        """`name` now holds a `type_path` (a local or parameter of the current function)."""
        if type_path:
            self.types[name] = (type_path, via)
        else:
            self.types.pop(name, None)

    def emit_owner(self, owner: Owner) -> None:
        self.owners.append(owner)

    def emit_field(
        self,
        owner: str,
        name: str,
        type_: str,
        default: str | None,
        node: Node,
        origin: DeclOrigin = DeclOrigin.BODY,
    ) -> None:
        """A field of `owner`; only its first declaration counts (`__init__` may assign it twice)."""
        short = short_class(owner)
        if (short, name) in self._declared:
            return
        self._declared.add((short, name))
        self.field_decls.append(
            FieldDecl(short, name, type_, default, self.path, self.line(node), self.lang, origin)
        )

    def emit_binding(self, binding: Binding) -> None:
        self.bindings.append(binding)

    def binding_write(self, target: str, method: str, line: int) -> None:
        """A writable binding found in text (a macro's expansion): an external writer of `target`."""
        self.assignments.append(
            Assignment(
                target=target,
                field=last_component(target),
                value=method,
                guard=None,
                path=self.path,
                line=line,
                function=None,
                lang=self.lang,
                kind=AssignKind.BINDING,
                text=self.source_line(line),
                receiver=target.rsplit(".", 1)[0],
                owner=target.rsplit(".", 1)[0],
                owner_via=OwnerVia.BINDING,
                stmt_start=line,
                stmt_end=line,
            )
        )

    def emit_env(
        self,
        ctx: Ctx,
        name: str,
        default: str | None,
        accessor: str,
        node: Node,
        parse: str = "",
        wrappers: frozenset[str] = frozenset(),
    ) -> None:
        """A read of environment variable `name` at `node`; `wrappers` are the node types that parse
        the read's text in place (calls, comparisons) and make up `EnvRead.parse` (`bool(int(·))`)."""
        outer = node
        for _ in range(6):
            parent = outer.parent
            if parent is None or parent.type not in wrappers or not self.parses(parent, outer):
                break
            outer = parent
        if outer.id != node.id:
            whole, inner = self.txt(outer), self.txt(node)
            start = node.start_byte - outer.start_byte
            shaped = canonical_expr(whole[:start] + _HOLE + whole[start + len(inner) :])
            if len(shaped) <= _PARSE_MAX:
                parse = shaped.replace(_HOLE, "·")
        self.env_reads.append(
            EnvRead(
                name,
                default,
                parse,
                accessor,
                self.env_target,
                self.path,
                self.line(node),
                ctx.function,
                self.lang,
                " ".join(self.txt(outer).split()),
            )
        )

    def parses(self, parent: Node, child: Node) -> bool:
        """`parent` turns the text of `child` into a value (a call on it, a comparison); see `emit_env`."""
        return True


def short_class(cls: str | None) -> str:
    """`ns::Outer::Inner` / `Outer.Inner` -> `Inner`; "" for None."""
    return cls.replace("::", ".").rsplit(".", 1)[-1] if cls else ""
