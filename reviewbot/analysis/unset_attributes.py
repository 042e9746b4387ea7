"""`self.X` and `args.X` reads a change adds where nothing in the repository ever sets or defines `X`
(pure, apart from searching the head tree).

pyflakes judges names, not attributes: `if self.decrypted_config_file:` in a new code path raises
`AttributeError` on its first run when no class ever assigns `decrypted_config_file`. The test is the
repository's text, not a class model (which would have to follow inheritance across files): the read
is reported only when the attribute's name appears on no line of the head tree but the change's own
added lines, and there never as something that sets or defines it (`self.X = ...`, `X: int = ...`, a
tuple target, `def X`, `class X`, a parameter, a keyword, a quoted `"X"` for `setattr`/`getattr`/a dict).
The same holds for a command-line namespace (`args.X`, `opts.X` in a file that parses the command
line, fetches Megatron's `get_args()` or registers options), whose attributes are the destinations of registered options: an option
string counts as its destination (`"--use-foo"` names `use_foo`), and so does a config key or a field.
In a script that builds the one parser its namespace comes from, an `args.X` its parser never registers
is reported whatever other files name (`analysis.cli_namespace`).

Not judged: test files, lines over 400 characters, a change with more than 20 such names (generated
code or a bulk edit), dunder names, methods of a class that inherits from anything but `object` and
the classes of its own file that are judged (`class Worker(vllm.Worker)`, `nn.Module`, a repository
base that extends one or defines `__getattr__`: code the search cannot follow may set the attribute),
and a file that makes attributes on `self` dynamically (defines
`__getattr__`, calls `setattr(self, ...)`, writes `self.__dict__` or `vars(self)`, or the same on
`args`): those attributes need not be written anywhere.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from reviewbot.analysis.cli_namespace import NAMESPACES, unregistered_reads
from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side
from reviewbot.analysis.undefined_names import function_at, scopes, use_reach
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree, read_many

__all__ = ["UnsetAttribute", "unset_attributes"]

_DYNAMIC = re.compile(
    r"def\s+__getattr(?:ibute)?__|\bsetattr\s*\(\s*(?:self|args)\b|\b(?:self|args)\.__dict__"
    r"|\bvars\s*\(\s*(?:self|args)\s*\)"
)
# A command-line namespace (`NAMESPACES`: `args = parser.parse_args()`, Megatron's `args = get_args()`):
# its attributes are the destinations of the options the repository registers (`--use-foo` -> `use_foo`).
# A file whose `args` is the repository's own command line: it parses one, fetches Megatron's global
# one, or registers options (an `args` of a library's class, `TrainingArguments`, has fields the
# repository never names).
_OWN_NAMESPACE = re.compile(r"\b(?:parse_args|parse_known_args|get_args|add_argument)\s*\(")
_MAX_FILES = 200
_MAX_LINE = 400  # a longer line is generated or data (a 15,000-term guard), not a hand-written read
_MAX_NAMES = 20  # more unset names in one change is a bulk edit or generated code: nothing is judged


@dataclass(frozen=True)
class UnsetAttribute:
    path: str
    line: int
    name: str  # the attribute, without `self.`
    function: str  # qualified enclosing function ("" at module level)
    text: str  # the source line, stripped
    receiver: str = "self"  # `self`, or a command-line namespace (`args`)
    more: tuple[str, ...] = ()  # other unset attributes the same function reads on the same receiver
    conditional: bool = False  # in the body of an `if` / `while` / `except` / `match` arm: some passes only
    # an `args.X` the file's own parser never registers (`analysis.cli_namespace`), whatever other files name
    unregistered: bool = False
    # only builds the message of a failing `assert` or of a `raise` (`use_reach`): the error comes anyway
    message: bool = False


def _reads(
    tree: ast.AST, added: frozenset[int], inheriting: set[ast.ClassDef], namespaces: bool = True
) -> list[tuple[int, str, str]]:
    """(line, attribute, receiver) of `self.X` loads on added lines outside the `inheriting` classes, and
    of `args.X` loads of a command-line namespace."""
    skipped = {(c.lineno, c.end_lineno or c.lineno) for c in inheriting}
    out: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.lineno in added
            and not (node.attr.startswith("__") and node.attr.endswith("__"))
        ):
            continue
        receiver = node.value.id
        if (namespaces and receiver in NAMESPACES) or (
            receiver == "self" and not any(lo <= node.lineno <= hi for lo, hi in skipped)
        ):
            out.append((node.lineno, node.attr, receiver))
    return sorted(set(out))


def _conditional_lines(tree: ast.AST) -> set[int]:
    """Lines inside a branch that only some passes take: the bodies of `if` / `while` / `match` arms,
    `except` clauses and conditional expressions (not their tests, which every pass evaluates)."""
    out: set[int] = set()

    def span(nodes: list[ast.stmt] | list[ast.expr]) -> None:
        for n in nodes:
            out.update(range(n.lineno, (n.end_lineno or n.lineno) + 1))

    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While):
            span(node.body)
            span(node.orelse)
        elif isinstance(node, ast.IfExp):
            span([node.body, node.orelse])
        elif isinstance(node, ast.ExceptHandler | ast.match_case):
            span(node.body)
    return out


def _inheriting(module: ast.Module) -> set[ast.ClassDef]:
    """Classes with a base other than `object` that is not a class of this file judged itself: a base
    from another module (a library's `nn.Module`, `vllm.Worker`, or a repository class that extends
    one, or defines `__getattr__`) may set attributes the tree never names."""
    classes = [c for c in ast.walk(module) if isinstance(c, ast.ClassDef)]
    local = {c.name: c for c in classes}
    out: set[ast.ClassDef] = set()
    grew = True
    while grew:  # a base of this file that inherits is inheriting too (BloomModel(BloomPreTrained))
        grew = False
        for cls in classes:
            if cls not in out and any(_outside(b, local, out) for b in cls.bases):
                out.add(cls)
                grew = True
    return out


def _outside(base: ast.expr, local: dict[str, ast.ClassDef], known: set[ast.ClassDef]) -> bool:
    if isinstance(base, ast.Name):
        if base.id == "object":
            return False
        return base.id not in local or local[base.id] in known
    return True  # `nn.Module`, `Generic[T]`, `make_base()`: from elsewhere


def _defined(tree: ast.AST) -> set[str]:
    """Names a module sets or defines: attribute stores, definitions, parameters, keywords, quoted
    strings, assignment targets (class fields)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
            out.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)
            out.add(_destination(node.value))
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[-1])
    return out


def unset_attributes(
    changed: Iterable[Side],
    heads: dict[str, str | None],
    tree: RepoTree | None,
    excluded: Callable[[str], bool] | None = None,
) -> list[UnsetAttribute]:
    """The change's `self.X` reads of attributes nothing sets or defines (see the module doc)."""
    if tree is None:
        return []
    wanted: dict[str, list[UnsetAttribute]] = {}
    unregistered: list[UnsetAttribute] = []
    own: dict[str, frozenset[int]] = {}
    defined: set[str] = set()
    for s in changed:
        text = heads.get(s.path)
        if not s.path.endswith(".py") or text is None or is_test_path(s.path) or not s.added:
            continue
        if _DYNAMIC.search(text):
            continue
        module = python_tree(text)
        if module is None:
            continue
        own[s.path] = s.added
        defined |= _defined(module)
        spans = scopes(module)
        lines = text.split("\n")
        own_namespace = _OWN_NAMESPACE.search(text) is not None
        branches = _conditional_lines(module)
        for line, name, receiver in _reads(module, s.added, _inheriting(module), own_namespace):
            if len(lines[line - 1]) > _MAX_LINE:
                continue
            fn = function_at(spans, line)
            wanted.setdefault(name, []).append(
                UnsetAttribute(
                    s.path,
                    line,
                    name,
                    fn,
                    lines[line - 1].strip(),
                    receiver,
                    conditional=line in branches,
                    message=use_reach(module, receiver, [line]) == "message",
                )
            )
        if own_namespace:
            unregistered += [
                UnsetAttribute(
                    s.path,
                    line,
                    name,
                    function_at(spans, line),
                    lines[line - 1].strip(),
                    receiver,
                    conditional=line in branches,
                    unregistered=True,
                    message=use_reach(module, receiver, [line]) == "message",
                )
                for line, name, receiver in unregistered_reads(module, s.added)
                if len(lines[line - 1]) <= _MAX_LINE
            ]
    local = _first_each(unregistered) if len({u.name for u in unregistered}) <= _MAX_NAMES else []
    named = {u.name for u in local}
    return _grouped(
        local + [u for u in _repository_unset(wanted, defined, own, tree, excluded) if u.name not in named]
    )


def _first_each(found: list[UnsetAttribute]) -> list[UnsetAttribute]:
    """The first read of each name (per path)."""
    seen: dict[tuple[str, str], UnsetAttribute] = {}
    for u in sorted(found, key=lambda u: (u.path, u.line)):
        seen.setdefault((u.path, u.name), u)
    return list(seen.values())


def _repository_unset(
    wanted: dict[str, list[UnsetAttribute]],
    defined: set[str],
    own: dict[str, frozenset[int]],
    tree: RepoTree,
    excluded: Callable[[str], bool] | None,
) -> list[UnsetAttribute]:
    """The first read of each wanted name no file of the head tree names outside the change's lines."""
    names = sorted(n for n in wanted if n not in defined)
    if not names or len(names) > _MAX_NAMES:
        return []
    found = _files_naming(tree, names)
    if found is None or len(found) > _MAX_FILES:
        return []  # too many files name them to read: an unread one may set them
    elsewhere = _named_elsewhere(
        read_many(tree, sorted(p for p in found if not (excluded is not None and excluded(p)))),
        set(names),
        own,
    )
    return [u for n in names if n not in elsewhere for u in wanted[n][:1]]


def _grouped(found: list[UnsetAttribute]) -> list[UnsetAttribute]:
    """One per function and receiver: its first read, naming the other unset attributes read there
    (`args.gen_num_groups`, `args.gen_prompts_per_group`, ... of one renamed option group are one slip)."""
    groups: dict[tuple[str, str, str], list[UnsetAttribute]] = {}
    for u in sorted(found, key=lambda u: (u.path, u.line, u.name)):
        groups.setdefault((u.path, u.function, u.receiver), []).append(u)
    return [
        replace(g[0], more=tuple(dict.fromkeys(u.name for u in g[1:] if u.name != g[0].name)))
        for g in groups.values()
    ]


def _files_naming(tree: RepoTree, names: list[str]) -> set[str] | None:
    """The head tree's files that name one of `names`, or an option spelling of one (`use_foo` is
    registered as `--use-foo`); None when the tree cannot search."""
    grep = getattr(tree, "grep", None)
    if not callable(grep):
        return None
    found: set[str] | None = grep(sorted({*names, *(n.replace("_", "-") for n in names if "_" in n)}))
    return found


def _named_elsewhere(
    texts: dict[str, str | None], names: set[str], own: dict[str, frozenset[int]]
) -> set[str]:
    """The names some file writes on a line the change did not add (or, in another file, anywhere)."""
    out: set[str] = set()
    word = re.compile(r"[A-Za-z_][\w-]*")
    for path, body in texts.items():
        if not body:
            continue
        added = own.get(path, frozenset())
        for n, line in enumerate(body.split("\n"), start=1):
            if n in added:
                continue
            words = word.findall(line)
            out |= names & {w for part in words for w in (*part.split("-"), _destination(part))}
    return out


def _destination(text: str) -> str:
    """argparse's destination for an option string: `--use-foo` -> `use_foo`."""
    return text.lstrip("-").replace("-", "_")
