"""New or changed validations that reject the all-defaults configuration (pure, apart from reading the
modules a validation's callees and a parser's config classes are imported from).

For each `raise` / `assert` of a changed Python file that the change added, or whose condition it
added or changed, in a validating function (`__post_init__`, `__init__`, `model_post_init`, `validate*`,
`check*`, `verify*`, or a function that takes `args`), the condition it runs under is evaluated with every
operand at its default (`defaults.evaluate`):

- `self.x` in a method of class `C`: the default of field `x` declared by `C` (a dataclass / pydantic /
  class-level default, a constant `__init__` assigns; `lang.facts` records them) or by a base class of
  `C` (the head index), when exactly one value is declared;
- `args.x`: the default argparse gives option `x` in the parsers of the changed files
  (`defaults.arg_options`: `default=`, `store_true` False, no default None, `type=int` on a string
  default, `set_defaults`), or the field default of a config class the parser file hands to a call that
  generates options from it (`ArgumentGroupFactory(TransformerConfig)`);
- literals, comparisons, `and` / `or` / `not`, `in`, arithmetic, and the builtins that only read
  (`bool(args.data_path) + any([...]) == 1`).

A check the change only loosened (an assertion that gains an alternative, a raise whose condition gains
a conjunct: `defaults.loosened`) rejects nothing its base version accepted, and is left alone.

A finding needs every operand's default known: a call, a local, a subscript or an unknown field stops
the evaluation, and so does an operand the function writes above the check, itself or through a call
it hands the object to (`defaults.written`: a callee of the module or the repository is followed, up to
the early exit the defaults take; any other call may write anything). A raise whose guards all hold, or
an assertion whose test is false, rejects a plain default launch. A check on one option whose default
is a `None` / `0` placeholder (`assert args.input is not None`) asks for a value the user must give: it
is a required option, not a conflict of defaults, and is left alone, also on a path that guards holding
at their defaults lead to (`if args.skip_train: ... else: assert args.train_iters is not None`).

A check nested under an opt-in switch, a boolean option or field that is off by default
(`if args.perform_rl_step:`), is evaluated with the switch on: it rejects the defaults of that feature
when it fails with every other operand at its default. Then those defaults must be choices (booleans,
non-empty strings), not all of them switches off by default: a `None` / `0` placeholder is what the
feature's users are expected to set (`if args.rl: assert args.rl_kv_path is not None` is a requirement,
not a rejected default), and a switch off by default is one the feature needs turned on with it
(`if args.fp8_param_gather: assert args.use_distributed_optimizer`). A default that is on, or a string
choice (`rl_persist_cuda_graphs` True with `cuda_graph_impl` "none"), is the feature's own conflict.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviewbot.analysis.defaults.arg_options import argparse_defaults, class_defaults
from reviewbot.analysis.defaults.evaluate import Evaluator, Operand, Unknown
from reviewbot.analysis.defaults.loosened import loosened
from reviewbot.analysis.defaults.written import ANY, Read, Writes
from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.sides import Side
from reviewbot.lang.facts import FileFacts
from reviewbot.lang.index import RepoIndex

__all__ = ["RejectedDefault", "Operand", "rejected_defaults"]


@dataclass(frozen=True)
class RejectedDefault:
    path: str
    line: int  # the condition's line (the `if` of a raise, the `assert`)
    statement_line: int  # the raise / assert
    function: str
    condition: str  # as written: the conditions that must hold, joined with `and`
    operands: tuple[Operand, ...]
    owner: str  # the class validated, or `args`
    kind: str  # `raise` | `assert`
    # the opt-in switches the check sits under, taken on (`if args.perform_rl_step:`); () when the
    # plain all-defaults configuration fails it
    switched: tuple[Operand, ...] = ()


_VALIDATOR = ("__post_init__", "__init__", "model_post_init", "__attrs_post_init__")
_VALIDATOR_WORDS = ("valid", "check", "verify", "sanity")


def _validating(fn: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> bool:
    name = fn.name.lower()
    if in_class and fn.name in _VALIDATOR:
        return True
    if any(w in name for w in _VALIDATOR_WORDS):
        return True
    return not in_class and any(a.arg == "args" for a in fn.args.args)


_Guard = tuple[ast.expr, bool]  # a condition and whether it must hold (False: the else side)


def _statements(
    body: list[ast.stmt], guards: tuple[_Guard, ...]
) -> Iterable[tuple[ast.Raise | ast.Assert, tuple[_Guard, ...]]]:
    for stmt in body:
        if isinstance(stmt, ast.Raise | ast.Assert):
            yield stmt, guards
        elif isinstance(stmt, ast.If):
            yield from _statements(stmt.body, (*guards, (stmt.test, True)))
            yield from _statements(stmt.orelse, (*guards, (stmt.test, False)))
            # An early exit (`if self.stream_options is None: return self`): what follows runs only
            # on the other side of the test.
            if _exits(stmt.body) and not _exits(stmt.orelse):
                guards = (*guards, (stmt.test, False))
            elif _exits(stmt.orelse) and not _exits(stmt.body):
                guards = (*guards, (stmt.test, True))
        elif isinstance(stmt, ast.Return | ast.Continue | ast.Break):
            return  # what follows does not run on this path (a return inside an `if` is not followed)
        elif isinstance(stmt, ast.If | ast.For | ast.While | ast.With | ast.Try):
            continue  # loops, context managers and handlers: defaults do not decide them


def _exits(body: list[ast.stmt]) -> bool:
    """The block always returns early (`if self.stream_options is None: return self`). Not a block
    that raises: that is a validation of its own, and adding its test to every later check would leave
    them unevaluated whenever one of its operands has no known default."""
    return bool(body) and isinstance(body[-1], ast.Return)


def _functions(tree: ast.Module) -> Iterable[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, ""
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item, node.name


def _class_defaults(
    owner: str, facts: FileFacts | None, index: RepoIndex, path: str
) -> Callable[[str], Operand | None]:
    own: dict[str, Operand] = {}
    bases: tuple[str, ...] = ()
    if facts is not None:
        for d in facts.fields:
            if d.owner == owner and d.default is not None:
                own.setdefault(d.field, Operand("", d.default, d.path, d.line))
        for fd in sorted(facts.defaults, key=lambda fd: fd.line):
            if fd.owner == owner:
                own[fd.field] = Operand("", fd.value, fd.path, fd.line)
        bases = next((o.bases for o in facts.owners if o.name == owner), ())

    def resolve(text: str) -> Operand | None:
        if not text.startswith("self.") or text.count(".") != 1:
            return None
        name = text[5:]
        if name in own:
            o = own[name]
            return Operand(text, o.value, o.path, o.line)
        declared = {(d.value, d.path, d.line) for d in index.defaults(name) if d.owner in bases}
        if len({v for v, _, _ in declared}) == 1:
            value, where, line = sorted(declared)[0]
            return Operand(text, value, where, line)
        return None

    return resolve


def _arg_defaults(
    sides: list[Side], heads: dict[str, str | None], index: RepoIndex, read: Read | None
) -> Callable[[str], Operand | None]:
    """`args.x` -> the default argparse gives option `x` in the parsers of the changed files (one value
    across them, else unknown); a file's `set_defaults(x=...)` replaces its `add_argument` default. An
    option no parser there adds may be generated from a config class the parser file hands to a call
    (`ArgumentGroupFactory(TransformerConfig)`, `HfArgumentParser(ModelArguments)`): then the default of
    that class's field `x` (read from the class, else from the index), when those classes declare one."""
    options: dict[str, set[tuple[str, str, int, str]]] = {}
    fields: dict[str, set[tuple[str, str, int, str]]] = {}
    handed: set[str] = set()
    for s in sides:
        text = heads.get(s.path)
        tree = python_tree(text)
        if tree is None:
            continue
        mine: dict[str, tuple[str, str, int, str]] = {}
        for d in argparse_defaults(tree, text):
            if d.set_default or d.dest not in mine:
                mine[d.dest] = (d.value, s.path, d.line, d.how)
            elif mine[d.dest][0] != d.value:
                mine[d.dest] = ("", s.path, d.line, "")  # two parsers of the file disagree: unknown
        for dest, found in mine.items():
            options.setdefault(dest, set()).add(found)
        if mine:
            classes = _classes_handed(tree)
            handed |= classes
            for f in class_defaults(s.path, tree, classes, read, text):
                fields.setdefault(f.name, set()).add((f.value, f.path, f.line, f.how))

    def resolve(text: str) -> Operand | None:
        if not text.startswith("args.") or text.count(".") != 1:
            return None
        name = text[5:]
        declared = (
            options.get(name)
            or fields.get(name)
            or {
                (d.value, d.path, d.line, f"{d.owner}.{name} = {d.value}")
                for d in index.defaults(name)
                if d.owner in handed
            }
        )
        if len({v for v, _, _, _ in declared}) != 1:
            return None
        value, path, line, how = sorted(declared)[0]
        return Operand(text, value, path, line, how) if value else None

    return resolve


def _classes_handed(tree: ast.Module) -> set[str]:
    """Class-like names (capitalised) a call of the module is handed as an argument."""
    return {
        a.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        for a in (*n.args, *(k.value for k in n.keywords))
        if isinstance(a, ast.Name) and a.id[:1].isupper()
    }


def _touched(stmt: ast.Raise | ast.Assert, guards: tuple[_Guard, ...], added: frozenset[int]) -> bool:
    if stmt.lineno in added:
        return True
    # the innermost condition added or changed (an older raise under a new `if`)
    return bool(guards) and any(
        n in added for n in range(guards[-1][0].lineno, (guards[-1][0].end_lineno or 0) + 1)
    )


def _condition(stmt: ast.Raise | ast.Assert, guards: tuple[_Guard, ...]) -> str:
    parts = [ast.unparse(t) if hold else f"not ({ast.unparse(t)})" for t, hold in guards]
    if isinstance(stmt, ast.Assert):
        parts.append(f"not ({ast.unparse(stmt.test)})")
    return " and ".join(parts)


def _switch(test: ast.expr, ev: Evaluator) -> bool:
    """An opt-in switch: an option or field (or `and` of them) that is off by default (`False`)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for p in parts:
        if not isinstance(p, ast.Attribute | ast.Name):
            return False
        found = ev.resolve(ast.unparse(p))
        if found is None or found.value != "False":
            return False
    return True


def _placeholder(o: Operand) -> bool:
    """A default that stands for "not set yet" (`None`, `0`, `""`, an empty list) rather than a choice."""
    try:
        value = ast.literal_eval(o.value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return True
    return not isinstance(value, bool | str) or value == ""


def _unset(o: Operand) -> bool:
    """`None`, `0`, `""` or an empty collection: the value of an option nobody gave yet."""
    try:
        value = ast.literal_eval(o.value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return not isinstance(value, bool) and (value is None or value in (0, "") or value in ((), [], {}))


@dataclass(frozen=True)
class _Rejection:
    used: tuple[Operand, ...]
    switched: tuple[Operand, ...]


def _rejects(
    stmt: ast.Raise | ast.Assert,
    guards: tuple[_Guard, ...],
    resolve: Callable[[str], Operand | None],
    written: set[str],
    added: frozenset[int] = frozenset(),
) -> _Rejection | None:
    """The operands read when the defaults fail the check. A guard that is an opt-in switch off by
    default (`if args.perform_rl_step:`) is taken on: then the check must fail on the feature's own
    defaults, which must be choices (booleans, strings), not placeholders the feature's users set."""
    if ANY in written:
        return None
    on: dict[str, Operand] = {}  # switches taken on: True from here on

    def known(text: str) -> Operand | None:
        if text in on:
            return on[text]
        return None if text in written else resolve(text)

    ev = Evaluator(known)
    switches: set[str] = set()
    try:
        for test, hold in guards:
            if bool(ev(test)) is hold:
                continue
            if not hold or not _switch(test, ev):
                return None
            for n in ast.walk(test):
                if isinstance(n, ast.Attribute | ast.Name) and (o := known(ast.unparse(n))) is not None:
                    switches.add(o.text)
                    on[o.text] = Operand(o.text, "True", o.path, o.line, o.how)
        if isinstance(stmt, ast.Assert) and ev(stmt.test):
            return None
    except (Unknown, TypeError, ZeroDivisionError, ValueError, OverflowError):
        return None
    if not ev.used:
        return None
    switched = tuple(o for t, o in ev.used.items() if t in switches)
    rest = [o for t, o in ev.used.items() if t not in switches]
    # A guard the change edited is part of what it decided (`tp > 1` -> `tp >= 1` over a requirement),
    # unless it is the `else:` of a switch off by default (the path of everyone who did not opt in).
    kept = all(not hold and _switch(t, ev) or not _edited(t, added) for t, hold in guards)
    own = [o for t, o in ev.used.items() if kept and t in _own_names(stmt, guards) and t not in switches]
    return None if _required(switched, rest, own) else _Rejection(tuple(ev.used.values()), switched)


def _edited(test: ast.expr, added: frozenset[int]) -> bool:
    return any(n in added for n in range(test.lineno, (test.end_lineno or test.lineno) + 1))


def _own_names(stmt: ast.Raise | ast.Assert, guards: tuple[_Guard, ...]) -> set[str]:
    """The check's own operands: the assertion's test, or the condition right above the raise. Guards
    around it that simply hold at their defaults (the `else:` of a switch off by default) are the path
    a plain launch takes, not values the check couples."""
    own = stmt.test if isinstance(stmt, ast.Assert) else guards[-1][0] if guards else None
    return (
        {ast.unparse(n) for n in ast.walk(own) if isinstance(n, ast.Attribute | ast.Name)} if own else set()
    )


def _required(switched: tuple[Operand, ...], rest: list[Operand], own: list[Operand]) -> bool:
    """The check asks for a value rather than rejecting a combination of defaults: under a switch, one
    other option it needs set, placeholders the feature's users set or other switches it needs turned
    on; with no switch, the one
    option the user must give (`assert args.input is not None`), on the path of every plain launch or
    on a path guards that hold at their defaults take (`if args.skip_train: ... else: assert
    args.train_iters is not None`)."""
    if switched:
        # One other option asked for a value (`if self.enable_deepep: if self.dispatcher != "flex":
        # raise`): the feature names what it needs with it, a requirement its users read in the message,
        # not two defaults of the feature that contradict each other.
        if len(rest) == 1:
            return True
        return not rest or any(_placeholder(o) for o in rest) or all(o.value == "False" for o in rest)
    return any(len(ops) == 1 and _unset(ops[0]) for ops in (rest, own))


def rejected_defaults(
    changed: Iterable[Side],
    heads: dict[str, str | None],
    index: RepoIndex,
    read: Read | None = None,
    bases: dict[str, str | None] | None = None,
) -> list[RejectedDefault]:
    """Validations the change adds or changes that reject the all-defaults configuration; `read` gives
    the head text of a path (the modules a validation's callees are imported from); `bases` the base
    text of a changed file by its head path (a check the change only loosened is left alone)."""
    sides = [s for s in changed if s.path.endswith(".py") and s.head is not None]
    args = _arg_defaults(sides, heads, index, read)
    out: list[RejectedDefault] = []
    for s in sides:
        tree = python_tree(heads.get(s.path))
        if tree is None or not s.added:
            continue
        base = python_tree((bases or {}).get(s.path))
        for fn, owner in _functions(tree):
            if not _validating(fn, bool(owner)):
                continue
            resolve = _class_defaults(owner, s.head_facts, index, s.path) if owner else args
            writes = Writes(s.path, tree, owner, resolve, read)
            qual = f"{owner}.{fn.name}" if owner else fn.name
            for stmt, guards in _statements(fn.body, ()):
                if isinstance(stmt, ast.Raise) and not guards:
                    continue  # an unconditional raise is not a validation of the configuration
                if not _touched(stmt, guards, s.added):
                    continue
                test = stmt.test if isinstance(stmt, ast.Assert) else guards[-1][0] if guards[-1][1] else None
                if loosened(stmt, test, fn.name, base):
                    continue  # it rejects nothing its base version accepted
                found = _rejects(stmt, guards, resolve, writes.before(fn, stmt.lineno), s.added)
                if found is None:
                    continue
                line = stmt.lineno if isinstance(stmt, ast.Assert) else guards[-1][0].lineno
                out.append(
                    RejectedDefault(
                        s.path,
                        line,
                        stmt.lineno,
                        qual,
                        _condition(stmt, guards),
                        found.used,
                        owner or "args",
                        "assert" if isinstance(stmt, ast.Assert) else "raise",
                        found.switched,
                    )
                )
    return out
