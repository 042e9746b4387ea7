"""Placeholders for required arguments the code that runs never reads.

`InferenceEngine(model, config)`, `BlendedMegatronDatasetConfig(random_seed, sequence_length)`,
`create_config(ckpt_path, config)`: a constructor or a function requires an argument that no column of
the table gives and no call in the repository gives as a literal. When the code the harness runs (the
constructor, the changed method, and every method of the class they call on `self`; or the changed
function) never reads that argument, its value cannot decide a row: the harness passes a placeholder
of its annotated type (`int` 0, `str` "", `bool` False, a list [], `X | None` None, ...) and the
generated test says which arguments are placeholders. When that code reads it (directly, through the
attribute it is stored on, or by handing `self` or the value to other code), a placeholder would
decide the rows: there is no harness, and the reason names the argument read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

__all__ = ["PLACEHOLDERS", "class_placeholders", "function_placeholders", "placeholder"]

PLACEHOLDERS = "placeholders (never read by the code the test runs)"
_Def = ast.FunctionDef | ast.AsyncFunctionDef
# A bare annotation -> the placeholder of that type (Python source).
_OF_TYPE = {
    "int": "0",
    "float": "0.0",
    "str": "''",
    "bytes": "b''",
    "bool": "False",
    "list": "[]",
    "List": "[]",
    "Sequence": "[]",
    "dict": "{}",
    "Dict": "{}",
    "Mapping": "{}",
    "tuple": "()",
    "Tuple": "()",
    "set": "set()",
    "Set": "set()",
    "None": "None",
    "Any": "None",
}
_VALIDATED = ("pydantic",)  # kinds whose constructor checks a value against its annotation


def _name(node: ast.expr) -> str:
    return ast.unparse(node).rsplit(".", 1)[-1]


def _optional(annotation: ast.expr) -> bool:
    """`X | None`, `Optional[X]`, `Union[X, None]`: the annotation admits None."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _optional(annotation.left) or _optional(annotation.right)
    if isinstance(annotation, ast.Constant):
        return annotation.value is None or (
            isinstance(annotation.value, str) and "None" in annotation.value.split("|")
        )
    if isinstance(annotation, ast.Subscript):
        outer = _name(annotation.value)
        if outer == "Optional":
            return True
        if outer == "Union":
            inner = annotation.slice
            parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return any(_optional(p) for p in parts)
    return False


def placeholder(annotation: ast.expr | None, kind: str) -> str | None:
    """The placeholder (Python source) of an argument annotated `annotation`; None when a `kind` that
    validates its values (pydantic) would reject any value this can give."""
    if annotation is None:
        return None if kind in _VALIDATED else "None"
    if _optional(annotation):
        return "None"
    if isinstance(annotation, ast.Subscript) and _name(annotation.value) in ("InitVar", "Annotated", "Final"):
        inner = annotation.slice
        return placeholder(inner.elts[0] if isinstance(inner, ast.Tuple) else inner, kind)
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip().split("[", 1)[0].rsplit(".", 1)[-1]
    else:
        text = _name(node)
    found = _OF_TYPE.get(text)
    if found is not None:
        return found
    return None if kind in _VALIDATED else "None"


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _loads(fn: _Def, name: str) -> bool:
    """`fn` reads the name `name` (nested functions and lambdas included)."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(fn))


def _plain_stores(fn: _Def, name: str) -> tuple[set[str], bool]:
    """Attributes `self.x = name` stores the argument on, and whether `fn` reads it otherwise."""
    stored: set[str] = set()
    plain: set[int] = set()
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Name)
            and n.value.id == name
            and all(isinstance(t, ast.Attribute) and _is_self(t.value) for t in n.targets)
        ):
            stored.update(t.attr for t in n.targets if isinstance(t, ast.Attribute))
            plain.add(id(n.value))
    other = any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in plain
        for n in ast.walk(fn)
    )
    return stored, other


def _opaque(fn: _Def) -> str:
    """How `fn` lets other code see all of `self` ("" when it does not): `self` passed to a call, its
    `__dict__`, `getattr(self, name)` with a computed name, or `super()`."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            if any(_is_self(a) for a in (*n.args, *(k.value for k in n.keywords))):
                return f"passes `self` to `{ast.unparse(n.func)}`"
            if isinstance(n.func, ast.Name) and n.func.id == "super":
                return "calls `super()`"
            if (
                isinstance(n.func, ast.Name)
                and n.func.id == "getattr"
                and n.args
                and _is_self(n.args[0])
                and not (len(n.args) > 1 and isinstance(n.args[1], ast.Constant))
            ):
                return "reads `getattr(self, ...)` with a computed name"
        if isinstance(n, ast.Attribute) and _is_self(n.value) and n.attr == "__dict__":
            return "reads `self.__dict__`"
    return ""


def _self_reads(fn: _Def) -> set[str]:
    """Attributes `fn` reads on `self` (loads, augmented writes, and `getattr(self, "x")`)."""
    augmented = {id(n.target) for n in ast.walk(fn) if isinstance(n, ast.AugAssign)}
    out = {
        n.attr
        for n in ast.walk(fn)
        if isinstance(n, ast.Attribute)
        and _is_self(n.value)
        and (isinstance(n.ctx, ast.Load) or id(n) in augmented)
    }
    out |= {
        n.args[1].value
        for n in ast.walk(fn)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "getattr"
        and len(n.args) > 1
        and _is_self(n.args[0])
        and isinstance(n.args[1], ast.Constant)
        and isinstance(n.args[1].value, str)
    }
    return out


def _run(cls: ast.ClassDef, entry: Iterable[str]) -> tuple[list[_Def], str]:
    """The methods of `cls` that run from `entry` (each and every method they call on `self`), and a
    method called on `self` that the class body does not define ("" when none)."""
    methods = {n.name: n for n in cls.body if isinstance(n, _Def)}
    seen: dict[str, _Def] = {}
    todo = [m for m in entry if m in methods]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen[name] = methods[name]
        for n in ast.walk(methods[name]):
            if (
                isinstance(n, ast.Attribute)
                and _is_self(n.value)
                and isinstance(n.ctx, ast.Load)
                and n.attr in methods
            ):
                todo.append(n.attr)
    called = {
        n.func.attr
        for fn in seen.values()
        for n in ast.walk(fn)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _is_self(n.func.value)
    }
    unknown = sorted(c for c in called if c not in methods)
    return list(seen.values()), unknown[0] if unknown else ""


def _annotations(cls: ast.ClassDef, kind: str) -> dict[str, ast.expr | None]:
    """Argument -> annotation: the constructor's parameters (a plain class) or the declared fields."""
    if kind == "class":
        init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            return {}
        a = init.args
        return {p.arg: p.annotation for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    return {
        s.target.id: s.annotation
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    }


def _read_in_class(cls: ast.ClassDef, kind: str, run: Sequence[_Def], argument: str) -> bool:
    """The code that runs reads the constructor argument `argument` (or the attribute it lands on)."""
    attributes = {argument} if kind != "class" else set()
    for fn in run:
        if fn.name == "__post_init__" and _loads(fn, argument):
            return True  # a dataclass `InitVar` reaches `__post_init__` as a parameter
        if kind == "class" and fn.name == "__init__":
            stored, other = _plain_stores(fn, argument)
            if other:
                return True
            attributes |= stored
    return any(attributes & _self_reads(fn) for fn in run)


def class_placeholders(
    cls: ast.ClassDef, kind: str, required: Sequence[str], entry: Sequence[str]
) -> tuple[tuple[str, str], ...] | str:
    """Placeholders for the constructor's `required` arguments, or why there are none (`entry`: the
    methods the harness runs: the constructor and the changed method)."""
    run, unknown = _run(cls, entry)
    owner = cls.name
    if kind in _VALIDATED and any(
        "validator" in ast.unparse(d) for f in cls.body if isinstance(f, _Def) for d in f.decorator_list
    ):
        return f"`{owner}` has validators, which read its fields: a placeholder for {_shown(required)} could decide the rows"
    for fn in run:
        opaque = _opaque(fn)
        if opaque:
            return f"`{owner}.{fn.name}` {opaque}: a placeholder for {_shown(required)} could decide the rows"
    if unknown:
        return (
            f"`{owner}` calls `self.{unknown}`, which it does not define: a placeholder for "
            f"{_shown(required)} could decide the rows"
        )
    annotations = _annotations(cls, kind)
    out = []
    for name in required:
        if _read_in_class(cls, kind, run, name):
            runs = ", ".join(f"`{f.name}`" for f in run)
            return f"the code the test runs ({runs}) reads `{name}`: a placeholder would decide the rows"
        value = placeholder(annotations.get(name), kind)
        if value is None:
            return f"`{name}` of `{owner}` is validated as `{ast.unparse(annotations[name] or ast.Constant(None))}`: no placeholder fits"
        out.append((name, value))
    return tuple(out)


def function_placeholders(
    fn: _Def, required: Sequence[str], annotations: dict[str, ast.expr | None]
) -> tuple[tuple[str, str], ...] | str:
    """Placeholders for a function's `required` parameters, or why there are none."""
    read = [r for r in required if _loads(fn, r)]
    if read:
        return f"`{fn.name}` reads {_shown(read)}: a placeholder would decide the rows"
    return tuple((r, placeholder(annotations.get(r), "function") or "None") for r in required)


def _shown(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
