"""Defaults a text states next to the value they document, before and after a change (pure).

A *documented default* is a value with the text that documents it:

- Python: an `add_argument(..., default=V, help="... (default: V)")`; a class-body field `x: T = V` (or
  `Field(default=V, description=...)`, `field(default=V)`) with its docstring below, its comment on the
  line or the comment lines right above; a function parameter `x=V` with the paragraph of the
  function's docstring that names it (`x (int): ... Defaults to V.`).
- C++: a member initialiser `int32_t n_ctx = 512; // ... (default: 512)` with its trailing comment or the
  comment lines right above.

The *stated* default is the word after `default`/`defaults to`/`default is`/`default:`/`(default V)` in
the text. A documented default is *stale* when the change alters the value (its line is added) from the
base's value, which the text still states, to another one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side

__all__ = ["StaleDefault", "norm_default", "stale_defaults", "stated_default"]


@dataclass(frozen=True)
class StaleDefault:
    path: str
    line: int  # the value's line in the head
    name: str
    what: str  # help | docstring | comment | description
    stated: str
    old: str
    new: str
    value_text: str  # the value's line, as written (stripped)
    doc_line: int
    doc_text: str  # the documenting line, as written (stripped)
    value_path: str = ""  # where the value is set, when not in `path` (a doc file names another file's value)
    field: str = ""  # the field the value belongs to, when `name` is an option or key naming it


@dataclass(frozen=True)
class _Doc:
    key: str
    name: str
    value: str
    line: int
    what: str
    doc: str
    doc_line: int


_STATED = re.compile(
    r"(?i)\bdefaults?\b(?:\s*(?:value|is|to|=|:|of|set\s+to|being)\b)*\s*[:=]?\s*[`'\"]?([-+]?[\w.]+)"
)


def stated_default(doc: str) -> str | None:
    m = _STATED.search(doc)
    if m is None:
        return None
    word = m.group(1).rstrip(".,;")
    if (
        not word
        or word.startswith("%")
        or word.lower() in {"the", "a", "an", "this", "it", "is", "to", "value"}
    ):
        return None
    return word


def norm_default(v: str) -> str:
    """A default as written, canonical enough to compare: no quotes, `true`/`false`/`none` for the
    spellings of each, numbers as floats (`2048` == `2048.0`, `0.5f` == `0.5`)."""
    v = v.strip().strip("`'\"").rstrip(".,;").strip()
    low = v.lower()
    if low in {"true", "on", "yes", "enabled"}:
        return "true"
    if low in {"false", "off", "no", "disabled"}:
        return "false"
    if low in {"none", "null", "nullptr"}:
        return "none"
    num = re.sub(r"(?<=\d)[fFlLuU]+$", "", v)
    try:
        return repr(float(num))
    except ValueError:
        return low


def _segment(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node) or ""


def _strings(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _strings(node.left), _strings(node.right)
        return a + b if a is not None and b is not None else None
    return None


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _comment_above(lines: list[str], line: int) -> tuple[str, int] | None:
    i = line - 2
    got: list[str] = []
    while i >= 0 and lines[i].strip().startswith(("#", "//")):
        got.insert(0, lines[i].strip().lstrip("#/ ").strip())
        i -= 1
    return (" ".join(got), i + 2) if got else None


def _trailing(line: str, marker: str) -> str | None:
    m = re.search(r"\s" + re.escape(marker) + r"\s?(.*)$", line)
    return m.group(1).strip() if m else None


def _docs_with_line(docs: list[tuple[str, int]], stated_only: bool = True) -> tuple[str, int] | None:
    for doc, n in docs:
        if stated_default(doc) is not None:
            return doc, n
    return None


def _py_docs(text: str) -> list[_Doc]:
    tree = python_tree(text)
    if tree is None:
        return []
    lines = text.split("\n")
    out: list[_Doc] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            flag = _flag_doc(node, text)
            if flag is not None:
                out.append(flag)
        elif isinstance(node, ast.ClassDef):
            body = node.body
            for i, st in enumerate(body):
                if (
                    not isinstance(st, ast.AnnAssign)
                    or not isinstance(st.target, ast.Name)
                    or st.value is None
                ):
                    continue
                field = _field_doc(
                    node.name,
                    st,
                    st.target,
                    st.value,
                    body[i + 1] if i + 1 < len(body) else None,
                    text,
                    lines,
                )
                if field is not None:
                    out.append(field)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.extend(_param_docs(node, text))
    return out


def _flag_doc(node: ast.Call, text: str) -> _Doc | None:
    """`add_argument("--x", default=d, help="...")`: the help text of flag `--x` next to its default."""
    default, help_ = _kw(node, "default"), _kw(node, "help")
    doc = _strings(help_)
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if default is None or help_ is None or doc is None or not names:
        return None
    name = max(names, key=len)
    return _Doc(f"flag:{name}", name, _segment(text, default), default.lineno, "help", doc, help_.lineno)


def _field_doc(
    cls: str,
    st: ast.AnnAssign,
    target: ast.Name,
    assigned: ast.expr,
    nxt: ast.stmt | None,
    text: str,
    lines: list[str],
) -> _Doc | None:
    """`x: T = d` in class `cls` (or `= Field(d, description=...)`): the first of its description,
    the docstring after it (`nxt`), its trailing comment and the comment above that states a default."""
    value = assigned
    docs: list[tuple[str, int]] = []
    if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
        fname = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
        if fname in {"Field", "field"}:
            d = _kw(value, "default")
            if d is None and fname == "Field" and value.args:
                d = value.args[0]
            desc = _strings(_kw(value, "description"))
            if desc is not None:
                docs.append((desc, value.lineno))
            if d is None:
                return None
            value = d
    if isinstance(nxt, ast.Expr) and (s := _strings(nxt.value)) is not None:
        docs.append((s, nxt.lineno))
    tail = _trailing(lines[st.lineno - 1], "#")
    if tail:
        docs.append((tail, st.lineno))
    above = _comment_above(lines, st.lineno)
    if above:
        docs.append(above)
    found = _docs_with_line(docs)
    if not found:
        return None
    what = "description" if found[1] == assigned.lineno and tail is None else "docstring"
    if tail is not None and found[0] == tail or above is not None and found == above:
        what = "comment"
    return _Doc(
        f"field:{cls}.{target.id}", target.id, _segment(text, value), st.lineno, what, found[0], found[1]
    )


def _param_docs(node: ast.FunctionDef | ast.AsyncFunctionDef, text: str) -> list[_Doc]:
    """Parameters whose paragraph in the function's docstring states a default, next to the default."""
    docstring = ast.get_docstring(node, clean=False)
    if not docstring or not node.body:
        return []
    out: list[_Doc] = []
    first = node.body[0].lineno
    dlines = docstring.split("\n")
    a = node.args
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=False))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is not None]
    for p, d in pairs:
        para = _param_paragraph(dlines, p.arg)
        if para is None:
            continue
        doc, k = para
        if stated_default(doc) is None:
            continue
        out.append(
            _Doc(
                f"param:{node.name}.{p.arg}", p.arg, _segment(text, d), d.lineno, "docstring", doc, first + k
            )
        )
    return out


def _param_paragraph(dlines: list[str], name: str) -> tuple[str, int] | None:
    head = re.compile(r"^\s*(?::param\s+(?:\w+\s+)?)?\*{0,2}" + re.escape(name) + r"\b\s*(?:\([^)]*\))?\s*:")
    for i, line in enumerate(dlines):
        if head.match(line):
            indent = len(line) - len(line.lstrip())
            got = [line.strip()]
            for nxt in dlines[i + 1 :]:
                if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                got.append(nxt.strip())
            return " ".join(got), i
    return None


_CPP_MEMBER = re.compile(
    r"^\s*(?:const\s+|static\s+|mutable\s+)*[\w:]+(?:\s*<[^;]*>)?[\s\*&]+(\w+)\s*(?:=\s*([^;{]+?)|\{([^;{}]*)\})\s*;"
)


def _cpp_docs(text: str) -> list[_Doc]:
    lines = text.split("\n")
    out: list[_Doc] = []
    seen: dict[str, int] = {}
    for i, line in enumerate(lines):
        m = _CPP_MEMBER.match(line)
        if not m or line.lstrip().startswith(("return", "//")):
            continue
        name = m.group(1)
        value = (m.group(2) if m.group(2) is not None else m.group(3) or "").strip()
        seen[name] = seen.get(name, 0) + 1
        docs: list[tuple[str, int]] = []
        tail = _trailing(line, "//")
        if tail:
            docs.append((tail, i + 1))
        above = _comment_above(lines, i + 1)
        if above:
            docs.append(above)
        found = _docs_with_line(docs)
        if found and value:
            out.append(_Doc(f"member:{name}", name, value, i + 1, "comment", found[0], found[1]))
    return [d for d in out if seen.get(d.name, 0) == 1]


def _docs(path: str, text: str) -> list[_Doc]:
    if path.endswith(".py"):
        return _py_docs(text)
    if re.search(r"\.(?:cc|cpp|cxx|h|hpp|cuh?)$", path):
        return _cpp_docs(text)
    return []


def stale_defaults(
    changed: Iterable[Side], texts: dict[str, tuple[str | None, str | None]]
) -> list[StaleDefault]:
    """The documented defaults whose value the change alters while the text still states the old one."""
    out: list[StaleDefault] = []
    for s in changed:
        base_text, head_text = texts.get(s.path, (None, None))
        if not base_text or not head_text or not s.added:
            continue
        before: dict[str, list[_Doc]] = {}
        for d in _docs(s.old_path, base_text):
            before.setdefault(d.key, []).append(d)
        head_lines = head_text.split("\n")
        for d in _docs(s.path, head_text):
            if d.line not in s.added:
                continue
            old = before.get(d.key)
            if not old or len(old) != 1:
                continue
            stated = stated_default(d.doc)
            if stated is None:
                continue
            o = old[0]
            if norm_default(o.value) == norm_default(d.value) or norm_default(stated) != norm_default(
                o.value
            ):
                continue
            out.append(
                StaleDefault(
                    s.path,
                    d.line,
                    d.name,
                    d.what,
                    stated,
                    o.value,
                    d.value,
                    head_lines[d.line - 1].strip(),
                    d.doc_line,
                    head_lines[d.doc_line - 1].strip(),
                )
            )
    return out
