"""Who reaches a changed row of an untested derivation (pure): the population missing-tests sizes itself by.

A branch without a test is a problem in proportion to the configurations that take it. From the
branch's truth table (`analysis.tables.truthtable`), its guard's reach (`analysis.reach.configs`: defaults, derived
populations, model config builders) and the two sides of the change, one of three answers:

- `production`: configurations that ship reach a changed row: the row where every input is at its
  declared default changed (every deployment that never sets them), a model config builder sets the
  guard's fields so that it holds, a guard atom is derived from a population (`use_kvcache` is
  `task_type == LANGUAGE_MODEL`: every non-LM task model) or names a model family (`model_arch ==
  "DeepseekV3ForCausalLM"`, `analysis.reach.families`); or an unguarded formula every configuration
  runs through replaced an older value. The evidence names that population.
- `opt-in`: only configurations that set an input away from its default reach a changed row (an
  environment switch, a flag, a config key), and nothing in the repository is seen setting it.
- `none`: nothing new to pin. Every row equals the old behaviour; the write only renames (its value
  and guard are the base's with other names: `n_ctx / params.n_parallel` -> `n_ctx / params_base.n_parallel`);
  an unguarded value that passes an input through (a call that reads or parses it, a copy, a literal, an
  environment read: the decision, if any, is in the callee); a branch of an argument parser that maps an
  option's text to its field (`if (value == "none") params.x = NONE;`: the row is what the user asked for);
  a branch reached only through a switch this change introduces, whose default keeps the old behaviour
  (nobody reaches it before opting in); an unguarded formula for a field the base never wrote here; a
  decision the change moved (a removed condition with the same names and value); a destructor's
  teardown (`~server_context`, `__del__`); the base's decision stored in another field (a removed
  write with the same guard and value: `self.mp_world_size` -> `config.tensor_parallel.tp_size`); an
  argument parser's option branch that also checks the text passed (`arg == "-ctk-first"` and
  `p.size() == 2`); and the shapes of `analysis.plumbing.state`: a value no test can reproduce
  (`uuid4()`, `random_uuid()`, the clock), a private handle left empty (`self._endpoint = None`), a
  type normalisation of one input (`if isinstance(p, str): cfg.p = (p,)`), a plain read of a declared
  environment setting (`self.level = envs.TOOL_STRICT_LEVEL.get()`), a fallback that fills an
  unset field from another setting (`if (dft.n_gpu_layers < 0) dft.n_gpu_layers = base.n_gpu_layers;`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from reviewbot.analysis import operands as ops
from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.analysis.plumbing import CMP, STRING, parse_table, state
from reviewbot.analysis.reach.configs import describe_reach
from reviewbot.analysis.reach.families import family_reached, model_families
from reviewbot.lang.facts import Assignment, FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import literals, loose_key
from reviewbot.model.change import ChangedFile
from reviewbot.model.messages import Message, listing, msg
from reviewbot.model.truthtable import TruthTable

__all__ = ["Population", "PopulationKind", "population", "table_of"]

PopulationKind = Literal["production", "opt-in", "none"]


@dataclass(frozen=True)
class Population:
    kind: PopulationKind
    reason: str  # a short name of the case (`default-row`, `builders`, `rename`, `pass-through`, ...)
    evidence: Message | str = ""  # the population in words (production and opt-in)


_STRING = STRING
_TOKEN = re.compile(rf"{_STRING}|[A-Za-z_]\w*|\d+(?:\.\d*)?|\S")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_BARE = re.compile(r"^[A-Za-z_]\w*$")
_LITERAL = re.compile(rf"^(?:{_STRING}|-?\d+(?:\.\d*)?[fFuUlL]*|True|False|None)$")
_CMP = CMP
# Arithmetic at the top level of a value (not inside a call's arguments): `a * b / 100`, `n // tp`.
_ARITHMETIC = re.compile(r"(?<=[\w)\]])\s*(?://|\*\*|\*|/|%|\+|-|<<|>>)\s*(?=[\w(.])")
_NESTED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}")
_STRINGS = re.compile(_STRING)
_DECISION = re.compile(r"\b(?:if|elif|else|and|or|not)\b|&&|\|\||\?|!(?!=)")
_CONDITION_LINE = re.compile(r"^\s*(?:\}\s*)?(?:if|elif|else)\b")
_TEMPLATE_ARGS = re.compile(r"<[\w:., *&]*>")
NAMED = 3  # inputs and places a sentence names; the rest are counted


def table_of(d: ChangedDerivation, tables: list[TruthTable]) -> TruthTable | None:
    """The truth table of the derivation's target in its function."""
    a = d.head
    for t in tables:
        if t.path == a.path and (t.function or "") == (a.function or "") and t.target == a.target:
            return t
    return None


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _renamed(head: str, base: str) -> bool:
    """`head` is `base` with some identifiers renamed (the same shape, only names differ)."""
    h, b = _tokens(head), _tokens(base)
    if len(h) != len(b) or h == b:
        return h == b
    pairs: dict[str, str] = {}
    for x, y in zip(h, b, strict=True):
        if x == y:
            continue
        if not (_IDENT.match(x) and _IDENT.match(y)) or pairs.setdefault(x, y) != y:
            return False
    return True


def _base_writes(a: Assignment, base: FileFacts | None) -> list[Assignment]:
    if base is None:
        return []
    return [
        b for b in base.assignments if b.function == a.function and b.field.strip("_") == a.field.strip("_")
    ]


def _is_rename(d: ChangedDerivation, base: FileFacts | None) -> bool:
    """The write is a base write of the same field in the same function whose guard and value only
    use other names (a renamed receiver, parameter or local)."""
    a = d.head
    guard = a.guard_text if a.guard is not None else ""
    for b in (*d.base, *_base_writes(a, base)):
        if (b.guard is None) != (a.guard is None):
            continue
        same_guard = a.guard is None or (
            b.guard is not None
            and (loose_key(a.guard) == loose_key(b.guard) or _renamed(guard, b.guard_text))
        )
        if same_guard and _renamed(a.value, b.value) and _renamed(a.target, b.target):
            return True
    return False


def _retargeted(d: ChangedDerivation, base: FileFacts | None, changed: ChangedFile | None) -> bool:
    """The decision is the base's, stored elsewhere: a removed write of the same function had the same
    guard and value and only another target (`self.mp_world_size = dist.get_world_size(...)` ->
    `config.tensor_parallel.tp_size = dist.get_world_size(...)` under the unchanged `if self.mpu:`)."""
    a = d.head
    if base is None or changed is None or a.guard is None:
        return False
    removed = changed.removed_lines
    for b in base.assignments:
        if b.function != a.function or b.guard is None or b.target == a.target:
            continue
        if not any(n in removed for n in range(b.stmt_start or b.line, (b.stmt_end or b.line) + 1)):
            continue
        same_guard = loose_key(a.guard) == loose_key(b.guard) or _renamed(a.guard_text, b.guard_text)
        if same_guard and _renamed(a.value, b.value):
            return True
    return False


def _top_level(value: str) -> str:
    """`value` with strings emptied and every bracketed part collapsed to `()`."""
    text = _STRINGS.sub('""', value)
    for _ in range(8):
        emptied = _NESTED.sub("\x00", text)
        if emptied == text:
            break
        text = emptied
    return text.replace("\x00", "()")


def is_formula(a: Assignment) -> bool:
    """The value computes at its top level (`ratio * blocks / 100`, `a and not b`, `x if c else y`),
    rather than passing something through (`get_x(params)`, `int(os.environ.get("X", 3))`, `args.x`,
    a literal, an f-string)."""
    if a.boolean:
        return True
    text = _TEMPLATE_ARGS.sub("", _top_level(a.value)).strip()
    if re.search(r"\b(?:and|or|not|if)\b|&&|\|\||!(?!=)|\?", text):
        return True
    if re.search(r"==|!=|<=|>=|(?<![<>-])[<>](?![<>=])", text):
        return True
    return _ARITHMETIC.search(text) is not None


def _operand_names(a: Assignment) -> set[str]:
    """Leaf names the guard's atoms test (`args.expert_parallel` -> `expert_parallel`)."""
    out: set[str] = set()
    if a.guard is None:
        return out
    for atom in a.guard.atoms():
        m = _CMP.match(atom.text)
        sides = [m.group("left"), m.group("right")] if m else [atom.text]
        for side in sides:
            side = side.strip().lstrip("!").strip()
            if (
                re.match(r"^[A-Za-z_][\w.]*$", side)
                and not ops.is_enum_ref(side)
                and not _LITERAL.match(side)
            ):
                out.add(ops.leaf(side))
    return out


def _env_names(a: Assignment, head: FileFacts | None) -> list[str]:
    """Environment variables the guard reads: in its condition, or through a local or field it tests."""
    if head is None or a.guard is None:
        return []
    names = _operand_names(a)
    spans = [*a.guard_spans, *([(a.guard_line, a.guard_line)] if a.guard_line is not None else [])]
    found = [
        e.name
        for e in head.env_reads
        if e.function == a.function
        and ((e.target and ops.leaf(e.target) in names) or any(lo <= e.line <= hi for lo, hi in spans))
    ]
    return list(dict.fromkeys(found))


def _changed_rows_away(table: TruthTable) -> list[tuple[str, str]]:
    """(column, default) of the inputs every changed row sets away from its default (incoming value
    left out): what a configuration has to set to reach the change."""
    needed: set[str] | None = None
    for r in table.rows:
        if not r.changed:
            continue
        away = {
            v.name
            for v in table.variables
            if not v.is_input and v.default is not None and r.inputs.get(v.name) != v.default
        }
        needed = away if needed is None else needed & away
    return [(v.name, str(v.default)) for v in table.variables if needed and v.name in needed]


def _declared_here(name: str, index: RepoIndex, added: dict[str, set[int]], before: str, fresh: str) -> bool:
    """`name` is a switch this change introduces: every declared default of it sits on a line the
    change added, or (an option the index has no default for) an added line names it as an option,
    `add_argument("--x-y", action="store_true")`, that no changed file named before the change."""
    found = index.defaults(name)
    if found:
        return all(d.line in added.get(d.path, set()) for d in found)
    spellings = {name, name.replace("_", "-")}
    option = "|".join(re.escape(x) for x in spellings)
    if re.search(rf"[\"'](?:--?)?(?:{option})[\"']", fresh) is None:
        return False
    return re.search(rf"(?<![\w-])(?:{option})(?![\w-])", before) is None


def _new_switch(
    table: TruthTable | None, index: RepoIndex, added: dict[str, set[int]], before: str, fresh: str
) -> bool:
    """Every input a changed row needs away from its default is a switch this change introduces."""
    if table is None:
        return False
    away = [ops.leaf(name) for name, _ in _changed_rows_away(table)]
    return bool(away) and all(
        _IDENT.match(n) and _declared_here(n, index, added, before, fresh) for n in away
    )


def _moved_decision(a: Assignment, removed: tuple[str, ...]) -> bool:
    """The same decision was on a line the change removed: a condition, every name the guard tests and
    the written value on one removed line (or a removed condition and the line under it) (`self.checkpoint if replace_with_kernel_inject else None` ->
    `if not config.replace_with_kernel_inject: config.checkpoint = None`): the change moved it."""
    names = _operand_names(a)
    value = a.value.strip()
    if not names or not value or ops.leaf(value) in names:
        return False  # forwarding the tested value (`if x is not None: cfg.x = x`) is the new decision
    # A line alone, or a condition and the statement under it (`if self.mpu:` / `self.x = ...`).
    windows = [
        *removed,
        *(f"{x} {y}" for x, y in zip(removed, removed[1:], strict=False) if _CONDITION_LINE.match(x)),
    ]
    for line in windows:
        if _DECISION.search(line) is None:
            continue  # a plain pass (`f(x=self.x)`) was no decision: the new guard is one
        words = set(re.findall(r"[A-Za-z_]\w*", line))
        flat = "".join(re.sub(r"\b(?:self|this)\s*(?:\.|->)", "", line).split())
        if names <= words and ("".join(value.split()) in flat or (_IDENT.match(value) and value in words)):
            return True
    return False


def _default_row_changed(table: TruthTable | None) -> bool:
    """The row where every input is at its declared default changed (no input's default is a guess)."""
    if table is None or not table.variables:
        return False
    if any(
        v.default is None or v.default_from in ("", "bool default") for v in table.variables if not v.is_input
    ):
        return False
    if not any(not v.is_input for v in table.variables):
        return False
    keyed = [v for v in table.variables if not v.is_input]
    return any(r.changed and all(r.inputs.get(v.name) == v.default for v in keyed) for r in table.rows)


def population(
    d: ChangedDerivation,
    table: TruthTable | None,
    index: RepoIndex,
    head: FileFacts | None,
    base: FileFacts | None,
    changed: ChangedFile | None,
    added: dict[str, set[int]],
    removed: tuple[str, ...] = (),
    before: str = "",
    fresh: str = "",
) -> Population:
    """Which configurations reach a row of `d` that the change made different (see the module doc).
    `added`: the lines the change added, by head path; `removed`: the text of every line it removed;
    `before`: the base text of the changed files; `fresh`: the text of the lines it added."""
    a = d.head
    same = _same_rows(d, table, base, changed)
    if same:
        return Population("none", same)
    if a.guard is None:
        return _unguarded(d, head, base)
    if d.new_branch and _moved_decision(a, removed):
        return Population("none", "moved")
    production = _production(a, table, index)
    if production is not None:
        return production
    if parse_table(a):
        return Population("none", "parse-table")
    if _new_switch(table, index, added, before, fresh):
        return Population("none", "new-switch")
    envs = _env_names(a, head)
    if envs:
        return Population(
            "opt-in",
            "env",
            msg("missing-tests.population.env", names=listing([f"`{e}`" for e in envs], NAMED)),
        )
    models, atom = model_families(a.guard)  # after the opt-ins: behind a new switch or an env, nobody yet
    if models and family_reached(table):  # a named model family that ships takes the row
        said = listing([f"`{m}`" for m in models], NAMED)
        return Population(
            "production", "model", msg("missing-tests.population.model", models=said, atom=atom)
        )
    away = _changed_rows_away(table) if table is not None else []
    inputs = listing([f"`{n}`" for n, _ in away] or [f"`{lit.text}`" for lit, _ in literals(a.guard)], NAMED)
    return Population("opt-in", "switch", msg("missing-tests.population.opt-in", inputs=inputs))


def _same_rows(
    d: ChangedDerivation, table: TruthTable | None, base: FileFacts | None, changed: ChangedFile | None
) -> str:
    """Why the write has nothing new to pin whatever reaches it (`teardown`, `unchanged-rows`, `rename`,
    `retarget`, or a shape of `plumbing.state`), or ""."""
    a = d.head
    short = (a.function or "").replace("::", ".").rsplit(".", 1)[-1]
    if short.startswith("~") or short == "__del__":
        return "teardown"  # a destructor releasing what it held configures nothing
    # A write through a local (`x = ...; cfg.f = x`) is replayed with the local's value inlined: its
    # table is not the behaviour of the function, so only a direct write's table can say "unchanged".
    informative = table is not None and any(not v.is_input for v in table.variables)
    if not a.via and informative and table is not None and not table.truncated and table.changed_rows == 0:
        return "unchanged-rows"
    if _is_rename(d, base):
        return "rename"
    if _retargeted(d, base, changed):
        return "retarget"
    return state(a)


def _production(a: Assignment, table: TruthTable | None, index: RepoIndex) -> Population | None:
    """Configurations that ship reach the changed row: the default row, a model config builder, a
    population a guard atom is derived from."""
    if _default_row_changed(table):
        assert table is not None
        keyed = [v for v in table.variables if not v.is_input]
        said = listing([f"`{v.name}` = `{v.default}` ({v.default_from})" for v in keyed], NAMED)
        return Population("production", "default-row", msg("missing-tests.population.defaults", inputs=said))
    reach = describe_reach(a.guard, index) if a.guard is not None else None
    if reach is not None:
        reaching = [m for m in reach.builders if m.reaches is True and not m.excluded and m.note_msgs]
        derived = [x for x in reach.atoms if x.population and x.population.startswith("every")]
        if reaching or derived:
            return Population("production", "reach", msg("missing-tests.population.reach", reach=reach.text))
    return None


def _statement_envs(a: Assignment, head: FileFacts | None) -> list[str]:
    """Environment variables the unguarded value reads (on its statement's lines)."""
    if head is None:
        return []
    lo = min(a.stmt_start or a.line, a.line)
    hi = max(a.stmt_end or a.line, a.line)
    found = [e.name for e in head.env_reads if e.function == a.function and lo <= e.line <= hi]
    return list(dict.fromkeys(found))


def _unguarded(d: ChangedDerivation, head: FileFacts | None, base: FileFacts | None) -> Population:
    a = d.head
    envs = _statement_envs(a, head)
    if envs:
        # The environment sets it: only deployments that set the variable see anything but its default.
        names = listing([f"`{e}`" for e in envs], NAMED)
        return Population("opt-in", "env", msg("missing-tests.population.env", names=names))
    if not is_formula(a):
        return Population("none", "pass-through")
    before = [b for b in (*d.base, *_base_writes(a, base)) if b.guard is None and b.value != a.value]
    if not before:
        return Population("none", "new-formula")
    return Population(
        "production",
        "formula",
        msg("missing-tests.population.formula", before=before[0].value, function=a.function or a.path),
    )
