"""Call sites of a few files parsed in full, and how a call resolves to the function it runs.

The repository index walks only the functions that mention an interesting name, which is enough to
find where a flag is read but not what the code it gates goes on to call: the method of an object
built from the same config (`self.op = FusedOp(cfg)` then `self.op.forward(...)`), a method of the
same class, or a function that receives the config. `CallGraph` holds the full facts of the files
that matter for that (filled by `reviewbot.lang.follow`), the call sites in them and what each file
imports, and resolves a call site to the functions it may run. Resolution is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter_cpp
import tree_sitter_python
from tree_sitter import Node

from reviewbot.lang.common import canonical_expr, mentions_field
from reviewbot.lang.facts import FileFacts, Function, Lang, lang_for_path
from reviewbot.lang.treesitter import LazyParser, first_line, named, text

__all__ = [
    "CallSite",
    "Callee",
    "FileCalls",
    "CallGraph",
    "extract_calls",
    "owner_of",
    "construction",
    "split_callee",
]

_PY = LazyParser(tree_sitter_python.language)
_CPP = LazyParser(tree_sitter_cpp.language)

_TEMPLATE = re.compile(r"<[^<>()]*>")
_MAKE = re.compile(r"^(?:std\.)?make_(?:unique|shared)<(?P<cls>[\w.]+)>\((?P<args>.*)\)$")
_NEW = re.compile(r"^new (?P<cls>[\w.]+)\((?P<args>.*)\)$")
_CALL = re.compile(r"^(?P<cls>[A-Za-z_][\w.]*)\((?P<args>.*)\)$")
_SMART = re.compile(r"(?:unique_ptr|shared_ptr|optional)<\s*(?:const\s+)?(?P<cls>[\w:]+)\s*>")
# What calling an object runs, when the call names no method (`self.op(x)`, `op_(x)`).
CALL_METHODS = ("__call__", "forward", "operator()")
_MAX_ANCESTRY = 16  # base classes followed up from one class (guards against cyclic declarations)


@dataclass(frozen=True)
class CallSite:
    path: str
    line: int
    function: str | None  # the enclosing function (qualified, as in `Function.name`)
    callee: str  # canonical callee: `rope_kvcache_op.forward`, `apply_logn_scaling`, `std.make_unique<Op>`
    args: tuple[str, ...] = ()  # canonical arguments; keywords as `name=value`


@dataclass(frozen=True)
class Callee:
    """A function a call site may run, and how the call was resolved to it."""

    function: Function
    site: CallSite
    via: str = ""  # e.g. "`self.rope_kvcache_op = FusedRopeKVCacheOp(attn_configs)` (aiter.py:27)"
    # "member" (an object built elsewhere) | "method" (same class) | "function" | "constructor"
    kind: str = "function"
    built_with: tuple[str, ...] = ()  # constructor arguments of the object, for kind "member"
    cls: str = ""  # the class of the object the call is made on, for kind "member" (`FusedRopeDecodeOp`)


@dataclass(frozen=True)
class FileCalls:
    """What the call-following needs from one file besides its facts."""

    sites: tuple[CallSite, ...] = ()
    imports: tuple[str, ...] = ()  # raw specs: Python modules (`.ops`, `pkg.mod`) or C++ include paths
    member_types: tuple[tuple[str, str, str], ...] = ()  # (class, member, type) of C++ member declarations


def owner_of(function: str | None) -> str | None:
    """`AiterPrefillImpl.forward` -> `AiterPrefillImpl`; `ns::Impl::run` -> `Impl`; a free function -> None."""
    if not function:
        return None
    parts = function.replace("::", ".").split(".")
    return parts[-2] if len(parts) >= 2 else None


def _short(name: str) -> str:
    return name.replace("::", ".")


def construction(value: str) -> tuple[str, str] | None:
    """(class, argument text) when `value` builds an object: `Cls(a)`, `std.make_unique<Cls>(a)`, `new Cls(a)`."""
    for rx in (_MAKE, _NEW, _CALL):
        m = rx.match(value)
        if m:
            cls = m.group("cls").rsplit(".", 1)[-1]
            # A plain call builds an object only when it names a class (`FusedOp(cfg)`, not `op.run(x)`).
            if rx is _CALL and not cls[:1].isupper():
                return None
            return cls, m.group("args")
    return None


# --- extraction (tree-sitter) ---------------------------------------------------------------------


def _py_args(node: Node | None) -> tuple[str, ...]:
    out: list[str] = []
    for a in named(node):
        if a.type == "keyword_argument":
            name, value = a.child_by_field_name("name"), a.child_by_field_name("value")
            if name is not None and value is not None:
                out.append(f"{text(name)}={canonical_expr(text(value))}")
        else:
            out.append(canonical_expr(text(a)))
    return tuple(out)


def _py_import(node: Node) -> list[str]:
    if node.type == "import_from_statement":
        module = node.child_by_field_name("module_name")
        if module is None:
            return []
        base = text(module)
        # `from pkg import mod` may import a module: keep `pkg.mod` too (resolved only if it exists).
        names = [
            n.child_by_field_name("name") if n.type == "aliased_import" else n
            for n in node.children_by_field_name("name")
        ]
        sep = "" if base.endswith(".") else "."
        return [base] + [f"{base}{sep}{text(n)}" for n in names if n is not None]
    specs: list[str] = []
    for n in node.children_by_field_name("name"):
        inner = n.child_by_field_name("name") if n.type == "aliased_import" else n
        if inner is not None:
            specs.append(text(inner))
    return specs


def _cpp_member_type(node: Node) -> str | None:
    type_node = node.child_by_field_name("type")
    if type_node is None:
        return None
    raw = " ".join(text(type_node).split())
    m = _SMART.search(raw)
    name = m.group("cls") if m else _TEMPLATE.sub("", raw)
    name = name.split("::")[-1].strip()
    return name if name.isidentifier() else None


def _cpp_class_name(node: Node) -> str | None:
    name = node.child_by_field_name("name")
    return text(name).split("::")[-1] if name is not None else None


def extract_calls(path: str, source: str, facts: FileFacts) -> FileCalls:
    """Every call site of one file (with its enclosing function), its imports and C++ member types."""
    lang = lang_for_path(path)
    if lang is None:
        return FileCalls()
    parser = _PY if lang is Lang.PYTHON else _CPP
    root = parser.get().parse(source.encode("utf-8", "replace")).root_node
    sites: list[CallSite] = []
    imports: list[str] = []
    members: list[tuple[str, str, str]] = []
    stack: list[tuple[Node, str | None]] = [(root, None)]
    while stack:
        node, cls = stack.pop()
        kind = node.type
        if kind in ("call", "call_expression"):
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None:
                line = first_line(node)
                owner = facts.function_at(line)
                arg_texts = (
                    _py_args(args)
                    if lang is Lang.PYTHON
                    else tuple(canonical_expr(text(a)) for a in named(args))
                )
                sites.append(
                    CallSite(path, line, owner.name if owner else None, canonical_expr(text(fn)), arg_texts)
                )
        elif kind in ("import_statement", "import_from_statement"):
            imports.extend(_py_import(node))
        elif kind == "preproc_include":
            inc = node.child_by_field_name("path")
            if inc is not None and inc.type == "string_literal":
                imports.append(text(inc).strip('"'))
        elif kind in ("class_specifier", "struct_specifier"):
            cls = _cpp_class_name(node) or cls
        elif kind == "field_declaration" and cls is not None:
            decl = node.child_by_field_name("declarator")
            member_type = _cpp_member_type(node)
            if decl is not None and member_type is not None:
                member = re.sub(r"^[*&\s]+", "", text(decl)).split("[")[0].strip()
                if member.isidentifier():
                    members.append((cls, member, member_type))
        stack.extend((c, cls) for c in reversed(node.named_children))
    sites.sort(key=lambda s: (s.line, s.callee))
    return FileCalls(tuple(sites), tuple(dict.fromkeys(imports)), tuple(members))


# --- resolution (pure) ----------------------------------------------------------------------------


def split_callee(callee: str) -> list[str]:
    """`std.make_unique<Op>` -> [`std`, `make_unique`]; `rope_op.forward` -> [`rope_op`, `forward`]."""
    return [p for p in _TEMPLATE.sub("", callee).split(".") if p]


def _mentions_any(text_: str, names: Iterable[str]) -> bool:
    return any(mentions_field(text_, n) for n in names)


@dataclass
class CallGraph:
    """Full facts, call sites and resolved imports of the files followed for one round."""

    files: dict[str, FileFacts] = field(default_factory=dict)
    calls: dict[str, FileCalls] = field(default_factory=dict)
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)  # path -> repository paths
    # Every reader of the switch-like fields the followed code reads (`mentions.scan_readers`): files that
    # mention them, parsed apart from `files` so that they never change how a call resolves.
    readers: dict[str, FileFacts] = field(default_factory=dict)
    mentions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # field -> files mentioning it
    mention_lines: dict[str, dict[int, str]] = field(default_factory=dict)  # path -> line -> text
    widely_read: dict[str, int] = field(default_factory=dict)  # field -> files, when too many to parse
    # Config builders -> the helpers of their file they call, in the order they run: (the call lines on
    # the way, outermost first; path; helper). See `follow.builder_helpers`.
    helpers: dict[tuple[str, str], tuple[tuple[tuple[int, ...], str, str], ...]] = field(default_factory=dict)
    _by_name: dict[str, list[Function]] = field(default_factory=dict, repr=False, compare=False)
    _bases: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)
    _stamp: int = field(default=-1, repr=False, compare=False)

    def facts(self, path: str) -> FileFacts | None:
        return self.files.get(path)

    def sites_in(self, path: str, function: str | None, lines: Iterable[int] | None = None) -> list[CallSite]:
        """Call sites of `function` in `path`, optionally only on `lines`."""
        wanted = set(lines) if lines is not None else None
        found = self.calls.get(path)
        if found is None:
            return []
        return [s for s in found.sites if s.function == function and (wanted is None or s.line in wanted)]

    def _refresh(self) -> None:
        """Rebuild the by-name tables when files were added since the last look-up."""
        if self._stamp == len(self.files):
            return
        self._by_name = {}
        owners: dict[str, tuple[str, int, tuple[str, ...]]] = {}
        for facts in self.files.values():
            for fn in facts.functions:
                parts = _short(fn.name).split(".")
                self._by_name.setdefault(".".join(parts[-2:]), []).append(fn)
            for o in facts.owners:
                seen = owners.get(o.name)
                if seen is None or (o.path, o.line) < seen[:2]:
                    owners[o.name] = (o.path, o.line, o.bases)
        self._bases = {name: found[2] for name, found in owners.items()}
        self._stamp = len(self.files)

    def _named(self, qualified: str) -> list[Function]:
        """Every function in the graph named `qualified` (`Cls.method`, or a free `name`)."""
        self._refresh()
        found = self._by_name.get(qualified, [])
        # A free name matches only free functions (`helper`, not `Cls.helper`).
        return [fn for fn in found if "." in qualified or "." not in _short(fn.name)]

    def bases(self, cls: str) -> tuple[str, ...]:
        """Base classes of `cls` as declared in the followed files (the first declaration by path)."""
        self._refresh()
        return self._bases.get(cls, ())

    def ancestry(self, cls: str) -> list[str]:
        """`cls` and its base classes, nearest first (breadth first, in declaration order)."""
        out: list[str] = []
        frontier = [cls]
        while frontier and len(out) < _MAX_ANCESTRY:
            name = frontier.pop(0)
            if name not in out:
                out.append(name)
                frontier.extend(self.bases(name))
        return out

    def methods(self, path: str, cls: str, method: str) -> list[Function]:
        """`cls.method` as defined on the class or inherited from the nearest base that defines it."""
        for owner in self.ancestry(cls):
            found = self._functions(path, f"{owner}.{method}")
            if found:
                return found
        return []

    def _functions(self, path: str, qualified: str) -> list[Function]:
        """Functions named `qualified`, nearest first: the same file, then its imports, then any file."""
        found = self._named(qualified)
        if not found:
            return []
        for near in (path, *self.imports.get(path, ())):
            hits = [fn for fn in found if fn.path == near]
            if hits:
                return hits
        first = min(fn.path for fn in found)
        return [fn for fn in found if fn.path == first]

    def binding(self, site: CallSite, name: str) -> tuple[str, str, int, str] | None:
        """(class, argument text, line, statement) of the object `name` a call at `site` is made on.

        A member bound in the caller's class (`self.name = Cls(...)`, a C++ member initialiser or a
        declared member type) or a local bound earlier in the same function.
        """
        facts = self.files.get(site.path)
        if facts is None:
            return None
        cls = owner_of(site.function)
        best: tuple[str, str, int, str] | None = None
        for a in facts.assignments:
            if a.field != name or "." in a.target:
                continue
            local = a.function == site.function and a.line < site.line
            in_class = cls is not None and owner_of(a.function) == cls
            built = construction(a.value)
            if built is not None and (local or in_class):
                own_line = a.text.lstrip().startswith((name, f"self.{name}", f"this->{name}"))
                # A C++ member initialiser sits in the constructor's line: show just the member's part.
                best = (built[0], built[1], a.line, a.text if own_line else f"{name}({a.value})")
                if local:
                    break
        if best is not None:
            return best
        calls = self.calls.get(site.path)
        for owner, member, member_type in calls.member_types if calls else ():
            if owner == cls and member == name:
                inits = [a for a in facts.assignments if a.field == name and owner_of(a.function) == cls]
                args = inits[0].value if inits else ""
                line = inits[0].line if inits else 0
                return member_type, args, line, inits[0].text if inits else f"{member_type} {name}"
        return None

    def resolve(self, site: CallSite, roots: Iterable[str] | None = None) -> list[Callee]:
        """Functions the call may run. With `roots` (names that hold the config), objects and free
        functions are followed only when they are built from / handed one of them."""
        parts = split_callee(site.callee)
        if not parts:
            return []
        root_names = set(roots) if roots is not None else None
        cls = owner_of(site.function)
        if len(parts) >= 2:
            obj, method = parts[-2], parts[-1]
            bound = self.binding(site, obj)
            if bound is not None:
                return self._members(site, bound, (method,), root_names)
            # `Cls.method(...)` / `module.function(...)`
            return [
                Callee(fn, site, kind="function")
                for fn in self._functions(site.path, f"{obj}.{method}") or self._functions(site.path, method)
                if root_names is None or _mentions_any(",".join(site.args), root_names)
            ]
        name = parts[0]
        if cls is not None:
            own = self.methods(site.path, cls, name)
            if own:
                return [Callee(fn, site, kind="method") for fn in own]
            bound = self.binding(site, name)
            if bound is not None:
                return self._members(site, bound, CALL_METHODS, root_names)
        if root_names is not None and not _mentions_any(",".join(site.args), root_names):
            return []
        free = self._functions(site.path, name)
        if free:
            return [Callee(fn, site, kind="function") for fn in free]
        ctor = self._functions(site.path, f"{name}.__init__") or self._functions(site.path, f"{name}.{name}")
        return [Callee(fn, site, kind="constructor") for fn in ctor]

    def _members(
        self,
        site: CallSite,
        bound: tuple[str, str, int, str],
        methods: tuple[str, ...],
        roots: set[str] | None,
    ) -> list[Callee]:
        cls_name, args, line, stmt = bound
        if roots is not None and not _mentions_any(args, roots):
            return []
        via = f"`{stmt}` ({site.path}:{line})" if line else f"`{stmt}`"
        for method in methods:
            found = self.methods(site.path, cls_name, method)
            if found:
                return [
                    Callee(fn, site, via=via, kind="member", built_with=(args,), cls=cls_name) for fn in found
                ]
        return []
