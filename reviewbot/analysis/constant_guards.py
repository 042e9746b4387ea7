"""Guards whose value does not depend on the configuration (pure): always true, always false, or true
for the values operators use to mean "off".

Found in the changed files (`analysis.sides`), on changed lines only (the guard's line, or the line
that binds the name it tests):

- an environment holder object compared with a bool (`envs.X is True`, where the same holder is used
  as an object elsewhere: `envs.X.get()`), always false (its truth tests: `analysis.envs.holder_args`);
- a standard environment read whose parsing gives the same truth for every value an operator can set
  (`os.environ.get("X") == 1`, `os.getenv("X") is True`; see `analysis.envs.parse`);
- a raw environment string used as a bool (`os.getenv("X", False)`, `bool(os.getenv("X"))`): set to
  `0` or `false`, it is a non-empty string and still enables;
- a rank divided instead of taken modulo (`tp_rank / tp_size == 0`);
- a bare name tested for truth (`if SOME_FLAG:`) that the same file binds, once, to a function, a
  class, a non-empty string literal or an instance of a project class without `__bool__`/`__len__`;
- a C/C++ string comparison with an option's name tested for truth (`if (strcmp(arg, "--keep-split"))`):
  `strcmp` is 0 on a match, so the branch runs for every other argument and never for the option.

Not constant: a name bound to a bool or a comparison, a name rebound anywhere in the file, an instance
of a class that defines `__bool__`/`__len__` or of a class the index does not know, a read that is
parsed (`== "1"`, `bool(int(...))`), a holder attribute that is never used as an object.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from reviewbot.analysis.constant_guard_records import OS_ACCESSORS, ConstantGuard, ConstantKind
from reviewbot.analysis.envs.parse import SAMPLES, Outcome, Result, evaluate, value_of_default
from reviewbot.analysis.envs.switches import head_readers, unset_value
from reviewbot.analysis.reach.configs import shared
from reviewbot.analysis.sides import Side
from reviewbot.analysis.text import conjuncts
from reviewbot.lang.clauses import Clause, ClauseKind, Guard
from reviewbot.lang.facts import EnvRead, Lang
from reviewbot.lang.index import RepoIndex

__all__ = ["ConstantKind", "ConstantGuard", "constant_guards", "holder_object_use", "OS_ACCESSORS"]

# --- environment reads ---------------------------------------------------------------------------------

_BOOL_TEST = re.compile(r"^·\s*(is not|is|==|!=)\s*(True|False)$")
_OBJECT_USE = re.compile(r"^·\s*\.\s*\w+")  # `·.get()`, `·.value`, `·.set(...)`


def _holder_use(e: EnvRead, reads: Iterable[EnvRead]) -> EnvRead | None:
    """Another read of the same switch through the same holder that uses it as an object."""
    uses = [
        r
        for r in reads
        if r.name == e.name and r.accessor == e.accessor and _OBJECT_USE.match(r.parse.replace(" ", ""))
    ]
    same_file = [r for r in uses if r.path == e.path]
    pool = same_file or uses
    return min(pool, key=lambda r: (r.path, r.line)) if pool else None


def holder_object_use(e: EnvRead, sides: list[Side], index: RepoIndex) -> EnvRead | None:
    """A read using `e`'s holder as an object (`envs.X.get()`); None for a value (`os.getenv`, vLLM's envs)."""
    if e.accessor in OS_ACCESSORS or e.lang is not Lang.PYTHON:
        return None
    own = [r for s in sides if s.head_facts is not None for r in s.head_facts.env_reads]
    return _holder_use(e, [*own, *head_readers(e.name, index, sides)])


def _env_object(e: EnvRead, reads: list[EnvRead], function: str) -> ConstantGuard | None:
    if e.accessor in OS_ACCESSORS or e.lang is not Lang.PYTHON:
        return None
    m = _BOOL_TEST.match(e.parse.strip())
    if m is None or m.group(1) not in ("is", "is not"):
        return None
    use = _holder_use(e, reads)
    if use is None:
        return None
    value = "True" if m.group(1) == "is not" else "False"
    return ConstantGuard(
        ConstantKind.ENV_OBJECT, e.path, e.line, e.parse, e.name, value,
        bound=use.parse, bound_line=use.line, bound_path=use.path, function=function, accessor=e.accessor,
    )  # fmt: skip


def _truth(r: Result) -> bool | None:
    return bool(r.value) if r.outcome is Outcome.VALUE else None


def _env_constant(e: EnvRead, function: str) -> ConstantGuard | None:
    if e.accessor not in OS_ACCESSORS or e.lang is not Lang.PYTHON or not e.parse.strip():
        return None
    if not re.search(r"==|!=|\bis\b", e.parse):
        return None  # only a comparison can be constant by mistake; `bool(·)` is ENV_STRING's
    # The strings the test itself names are values an operator sets (`· != "spawn"` holds for "fork"
    # and not for "spawn"): a comparison is constant only when none of them flips it either.
    named = tuple(m.group(2) for m in _STRING_LITERAL.finditer(e.parse))
    results = [evaluate(e.parse, s) for s in (*SAMPLES, *named)] + [unset_value(e)]
    truths = {_truth(r) for r in results}
    if None in truths or len(truths) != 1:
        return None
    (value,) = truths
    return ConstantGuard(
        ConstantKind.ENV_CONSTANT, e.path, e.line, e.parse, e.name, str(value), function=function,
        accessor=e.accessor,
    )  # fmt: skip


_STRING_LITERAL = re.compile(r"""(['"])((?:(?!\1)[^\\])*)\1""")
_PARSED_LATER = r"(?:==|!=|\bin\b|\.\w|\bis\b)"


def _target_parsed(e: EnvRead, side: Side) -> bool:
    """The read's local is compared or parsed later in its function (`x == "1"`, `int(x)`)."""
    t = e.target
    if not t or side.head is None:
        return False
    rx = re.compile(rf"(?<![\w.]){re.escape(t)}\s*{_PARSED_LATER}|\w\(\s*{re.escape(t)}\s*[,)]")
    return any(
        c.function == (e.function or "") and c.line > e.line and (rx.search(c.text) or any(rx.search(g.text) for g in c.guards))
        for c in side.head.clauses
    )  # fmt: skip


def _env_string(e: EnvRead, side: Side, function: str) -> ConstantGuard | None:
    if e.accessor not in OS_ACCESSORS or e.lang is not Lang.PYTHON:
        return None
    parse = e.parse.replace(" ", "")
    if parse == "":
        default = value_of_default(e.default)
        # The default says the value is meant as a bool or a number; without one a raw read is the
        # common "set to anything to enable" idiom, left alone.
        if default.outcome is not Outcome.VALUE or not isinstance(default.value, bool | int):
            return None
        if _target_parsed(e, side):
            return None
    elif parse != "bool(·)":
        return None
    samples = tuple((s, evaluate(e.parse, s).shown()) for s in ("0", "false"))
    if not all(_truth(evaluate(e.parse, s)) is True for s in ("0", "false")):
        return None
    return ConstantGuard(
        ConstantKind.ENV_STRING,
        e.path,
        e.line,
        e.parse,
        e.name,
        "",
        bound=e.target,
        function=function,
        samples=samples,
        accessor=e.accessor,
    )


# `if envs.VLLM_X:` / `if not envs.VLLM_X:`: a registry entry tested for truth as written.
_REGISTRY_TRUTH = r"^(?:not\s+|!)?(?:[\w.]+\.)?envs\.{name}$"


def _at_uses(c: ConstantGuard, sides: list[Side]) -> list[ConstantGuard]:
    """A raw read a registry entry returns as it is (`"VLLM_X": lambda: os.getenv("VLLM_X", False)`) is
    misread where a guard tests the entry (`if envs.VLLM_X: return True`). The finding stays at the read,
    the line to fix, and cites the first guard the change adds on the entry, where the branch that always
    runs is."""
    if c.kind is not ConstantKind.ENV_STRING or c.bound:
        return [c]
    truth = re.compile(_REGISTRY_TRUTH.format(name=re.escape(c.name)))
    uses = [
        (s.path, g.line)
        for s in sides
        for g, _ in _guards(s)
        if g.line in s.added and truth.match(g.text.strip())
    ]
    if not uses:
        return [c]
    path, line = uses[0]
    return [replace(c, bound_path=path, bound_line=line)]


# --- guards of the statements --------------------------------------------------------------------------

_DIVISION = re.compile(r"(?<![\w.])([\w.]*rank\w*)/([\w.]+)==0(?![\w.])")
_BARE = re.compile(r"^(?:not\s+|!)?([A-Za-z_]\w*)$")
_MODULE_ASSIGN = re.compile(r"^([A-Za-z_]\w*)(?::[^=]+)?=(?!=)(.+)$", re.S)
_STRING = re.compile(r"^[rbuf]*(['\"])(?!\1).+\1$", re.S)
_CONSTRUCTOR = re.compile(r"^([A-Z]\w*)\(.*\)$", re.S)
_TRUTH_METHODS = ("__bool__", "__len__", "__nonzero__")


def _guards(side: Side) -> list[tuple[Guard, str]]:
    """Distinct guards of the head file with the function they are in, by line and text."""
    if side.head is None:
        return []
    found: dict[tuple[int, str], tuple[Guard, str]] = {}
    for c in side.head.clauses:
        for g in c.guards:
            found.setdefault((g.line, g.text), (g, c.function))
    return [found[k] for k in sorted(found)]


def _division(side: Side) -> list[ConstantGuard]:
    out: list[ConstantGuard] = []
    for g, function in _guards(side):
        if g.line not in side.added:
            continue
        m = _DIVISION.search(g.text.replace(" ", ""))
        if m is not None:
            out.append(
                ConstantGuard(
                    ConstantKind.DIVISION, side.path, g.line, g.text, m.group(1), "", function=function
                )
            )
    return out


# `strcmp(a, "--opt")` as a whole conjunct, not negated and not compared (`== 0`, `!= 0`): its truth is
# "a differs from --opt". Only against an option's name (`-x`, `--x`; not `-` for stdin or `--`): in an
# option chain nobody means "any argument but this one", and other literals can mean "differs" on purpose.
_STRCMP_TRUTH = re.compile(r'^(?:std::)?(?:strcmp|strcasecmp|_stricmp)\((.+),\s*"(--?[A-Za-z][^"]*)"\)$')
# The file's own way of matching an option: `strcmp(arg, "--x") == 0` or `!strcmp(arg, "-x")`.
_STRCMP_MATCH = re.compile(r'(?:!\s*(?:std::)?strcmp\s*\(|strcmp\s*\([^()]*"--?[A-Za-z][^"]*"\s*\)\s*==\s*0)')


def _strcmp(side: Side) -> list[ConstantGuard]:
    """`strcmp` with an option's name tested for truth; `name`: the field its branch sets, else the option."""
    out: list[ConstantGuard] = []
    if side.head is None or side.head_facts is None or side.head_facts.lang is not Lang.CPP:
        return out
    guards = _guards(side)
    if not any(_STRCMP_MATCH.search(g.written or g.text) for g, _ in guards):
        return out  # no option matched with `== 0` / `!strcmp` here: a bare strcmp may mean "differs"
    for g, function in guards:
        if g.line not in side.added or g.negated:
            continue
        found = [m for part in conjuncts(g.written or g.text) if (m := _STRCMP_TRUTH.match(part.strip()))]
        if len(found) != 1:
            continue  # `strcmp(a, "-h") && strcmp(a, "--help")`: "neither", on purpose
        m = found[0]
        sets = [c.text.split("=", 1)[0] for c in side.head.clauses
                if c.kind is ClauseKind.ASSIGN and c.guards and c.guards[-1].line == g.line]  # fmt: skip
        field = sets[0].strip().replace("->", ".").rsplit(".", 1)[-1] if sets else m.group(2)
        out.append(ConstantGuard(ConstantKind.STRCMP, side.path, g.line, m.group(0).strip(), field, "",
                                 bound=m.group(2), function=function))  # fmt: skip
    return out


def _assignments(clauses: Iterable[Clause]) -> dict[str, list[tuple[Clause, str]]]:
    """Every plain assignment of a bare name in the file: name -> [(clause, value)]."""
    out: dict[str, list[tuple[Clause, str]]] = {}
    for c in clauses:
        if c.kind is not ClauseKind.ASSIGN:
            continue
        text = re.sub(r"^(?:static|const|constexpr|auto|bool|int|\s)+", "", c.text)
        m = _MODULE_ASSIGN.match(text)
        if m is not None:
            out.setdefault(m.group(1), []).append((c, m.group(2).strip()))
        elif re.match(r"^(?:global|nonlocal)\s", c.text):
            for name in re.findall(r"\w+", c.text)[1:]:
                out.setdefault(name, []).append((c, ""))
    return out


def _truthless_class(name: str, side: Side, index: RepoIndex) -> bool:
    """`name` is a project class whose instances are always truthy (no `__bool__`/`__len__` on it or
    on its project bases; every base known). False when the class is not known."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        cls = todo.pop()
        if cls in seen or cls == "object":
            continue
        seen.add(cls)
        owners = [o for o in index.owners(cls) if o.lang is Lang.PYTHON]
        if not owners and side.head_facts is not None:
            owners = [o for o in side.head_facts.owners if o.name == cls]
        if len(owners) != 1:
            return False  # unknown (library) or ambiguous class: its truth is not known
        o = owners[0]
        facts = index.files.get(o.path) or (
            side.head_facts if side.head_facts and side.head_facts.path == o.path else None
        )
        if facts is None:
            return False
        if any(f.name in (f"{o.qualname}.{m}" for m in _TRUTH_METHODS) for f in facts.functions):
            return False
        todo.extend(b for b in o.bases if b not in ("ABC", "Generic", "Protocol"))
    return True


def _binding(
    name: str, side: Side, index: RepoIndex, bound: dict[str, list[tuple[Clause, str]]]
) -> tuple[str, int] | None:
    """(what, line) when `name` is bound once in the file to something always truthy."""
    facts = side.head_facts
    if facts is None:
        return None
    writes = bound.get(name, [])
    defs = [f for f in facts.functions if f.name == name]
    classes = [o for o in facts.owners if o.qualname == name]
    if len(writes) + len(defs) + len(classes) != 1:
        return None  # rebound, shadowed or not bound here
    if defs:
        return (f"def {name}(...)", defs[0].start_line)
    if classes:
        return (f"class {name}", classes[0].line)
    clause, value = writes[0]
    if clause.function or clause.guards or facts.lang is not Lang.PYTHON:
        return None  # a module-level, unconditional binding only
    if _STRING.match(value) and not value.lstrip("rbuf").startswith(("f'", 'f"')):
        return (value, clause.line)
    m = _CONSTRUCTOR.match(value)
    if m is not None and _truthless_class(m.group(1), side, index):
        return (value, clause.line)
    if value.startswith("lambda"):
        return (value, clause.line)
    return None


def _names(side: Side, index: RepoIndex) -> list[ConstantGuard]:
    if side.head is None:
        return []
    bound = _assignments(side.head.clauses)
    out: list[ConstantGuard] = []
    for g, function in _guards(side):
        for atom in conjuncts(g.text):
            m = _BARE.match(atom)
            if m is None or m.group(1) in ("True", "False", "None", "self", "this"):
                continue
            name = m.group(1)
            found = _binding(name, side, index, bound)
            if found is None or (g.line not in side.added and found[1] not in side.added):
                continue
            value = "False" if atom.startswith(("not", "!")) else "True"
            out.append(
                ConstantGuard(
                    ConstantKind.NAME, side.path, g.line, g.text, name, value,
                    bound=found[0], bound_line=found[1], bound_path=side.path, function=function,
                )
            )  # fmt: skip
    return out


def constant_guards(sides: list[Side], index: RepoIndex) -> list[ConstantGuard]:
    """Every constant or mis-parsed guard on the changed lines, by path, line and name (once per round:
    two rules ask)."""
    return list(shared("constant_guards", index, (sides,), lambda: tuple(_constant_guards(sides, index))))


def _constant_guards(sides: list[Side], index: RepoIndex) -> list[ConstantGuard]:
    out: list[ConstantGuard] = []
    for s in sides:
        if s.head_facts is None:
            continue
        reads = sorted(s.head_facts.env_reads, key=lambda e: (e.line, e.name, e.parse))
        for e in reads:
            if e.line not in s.added:
                continue
            function = e.function or ""
            others = [*reads, *head_readers(e.name, index, sides)] if e.accessor not in OS_ACCESSORS else []
            found = (
                _env_object(e, others, function) or _env_constant(e, function) or _env_string(e, s, function)
            )
            if found is not None:
                out.append(found)
        out.extend(_division(s))
        out.extend(_strcmp(s))
        out.extend(_names(s, index))
    out = [u for c in out for u in _at_uses(c, sides)]
    unique = {(c.path, c.line, c.kind.value, c.name): c for c in out}
    return [unique[k] for k in sorted(unique)]
