"""What a validating function writes on the object it validates before a check (pure, apart from reading
the modules it imports through `read`).

A field written above the check (`args.x = ...`, `self.x += ...`, `setattr(args, "x", ...)`, `del args.x`,
`args.paths.append(p)`) no longer holds its default there. A call that is handed the object
(`finalize(args)`, `self.derive()`) may write it too:

- a builtin that only reads (`getattr(args, "x")`, `hasattr`, `isinstance`, `print`, `len`) writes nothing;
- a function of the same module (`load_retro_args(args)`), one imported from a module of the repository
  (`from pkg.utils import update_use_dist_ckpt`), or a method of the same class (`self.derive()`), writes
  what its body writes on the parameter it receives the object as, followed into the calls it makes in
  turn (three levels deep). Its body is read in order and stops at an early exit that the defaults take
  (`if args.retro_project_dir is None: return`, evaluated by `defaults.evaluate` with the fields written
  so far unknown): what follows does not run for them;
- any other call (a module the repository does not hold, a method of the object, `vars(args)`,
  `args.__dict__.update(...)`) may write any field: `ANY`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from reviewbot.analysis.defaults.evaluate import Evaluator, Operand, Unknown
from reviewbot.analysis.defaults.modules import Imported, imports_of, module_paths
from reviewbot.analysis.pyast import python_tree

__all__ = ["ANY", "Writes"]

ANY = "*"  # a call may have set any field: nothing is a default any more
_READERS = frozenset(
    {"getattr", "hasattr", "isinstance", "issubclass", "print", "len", "str", "repr", "id", "type", "format"}
)
_DEPTH = 3
_Function = ast.FunctionDef | ast.AsyncFunctionDef
Resolve = Callable[[str], Operand | None]
Read = Callable[[str], str | None]  # a head path -> its text


def _exits(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and bool(stmt.body) and isinstance(stmt.body[-1], ast.Return)


@dataclass(frozen=True)
class _Module:
    path: str
    functions: dict[str, _Function] = field(default_factory=dict)
    imports: dict[str, Imported] = field(default_factory=dict)

    @staticmethod
    def of(path: str, tree: ast.Module) -> _Module:
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        return _Module(path, functions, imports_of(tree))


class Writes:
    """The fields written before a line, for the functions of one module (`owner`: the class validated,
    "" for module functions validating `args`)."""

    def __init__(
        self, path: str, tree: ast.Module, owner: str, resolve: Resolve, read: Read | None = None
    ) -> None:
        self.resolve = resolve
        self.read = read
        self.module = _Module.of(path, tree)
        self.loaded: dict[str, _Module | None] = {path: self.module}
        self.methods: dict[str, _Function] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == owner:
                self.methods = {
                    n.name: n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                }

    def before(self, fn: _Function, line: int) -> set[str]:
        """What `fn` writes (on `self` / `args`) in the statements above `line`."""
        names = {"self": "self", "args": "args"}
        out: set[str] = set()
        for node in sorted(self._nodes(fn.body), key=lambda n: (n.lineno, n.col_offset)):
            if node.lineno < line:
                self._node(node, names, out, 0, self.module)
        return out

    @staticmethod
    def _nodes(body: Iterable[ast.stmt]) -> Iterable[ast.stmt | ast.expr]:
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete | ast.Call):
                    yield n

    def _node(self, node: ast.AST, names: dict[str, str], out: set[str], depth: int, module: _Module) -> None:
        """Adds what `node` writes; `names` maps a local name of the object to its name at the check."""
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [e for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call):
            self._call(node, names, out, depth, module)
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in names:
                out.add(f"{names[t.value.id]}.{t.attr}")

    def _call(
        self, call: ast.Call, names: dict[str, str], out: set[str], depth: int, module: _Module
    ) -> None:
        func = call.func
        name = func.id if isinstance(func, ast.Name) else ""
        if name == "setattr" or ast.unparse(func) == "object.__setattr__":
            _setattr(call, names, out)
            return
        if name in _READERS:
            return
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute | ast.Subscript):
            _field_method(func.value, names, out)
            return
        receiver, passed, by_name = _handed(call, names)
        if receiver not in names and not passed and not by_name:
            return  # the call is not handed the object
        if isinstance(func, ast.Attribute):
            callee, where = (self.methods.get(func.attr) if receiver == "self" else None), module
        else:
            callee, where = self._function(name, module)
        inner = None
        if callee is not None and depth < _DEPTH and not any(isinstance(a, ast.Starred) for a in call.args):
            inner = _bind(callee, names.get(receiver, ""), passed, by_name)
        if callee is None or inner is None:
            out.add(ANY)
            return
        self._body(callee.body, inner, out, depth + 1, where)

    def _function(self, name: str, module: _Module) -> tuple[_Function | None, _Module]:
        """The module function `name` calls: defined in `module`, or imported from a repository module."""
        if name in module.functions:
            return module.functions[name], module
        imported = module.imports.get(name)
        if imported is None:
            return None, module
        other = self._load(module.path, *imported[:2])
        if other is None:
            return None, module
        return other.functions.get(imported[2]), other

    def _load(self, importer: str, dotted: str, level: int) -> _Module | None:
        """The module `from dotted import ...` names (relative to `importer` when `level` > 0)."""
        for path in module_paths(importer, dotted, level):
            if path not in self.loaded:
                tree = python_tree(self.read(path)) if self.read is not None else None
                self.loaded[path] = _Module.of(path, tree) if tree is not None else None
            if self.loaded[path] is not None:
                return self.loaded[path]
        return None

    def _body(
        self, body: list[ast.stmt], names: dict[str, str], out: set[str], depth: int, module: _Module
    ) -> None:
        """A callee's statements in order, up to an early exit the defaults take."""
        for stmt in body:
            if _exits(stmt) and self._taken(stmt, names, out):
                return
            for node in sorted(self._nodes([stmt]), key=lambda n: (n.lineno, n.col_offset)):
                self._node(node, names, out, depth, module)
            if isinstance(stmt, ast.Return | ast.Raise):
                return

    def _taken(self, stmt: ast.stmt, names: dict[str, str], written: set[str]) -> bool:
        """Whether the defaults (fields written so far unknown) take the early exit `if ...: return`."""
        if ANY in written or not isinstance(stmt, ast.If):
            return False

        def resolve(text: str) -> Operand | None:
            local, _, rest = text.partition(".")
            if local not in names or not rest or "." in rest:
                return None
            outer = f"{names[local]}.{rest}"
            return None if outer in written else self.resolve(outer)

        try:
            return bool(Evaluator(resolve)(stmt.test))
        except (Unknown, TypeError, ZeroDivisionError, ValueError, OverflowError):
            return False


def _handed(call: ast.Call, names: dict[str, str]) -> tuple[str, dict[int, str], dict[str, str]]:
    """(the name a method is called on, positions and keywords the object is handed at)."""
    func = call.func
    receiver = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
    passed = {i: names[a.id] for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in names}
    by_name = {
        k.arg: names[k.value.id]
        for k in call.keywords
        if k.arg and isinstance(k.value, ast.Name) and k.value.id in names
    }
    return receiver, passed, by_name


def _bind(
    callee: _Function, receiver: str, passed: dict[int, str], by_name: dict[str, str]
) -> dict[str, str] | None:
    """The callee's parameter name for each object handed to it (`receiver`: the object a method is
    called on); None when one goes to `*args` / `**kwargs` (not followed)."""
    params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
    inner: dict[str, str] = {}
    if receiver:
        inner[params[0] if params else "self"] = receiver
        params = params[1:]
    inner.update({params[i]: v for i, v in passed.items() if i < len(params)})
    inner.update(by_name)
    return inner if len(inner) == len(passed) + len(by_name) + bool(receiver) else None


def _setattr(call: ast.Call, names: dict[str, str], out: set[str]) -> None:
    """`setattr(args, "x", v)` writes `x`; a key that is not a literal is left alone (a loop over the
    `defaults` a caller passes, which the all-defaults configuration does not have)."""
    first = call.args[0] if call.args else None
    key = call.args[1] if len(call.args) > 1 else None
    if (
        isinstance(first, ast.Name)
        and first.id in names
        and isinstance(key, ast.Constant)
        and isinstance(key.value, str)
    ):
        out.add(f"{names[first.id]}.{key.value}")


def _field_method(owner: ast.expr, names: dict[str, str], out: set[str]) -> None:
    """`args.paths.append(p)` changes `paths`; `args.__dict__.update(d)` may change anything."""
    node = owner
    while isinstance(node, ast.Attribute | ast.Subscript) and not (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    ):
        node = node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
        out.add(ANY if node.attr == "__dict__" else f"{names[node.value.id]}.{node.attr}")
