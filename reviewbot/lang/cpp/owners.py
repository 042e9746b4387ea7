"""C++ bodies, the owner model's half: receiver types, bindings to Python (pybind11, torch::jit
classes, and lists of them written with a macro), environment reads (`getenv`, env-like helpers).

`CppBody` (body.py) inherits this class; its statement and expression walk calls these methods.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from reviewbot.lang.common import canonical_expr
from reviewbot.lang.env import env_accessor, helper_parse, is_env_name, unquote
from reviewbot.lang.facts import AssignKind, Binding, BindingKind, OwnerVia
from reviewbot.lang.owners import short_type
from reviewbot.lang.treesitter import named as _named
from reviewbot.lang.walk.walker import NO_RECV, Ctx, Recv, Walker, short_class

__all__ = ["CppOwners", "BINDERS", "NOT_OPS", "CMP_OPS", "MEMBER_NAME"]

_ENVISH = re.compile(r"env|Env|ENV")
NOT_OPS = frozenset({"!", "not"})
CMP_OPS = frozenset({"==", "!=", "<", ">", "<=", ">="})
# Bare names read as members inside methods: snake/camel case, not kConstants or MACROS.
MEMBER_NAME = re.compile(r"(?!k[A-Z])[a-z_][A-Za-z0-9_]*")
BINDERS = {
    "def_readwrite": BindingKind.READWRITE,
    "def_readwrite_static": BindingKind.READWRITE,
    "def_readonly": BindingKind.READONLY,
    "def_readonly_static": BindingKind.READONLY,
    "def_property": BindingKind.PROPERTY,
    "def_property_static": BindingKind.PROPERTY,
    "def_property_readonly": BindingKind.READONLY,
    "def_property_readonly_static": BindingKind.READONLY,
    "def": BindingKind.METHOD,
}
# Nodes that turn an environment read's text into a value in place: `atoi(·)`, `std::string(·) == "1"`.
_ENV_WRAPPERS = frozenset(
    {
        "argument_list",
        "call_expression",
        "binary_expression",
        "unary_expression",
        "parenthesized_expression",
        "field_expression",
        "cast_expression",
        "condition_clause",
    }
)
_CLASS_TEMPLATE = re.compile(r"(?:^|::|\b)class_$")
# `#define DEF_PROPERTY(name, member) .def_readwrite(#name, &GptInitParameter::member)` (continued lines too)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\r?\n)*[^\n]*)", re.M)
_BIND_CALL = re.compile(r"\.(def_\w+)\(\s*\"(\w+)\"\s*,\s*&\s*([\w:]+)::(\w+)\s*\)")
_CLASS_DECL = re.compile(r"\bclass_\s*<\s*([\w:]+)\s*>\s*\(([^()]*)\)")
_QUOTED = re.compile(r"\"(\w+)\"")


class CppOwners(Walker):
    """Types, bindings and environment reads of C++ code (a base of `CppBody`)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.locals: set[str] = set()  # parameters and declared names of the current function
        # binding chain call id -> (bound class, Python name) of `class_<T>(m, "Name")`, see `_chain_root`
        self._chains: dict[int, tuple[str, str]] = {}

    def _op(self, node: Node) -> str:
        op = node.child_by_field_name("operator")
        return self.txt(op) if op is not None else ""

    def self_recv(self, ctx: Ctx) -> Recv:
        cls = short_class(ctx.cls)
        return Recv("this", cls, OwnerVia.SELF) if cls and ctx.method else NO_RECV

    def _recv(self, left: Node, ctx: Ctx) -> Recv:
        """The object `left` writes into (`cfg.x`, `this->x`, a bare member `x_`), with its type path."""
        if left.type == "identifier":
            return self.self_recv(ctx) if ctx.method and self.txt(left) not in self.locals else NO_RECV
        if left.type != "field_expression":
            return NO_RECV
        arg = left.child_by_field_name("argument")
        if arg is None:
            return NO_RECV
        raw = "".join(self.txt(arg).split()).replace("(*this)", "this").replace("->", ".")
        root = raw.split(".", 1)[0]
        member_root = ctx.method and root not in self.locals and MEMBER_NAME.fullmatch(root) is not None
        return self.recv_of(ctx, raw, member_root=member_root)

    def _track(self, name: str, declared: Node | None, value: Node | None, ctx: Ctx) -> None:
        """The type a local holds: declared (`ModelConfig c;`), or for `auto` the constructor's
        (`auto c = Cfg(...)`, `std::make_shared<Cfg>(...)`), or a path's (`auto& r = cfg.rope`)."""
        if declared is not None and declared.type not in ("placeholder_type_specifier", "primitive_type"):
            self.set_type(name, short_type(self.txt(declared)), OwnerVia.DECLARED)
            return
        if value is None:
            self.types.pop(name, None)
            return
        value = self.unparen(value)
        found, via = "", OwnerVia.CONSTRUCTOR
        if value.type in ("call_expression", "compound_literal_expression"):
            fn = value.child_by_field_name("function") or value.child_by_field_name("type")
            callee = self.txt(fn) if fn is not None else ""
            base = callee.split("<", 1)[0].replace("::", ".").rsplit(".", 1)[-1]
            if base in ("make_shared", "make_unique") and "<" in callee:
                found = short_type(
                    callee[callee.index("<") + 1 : callee.rindex(">")] if ">" in callee else ""
                )
            elif base[:1].isupper():
                found = short_type(callee)
        elif value.type == "field_expression":
            arg, fld = value.child_by_field_name("argument"), value.child_by_field_name("field")
            if arg is not None and fld is not None:
                raw = "".join(self.txt(arg).split()).replace("->", ".")
                recv = self.recv_of(ctx, raw, member_root=ctx.method and raw.split(".")[0] not in self.locals)
                found, via = (f"{recv.owner}.{self.txt(fld)}", recv.via) if recv.owner else ("", via)
        elif value.type == "identifier" and self.txt(value) in self.types:
            found, via = self.types[self.txt(value)]
        self.set_type(name, found, via)

    def parses(self, parent: Node, child: Node) -> bool:
        if parent.type == "binary_expression":
            return self._op(parent) in CMP_OPS
        if parent.type == "unary_expression":
            return self._op(parent) in NOT_OPS
        if parent.type == "field_expression":
            return parent.child_by_field_name("argument") == child
        if parent.type == "call_expression":
            return (
                parent.child_by_field_name("arguments") == child
                or parent.child_by_field_name("function") == child
            )
        return True

    def _env_call(self, call: Node, fn: Node, args: Node, ctx: Ctx) -> None:
        """`getenv("X")`, `std::getenv("X")`, `autil::EnvUtil::getEnv("X", false)`: an environment read."""
        last = fn.child_by_field_name("name") if fn.type == "qualified_identifier" else fn
        while last is not None and last.type == "qualified_identifier":
            last = last.child_by_field_name("name")
        if fn.type == "field_expression":
            last = fn.child_by_field_name("field")
        # Most calls are not environment reads: look at the callee's last name before its whole text.
        if last is None or not _ENVISH.search(self.txt(last)):
            return
        callee = canonical_expr(self.txt(fn)).split("<", 1)[0]
        accessor = env_accessor(callee)
        if accessor is None:
            return
        positional = _named(args)
        name = unquote(self.txt(positional[0])) if positional else None
        if not name or (not is_env_name(name) and accessor != "getenv"):
            return
        default = canonical_expr(self.txt(positional[1])) if len(positional) > 1 else None
        self.emit_env(ctx, name, default, accessor, call, helper_parse(accessor), _ENV_WRAPPERS)

    def _chain_root(self, node: Node | None) -> tuple[str, str]:
        """(bound class, Python name) of the binding chain a `.def...` call continues: the
        `py::class_<T>(m, "Name")` / `torch::jit::class_<T>("ns", "Name")` at its root; ("", "") unknown."""
        seen: list[int] = []
        found = ("", "")
        while node is not None and node.type == "call_expression":
            if node.id in self._chains:
                found = self._chains[node.id]
                break
            seen.append(node.id)
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "field_expression":
                node = fn.child_by_field_name("argument")
                continue
            callee = self.txt(fn) if fn is not None else ""
            if "<" in callee and _CLASS_TEMPLATE.search(callee.split("<", 1)[0].strip()):
                bound = short_type(
                    callee[callee.index("<") + 1 : callee.rindex(">")] if ">" in callee else ""
                )
                names = [unquote(self.txt(a)) for a in _named(node.child_by_field_name("arguments"))]
                found = (bound, next((n for n in reversed(names) if n), ""))
            break
        for i in seen:
            self._chains[i] = found
        return found

    def _binding(self, fn: Node, args: Node | None, ctx: Ctx) -> None:
        """pybind / torch `.def_readwrite("f", &T::f)`, `.def_property("f", get, set)`, `.def("m", &T::m)`:
        a Binding; a writable one is also an external writer of `T::f` (an Assignment of kind BINDING)."""
        method = fn.child_by_field_name("field")
        kind = BINDERS.get(self.txt(method)) if method is not None else None
        if method is None or kind is None:
            return
        arguments = _named(args)
        py_name = unquote(self.txt(arguments[0])) if arguments else None
        pointer = next((a for a in arguments if a.type == "pointer_expression"), None)
        member = pointer.child_by_field_name("argument") if pointer is not None else None
        if kind is BindingKind.METHOD and (not py_name or member is None):
            return  # `.def(py::init<>())`, `.def("f", [](...){...})`: no member to join
        bound, exposed = self._chain_root(fn.child_by_field_name("argument"))
        parts = canonical_expr(self.txt(member)).split(".") if member is not None else []
        owner = parts[-2] if len(parts) >= 2 else bound
        name = parts[-1] if parts else ""
        if py_name and owner:
            self.emit_binding(Binding(py_name, owner, name, kind, exposed, self.path, self.line(method)))
        if member is not None and kind is BindingKind.READWRITE and len(parts) >= 2:
            recv = Recv(owner, owner, OwnerVia.BINDING)
            target = ".".join(parts[-2:])
            self.emit_assign(ctx, target, self.txt(method), method, method, AssignKind.BINDING, recv=recv)

    def macro_bindings(self) -> None:
        """Bindings written through a function-like macro of this file, the usual way to list many:
        `#define DEF_PROPERTY(name, member) .def_readwrite(#name, &T::member)` and then
        `DEF_PROPERTY(head_num, head_num_)` (also inside another macro's body). A macro defined in
        another file (a shared header) is not expanded."""
        text = self.text
        if "#" not in text or "def_" not in text:
            return
        exposed: dict[str, str] = {}
        for m in _CLASS_DECL.finditer(text):
            names = _QUOTED.findall(m.group(2))
            if names:
                exposed.setdefault(short_type(m.group(1)), names[-1])
        for d in _DEFINE.finditer(text):
            name, params, body = d.group(1), [p.strip() for p in d.group(2).split(",")], d.group(3)
            if ".def_" not in body:
                continue
            end = len(text)
            undef = re.search(
                rf"^[ \t]*#[ \t]*(?:undef|define)[ \t]+{re.escape(name)}\b", text[d.end() :], re.M
            )
            if undef is not None:
                end = d.end() + undef.start()
            for call in re.finditer(rf"\b{re.escape(name)}\s*\(([^()]*)\)", text[d.end() : end]):
                args = [a.strip() for a in call.group(1).split(",")]
                if len(args) != len(params):
                    continue
                expanded = _expand(body, dict(zip(params, args, strict=True)))
                line = text.count("\n", 0, d.end() + call.start()) + 1
                for b in _BIND_CALL.finditer(expanded):
                    kind = BINDERS.get(b.group(1))
                    if kind is None or kind is BindingKind.METHOD:
                        continue
                    owner = short_type(b.group(3))
                    self.emit_binding(
                        Binding(b.group(2), owner, b.group(4), kind, exposed.get(owner, ""), self.path, line)
                    )
                    if kind is BindingKind.READWRITE:
                        self.binding_write(f"{owner}.{b.group(4)}", b.group(1), line)


def _literal(text: str) -> str:
    """`text` as a replacement template of `re.sub` that inserts it as written."""
    return text.replace("\\", "\\\\")


def _expand(body: str, args: dict[str, str]) -> str:
    """A macro body with its parameters replaced: `#p` -> `"arg"`, `p##_` -> `arg_`, `p` -> `arg`."""
    out = re.sub(r"\\\r?\n", " ", body)
    for param, arg in args.items():
        # Escaped replacements: an argument is code, its backslashes are no template escapes.
        out = re.sub(rf"#\s*{re.escape(param)}\b", _literal(f'"{arg}"'), out)
        out = re.sub(rf"\b{re.escape(param)}\b", _literal(arg), out)
    return out.replace("##", "").replace(" ## ", "")
