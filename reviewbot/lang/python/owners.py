"""Python bodies, the owner model's half: receiver types, fields an `__init__` declares, environment
reads (`os.environ.get`, `os.getenv`, `os.environ[...]`, env-like helpers, `envs.X`).

`PyBody` (body.py) inherits this class; its statement and expression walk calls these methods.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.env import env_accessor, env_attribute, helper_parse, is_env_name, unquote
from reviewbot.lang.facts import DeclOrigin, OwnerVia
from reviewbot.lang.owners import literal_type, short_type
from reviewbot.lang.reads import Cond
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walk.walker import NO_RECV, Ctx, Recv, Walker

__all__ = ["PyOwners"]

_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_BUILTINS = frozenset({"dict", "list", "set", "tuple", "frozenset", "int", "float", "str", "bool", "bytes"})
# Nodes that turn an environment read's text into a value in place: `bool(int(·))`, `· == "1"`, `·.lower()`.
_ENV_WRAPPERS = frozenset(
    {"argument_list", "call", "comparison_operator", "not_operator", "parenthesized_expression", "attribute"}
)
_ENVIRON = frozenset({"os.environ", "environ"})
_ENVISH = re.compile(r"env|Env|ENV")


class PyOwners(Walker):
    """Types, declared fields and environment reads of Python code (a base of `PyBody`)."""

    def _recv(self, left: Node, ctx: Ctx) -> Recv:
        """The object `left` (an attribute) writes into, with its type path; nothing for a local."""
        obj = left.child_by_field_name("object") if left.type == "attribute" else None
        if obj is None:
            return NO_RECV
        return self.recv_of(ctx, "".join(self.txt(obj).split()))

    def value_type(self, value: Node) -> str:
        """The type a value evidently has: a literal's, a constructor call's (`T(...)`, `mod.T(...)`,
        `T.from_dict(...)`); "" otherwise."""
        value = self.unparen(value)
        found = literal_type(canonical_expr(self.txt(value)))
        if found or value.type != "call":
            return found
        fn = value.child_by_field_name("function")
        parts = canonical_expr(self.txt(fn)).split(".") if fn is not None else [""]
        last = parts[-1]
        if last[:1].isupper() and not last.isupper():
            return short_type(last)
        if len(parts) >= 2 and parts[-2][:1].isupper() and last.startswith(("from_", "create", "load")):
            return short_type(parts[-2])  # alternative constructors
        return ""

    def track(self, left: Node, value: Node, ctx: Ctx, at: Node) -> None:
        """Types of locals (`cfg = ModelConfig(...)`, `cfg: ModelConfig = ...`) and the fields an
        `__init__` / `__post_init__` declares by assigning them first (`self.x = ...`)."""
        if left.type == "attribute" and not (ctx.init or (ctx.function or "").endswith("__post_init__")):
            return  # only a constructor declares fields; other member writes have no type to record
        ann = at.child_by_field_name("type") if at.child_by_field_name("left") == left else None
        v = self.unparen(value)
        if left.type == "identifier" and ctx.function is not None:
            self._track_local(self.txt(left), ann, v, ctx)
            return
        obj = left.child_by_field_name("object") if left.type == "attribute" else None
        attr = left.child_by_field_name("attribute") if left.type == "attribute" else None
        in_init = ctx.method and (ctx.function or "").endswith(("__init__", "__post_init__"))
        if not (in_init and ctx.cls and obj is not None and attr is not None and self.txt(obj) == "self"):
            return
        self._declare_field(ctx.cls, left, attr, ann, v, ctx)

    def _track_local(self, name: str, ann: Node | None, v: Node, ctx: Ctx) -> None:
        """The type local `name` gets from its annotation or from the (unparenthesised) value `v`."""
        if ann is not None:
            self.set_type(name, short_type(self.txt(ann)), OwnerVia.DECLARED)
        elif v.type == "identifier" and self.txt(v) in self.types:
            self.types[name] = self.types[self.txt(v)]
        elif v.type == "attribute" and (obj := v.child_by_field_name("object")) is not None:
            recv = self.recv_of(ctx, "".join(self.txt(obj).split()))
            attr = v.child_by_field_name("attribute")
            path = f"{recv.owner}.{self.txt(attr)}" if recv.owner and attr is not None else ""
            self.set_type(name, path, recv.via)
        elif v.type == "call":
            found = self.value_type(v)
            self.set_type(name, found if found[:1].isupper() else "", OwnerVia.CONSTRUCTOR)
        elif self.types:
            self.types.pop(name, None)  # a literal or a computed value: not an object of a known type

    def _declare_field(self, cls: str, left: Node, attr: Node, ann: Node | None, v: Node, ctx: Ctx) -> None:
        """`self.attr = v` in a constructor: the field `attr` of class `cls`, with its type and default."""
        if ann is not None:
            type_ = short_type(self.txt(ann))
        elif v.type == "identifier":
            known = self.types.get(self.txt(v))  # a parameter's annotation
            type_ = known[0] if known and "." not in known[0] else ""
        else:
            type_ = self.value_type(v)
        source = canonical_expr(self.txt(v))
        default = self._init_default(v, source, ctx) if ctx.guard is None and ctx.init else None
        self.emit_field(cls, self.txt(attr), type_, default, left, DeclOrigin.INIT)

    def _init_default(self, value: Node, source: str, ctx: Ctx) -> str | None:
        """`self.x = x` takes the parameter's default; only constant values (literals, `Cls()`, `Enum.X`)
        are defaults, not values computed from parameters or locals (`self.x = cfg.x`)."""
        if value.type == "identifier":
            return dict(ctx.params).get(source)
        names = _NAME.findall(_STRING.sub('""', source))
        return source if all(n[:1].isupper() or n in _BUILTINS for n in names) else None

    # --- environment reads -----------------------------------------------------------------------

    def parses(self, parent: Node, child: Node) -> bool:
        if parent.type == "attribute":
            return parent.child_by_field_name("object") == child  # `·.lower()`, not `x.attr` of it
        if parent.type == "call":
            return (
                parent.child_by_field_name("arguments") == child
                or parent.child_by_field_name("function") == child
            )
        return True

    def env_call(self, call: Node, fn: Node, args: Node, ctx: Ctx) -> None:
        """`os.environ.get("X", d)`, `os.getenv("X")`, `get_env_bool("X", False)`: an environment read."""
        last = fn.child_by_field_name("attribute") if fn.type == "attribute" else fn
        name_text = self.txt(last) if last is not None else ""
        # Most calls are not environment reads: look at the callee's last name before its whole text.
        if not _ENVISH.search(name_text) and name_text not in ("get", "setdefault"):
            return
        accessor = env_accessor(canonical_expr(self.txt(fn)))
        if accessor is None:
            return
        positional = [a for a in _named(args) if a.type != "keyword_argument"]
        name = unquote(self.txt(positional[0])) if positional else None
        if not name or (not is_env_name(name) and not accessor.startswith(("os.", "getenv"))):
            return
        default: str | None = None
        if len(positional) > 1:
            default = canonical_expr(self.txt(positional[1]))
        for kw in _named(args):
            key, val = kw.child_by_field_name("name"), kw.child_by_field_name("value")
            named_default = key is not None and self.txt(key) in ("default", "default_value", "fallback")
            if kw.type == "keyword_argument" and named_default and val is not None:
                default = canonical_expr(self.txt(val))
        self.emit_env(ctx, name, default, accessor, call, helper_parse(accessor), _ENV_WRAPPERS)

    def _attribute_read(
        self, node: Node, obj: Node | None, attr: Node | None, ctx: Ctx, cnd: Cond | None, neg: bool
    ) -> None:
        """A read of `obj.attr` (with the type it lands in); `envs.X` is also an environment read."""
        raw = self.txt(node)
        on_self = obj is not None and obj.type == "identifier" and raw.startswith("self.")
        member = self.txt(attr) if on_self and attr is not None else None
        expr = canonical_expr(raw)
        # Only a path has a type to follow (`cfg.x`, `self.a.b`), not `f().x` or `xs[0].x`.
        path = obj is not None and obj.type in ("identifier", "attribute") and "." in raw
        recv = self.recv_of(ctx, "".join(raw.rsplit(".", 1)[0].split())) if path else NO_RECV
        self.read(ctx, expr, node, cnd, neg, member=member, recv=recv)
        env = env_attribute(expr)
        if env is not None:
            self.emit_env(ctx, env[0], None, env[1], node, "", _ENV_WRAPPERS)

    def is_environ(self, node: Node | None) -> bool:
        """`os.environ` / `environ`."""
        return node is not None and canonical_expr(self.txt(node)) in _ENVIRON

    def _environ_subscript(self, node: Node, value: Node, sub: Node, ctx: Ctx) -> None:
        """`os.environ["X"]`: an environment read without a default."""
        if self.is_environ(value):
            name = unquote(self.txt(sub))
            if name:
                self.emit_env(ctx, name, None, "os.environ[]", node, "", _ENV_WRAPPERS)
