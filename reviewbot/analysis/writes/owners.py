"""Who a write belongs to and whether it is new: a method's class, constructors, pickling and config
builders, the owners a field write may reach, and writes moved unchanged from elsewhere (pure; the rules
read these through `checks.util`)."""

from __future__ import annotations

import re
from functools import lru_cache

from reviewbot.analysis.text import clip, is_vendored, short_function, snake
from reviewbot.lang.facts import AssignKind, Assignment, FieldRead, FileFacts
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import And, Or, loose_key, plain_conjuncts
from reviewbot.model.change import ChangedFile

__all__ = [
    "narrowed_from_base",
    "widened_from_base",
    "bound_owners",
    "callee_reads_itself",
    "class_of",
    "field_owner",
    "is_builder",
    "is_constructor",
    "is_pickling",
    "mentions_field",
    "moved_from_elsewhere",
    "moved_unchanged",
    "moved_writes",
    "owners_of",
    "receiver_of",
    "receiver_only_edit",
    "rederives_itself",
    "statement",
    "writers_on",
]


def class_of(function: str | None) -> str:
    """The class a method belongs to: `ModelConfig::getAttentionConfigs` -> `ModelConfig`,
    `Bert._create_config` -> `Bert`; "" for a free function."""
    if not function:
        return ""
    parts = function.replace("::", ".").split(".")
    return parts[-2] if len(parts) >= 2 else ""


_PY_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "__attrs_post_init__"})


def is_constructor(function: str | None) -> bool:
    """`__init__` / `__post_init__` in Python, `T::T` in C++."""
    short = short_function(function)
    return short in _PY_CONSTRUCTORS or (bool(short) and short == class_of(function))


# Functions that restore or copy state field by field: their writes are neither settings nor derivations.
_PICKLING = frozenset(
    {"__setstate__", "__getstate__", "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__"}
)
# pybind11's unpickling lambda (`py::pickle(..., [](py::tuple t) { c.x = t[0].cast<int>(); })`) and
# Python state unpacking (`self.x = state["x"]`, `self.x, self.y = state`).
_UNPICKLE_VALUE = re.compile(r"^\w+\[[^\]]+\]\.cast<|^(?:state|d|t|data|tup|st)\[")


def is_pickling(a: Assignment) -> bool:
    return short_function(a.function) in _PICKLING or bool(_UNPICKLE_VALUE.search(a.value))


# Config builders: a model's own, local place to set its flags (`Bert._create_config`).
_BUILDER = re.compile(
    r"^_?(?:(?:create|build|make)_?config|from_huggingface|from_hf|from_config_json|from_params|from_pretrained)$",
    re.I,
)


def is_builder(function: str | None) -> bool:
    return bool(_BUILDER.match(short_function(function)))


def statement(a: Assignment, limit: int = 60) -> str:
    """The write as written (`config.need_rope_kv_cache = false`) when its line holds it, else canonical."""
    text = a.text.strip().rstrip(";").strip()
    if "=" not in text or a.field not in text or text.endswith(("(", ",", "\\")):
        text = f"{a.target} = {a.value}"
    return clip(text, limit)


def receiver_of(a: Assignment | FieldRead) -> str:
    """The written (read) object as written: `config.attn_config` for `config.attn_config.x`; "" for
    `self.x` / `x`."""
    path = a.target if isinstance(a, Assignment) else a.expr
    return path.rsplit(".", 1)[0] if "." in path else ""


_WORD = re.compile(r"\w")
_NO_FIELD = re.compile(r"(?<![\w])_?(?![\w])|(?<![\w])m_(?![\w])")  # the pattern for an empty field


def _word_at(text: str, i: int) -> bool:
    return 0 <= i < len(text) and _WORD.match(text[i]) is not None


def mentions_field(text: str, field: str) -> bool:
    r"""`field` as a whole word of `text`; C++ members are often spelled with a trailing underscore
    (`head_num_`) or an `m_` prefix (`m_head_num`). The same as the pattern
    `(?<!\w)FIELD_?(?!\w)|(?<!\w)m_FIELD(?!\w)`, found by `str.find`: compiling that pattern for each
    field cost seconds on a change deriving thousands of fields."""
    if not field:
        return _NO_FIELD.search(text) is not None
    at = text.find(field)
    while at >= 0:
        end = at + len(field)
        after_ok = not _word_at(text, end) or (text[end] == "_" and not _word_at(text, end + 1))
        if after_ok and not _word_at(text, at - 1):
            return True
        prefixed = at >= 2 and text[at - 2 : at] == "m_" and not _word_at(text, at - 3)
        if prefixed and not _word_at(text, end):
            return True
        at = text.find(field, at + 1)
    return False


_ARITHMETIC = re.compile(r"[-+*/%]|<<|>>|\b(?:min|max|div|ceil|floor)\b")


def rederives_itself(a: Assignment) -> bool:
    """`config.head_num = config.head_num / tp_size`: the value is computed from the same field (a
    per-rank or unit re-derivation of one quantity), not a new setting of it."""
    return mentions_field(a.value, a.field) and bool(_ARITHMETIC.search(a.value))


_CALLED = re.compile(r"^([A-Za-z_]\w*)\s*\(")


def callee_reads_itself(a: Assignment, source: str | None) -> bool:
    """`self.cutlass = _cutlass(target)` where the Python function `_cutlass`, defined in the same file,
    returns `self.cutlass` on some path: the write narrows the value it had (clears it where it cannot
    apply), as `x = x and ok` would, rather than setting it anew."""
    m = _CALLED.match(a.value.strip())
    if m is None or source is None or not a.path.endswith(".py") or not a.receiver or not a.field:
        return False
    lines = source.split("\n")
    head = re.compile(rf"^(\s*)def\s+{re.escape(m.group(1))}\s*\(")
    for i, line in enumerate(lines):
        d = head.match(line)
        if d is None:
            continue
        indent, body = len(d.group(1)), []
        for nxt in lines[i + 1 :]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt)
        if re.search(rf"(?<![\w.]){re.escape(a.receiver)}\.{re.escape(a.field)}\b", "\n".join(body)):
            return True
    return False


# Abbreviations that receiver names use for the words of type names.
_WORDS = {
    "cfg": "config",
    "conf": "config",
    "configs": "config",
    "attn": "attention",
    "params": "param",
    "parameters": "param",
    "parameter": "param",
    "args": "arg",
    "arguments": "arg",
    "opts": "option",
    "options": "option",
}


# Words that say a receiver holds configuration (`config`, `attn_configs`, `gpt_init_params`, `args`).
_CONFIG_WORDS = frozenset({"config", "param", "arg", "option", "setting", "settings"})


def _words(name: str) -> tuple[str, ...]:
    return tuple(_WORDS.get(w, w) for w in snake(name).split("_") if w)


def _declaring_owners(index: RepoIndex, field: str) -> list[str]:
    return sorted({d.owner for d in index.defaults(field) if not is_vendored(d.path)})


def _bound_owner(a: Assignment) -> str:
    # A binding's canonical target is `Owner.field` (`.def_readwrite("f", &Owner::f)`).
    return a.target.rsplit(".", 2)[-2] if a.target.count(".") >= 1 else ""


def owners_of(a: Assignment | FieldRead, index: RepoIndex) -> tuple[frozenset[str], str]:
    """The owner types a write may land in, and how that was found (best first):

    `model`: the semantic model recorded the owner; `binding`: a binding names its class; `self`: the
    enclosing class for `self.x` / a bare member; `name`: the receiver's name spells one of the classes
    that declare the field (`attn_configs` -> `AttentionConfigs`, a documented last resort); `field`: only
    one class declares the field and the receiver is named like a config. An empty set: unknown (the write is not matched to any owner).
    """
    recorded, _ = index.owner_of(a)  # the semantic model's owner, when it knows the receiver's type
    if recorded:
        return frozenset({recorded}), "model"
    if isinstance(a, Assignment) and a.kind is AssignKind.BINDING:
        bound = _bound_owner(a)
        return (frozenset({bound}), "binding") if bound else (frozenset(), "")
    declaring = _declaring_owners(index, a.field)
    if not receiver_of(a):
        cls = class_of(a.function)
        return (frozenset({cls}), "self") if cls else (frozenset(), "")
    wanted = _words(receiver_of(a).rsplit(".", 1)[-1])
    by_name = [o for o in declaring if _words(o) == wanted]
    if by_name:
        return frozenset(by_name), "name"
    # The only declaring class is a guess worth making for a receiver named like a config, not for
    # `weight.data_type` on an object whose class the index has not seen.
    if len(declaring) == 1 and _CONFIG_WORDS.intersection(_words(receiver_of(a).replace(".", "_"))):
        return frozenset(declaring), "field"
    return frozenset(), ""


_LOWER_PATH = re.compile(r"(?<![\w.])[a-z_]\w*(?:\.[A-Za-z_]\w*)+")


@lru_cache(maxsize=1 << 14)
def _without_receivers(text: str) -> str:
    # Cached: every write of both sides of the change is keyed by its value (`moved_writes`), and
    # values repeat (`True`, `None`, `args.x`).
    return _LOWER_PATH.sub(lambda m: m.group(0).rsplit(".", 1)[-1], text)


@lru_cache(maxsize=8192)
def _loose_line(text: str) -> str:
    # Cached: every derivation of a hunk compares the hunk's lines again (85,500 calls on --large).
    return "".join(_without_receivers(text).split())


def receiver_only_edit(a: Assignment, changed: ChangedFile | None) -> bool:
    """Every added line of the hunk that holds the write is a removed line with other receivers
    (`parallel_config.x = (` -> `parallel_config.eplb_config.x = (`): the code moved to another object."""
    if changed is None:
        return False
    line = a.via_line or a.line
    for h in changed.hunks:
        added = [t for n, t in h.added if t.strip()]
        if line not in {n for n, _ in h.added} or not added:
            continue
        removed = {_loose_line(t) for _, t in h.removed}
        return all(_loose_line(t) in removed for t in added)
    return False


def moved_unchanged(a: Assignment, base: FileFacts | None, changed: ChangedFile | None = None) -> bool:
    """The write moved to another receiver with its guard and value (`parallel_config.x = v` ->
    `parallel_config.eplb_config.x = v`): its rows did not change. Either the base made the same write
    in the same function through another receiver, or the change only rewrote receivers in its hunk."""
    if receiver_only_edit(a, changed):
        return True
    if base is None:
        return False
    guard = loose_key(a.guard) if a.guard is not None else ""
    value = _without_receivers(a.value)
    return any(
        b.function == a.function
        and b.field == a.field
        and b.target != a.target
        and (loose_key(b.guard) if b.guard is not None else "") == guard
        and _without_receivers(b.value) == value
        for b in base.assignments
    )


def narrowed_from_base(a: Assignment, base: FileFacts | None, removed: frozenset[int] = frozenset()) -> bool:
    """The base file already made this write (the same target and value, receivers aside), under a
    guard whose every condition the head's guard still holds: a refactor that moved it (the base write's
    line is one the change removed), or nested it under one more condition (`if model_arch ==
    "DeepseekV3ForCausalLM":`). Whoever it overrides now, it overrode before. Only guards that are plain
    conjunctions are compared, each condition with its negation (`not x` is not `x`)."""
    now = _conjuncts(a)
    if base is None or now is None:
        return False
    value = _without_receivers(a.value)
    return any(
        b.field == a.field
        and (b.function == a.function or b.line in removed)
        and _without_receivers(b.target) == _without_receivers(a.target)
        and _without_receivers(b.value) == value
        and (then := _conjuncts(b)) is not None
        and then <= now
        for b in base.assignments
    )


def widened_from_base(a: Assignment, base: FileFacts | None) -> bool:
    """The base function already made this write (the same target and value, receivers aside) under a
    plain conjunction, and the head's guard keeps each of its conditions or offers it as one case of an
    `or` (`n_nextn > 0` -> `n_nextn > 0 || has_external_mtp`): the change adds cases to an override the
    base decided and reviewed, it does not decide a new one (dev-scan sample 13, two P2s judged wrong)."""
    if base is None or a.guard is None:
        return False
    parts = a.guard.args if isinstance(a.guard, And) else (a.guard,)
    kept = {_loose_line(p.key) for p in parts}
    offered = {_loose_line(d.key) for p in parts if isinstance(p, Or) for d in p.args}
    if not offered:
        return False  # no `or` in the head's guard: nothing widened (`narrowed_from_base` covers the rest)
    value = _without_receivers(a.value)
    return any(
        b.field == a.field
        and b.function == a.function
        and _without_receivers(b.target) == _without_receivers(a.target)
        and _without_receivers(b.value) == value
        and (then := _conjuncts(b))
        and then <= kept | offered
        and not then <= kept
        for b in base.assignments
    )


def _conjuncts(a: Assignment) -> frozenset[str] | None:
    """The guard's conditions as loose text, or None when it is not a plain conjunction (an `or`)."""
    if a.guard is None:
        return frozenset()
    parts = plain_conjuncts(a.guard)
    return None if parts is None else frozenset(_loose_line(c.key) for c in parts)


def _write_key(a: Assignment) -> tuple[str, str, str]:
    # `self.generate_reserve_blocks` and `self._generate_reserve_blocks` name the same setting.
    guard = loose_key(a.guard) if a.guard is not None else ""
    return a.field.strip("_"), guard, _without_receivers(a.value)


MovedWrites = dict[tuple[str, str, str], set[tuple[str, str | None]]]


def moved_writes(base_facts: dict[str, FileFacts], head_facts: dict[str, FileFacts]) -> MovedWrites:
    """The writes the change took away from where they were: by write key (field, guard, value), the
    (base path, function) that made them and whose head no longer does. Built once per round: asking
    every derivation against every base write was quadratic (5.7x the checks stage of the large
    bench)."""
    kept: set[tuple[str, str | None, tuple[str, str, str]]] = {
        (path, h.function, _write_key(h)) for path, head in head_facts.items() for h in head.assignments
    }
    out: MovedWrites = {}
    for path, base in base_facts.items():
        for b in base.assignments:
            key = _write_key(b)
            if (path, b.function, key) not in kept:
                out.setdefault(key, set()).add((path, b.function))
    return out


def moved_from_elsewhere(a: Assignment, moved: MovedWrites) -> bool:
    """The write moved here from another changed file or function with its guard and value
    (`Scheduler.__init__`'s `self.x = int(os.environ.get("X", 3))` now in `Strategy.__init__`): a
    base file of the change made the same write, and that file's head no longer makes it there. A
    verbatim move is a refactor, not new behaviour to pin."""
    return any(place != (a.path, a.function) for place in moved.get(_write_key(a), ()))


def field_owner(a: Assignment, index: RepoIndex) -> str:
    """The one owner a write lands in ("" when unknown or ambiguous)."""
    owners, _ = owners_of(a, index)
    return min(owners) if len(owners) == 1 else ""


def writers_on(owner: str, a: Assignment, index: RepoIndex) -> list[Assignment]:
    """Writes of `owner`'s field `a.field`: the index's owner-aware lookup (bindings, bases, Python
    classes forwarding to a bound object), plus writes whose owner the index cannot tell but whose
    receiver names that owner (`attn_configs.x` -> `AttentionConfigs`), by path and line."""
    family = index.family(owner)
    found = set(index.writers_of(owner, a.field))
    for w in index.writers(a.field):
        if w in found or index.owner_of(w)[0]:
            continue  # the model knows its owner: when it is another type, it is another field
        mine, _ = owners_of(w, index)
        if mine & family and (w.lang is a.lang or bool(family & bound_owners(index, a.field))):
            found.add(w)
    return sorted(found, key=lambda w: (w.path, w.line, w.target, w.value))


def bound_owners(index: RepoIndex, field: str) -> frozenset[str]:
    """Owners whose `field` is exposed to the other language by a binding."""
    return frozenset(
        _bound_owner(w) for w in index.writers(field) if w.kind is AssignKind.BINDING and _bound_owner(w)
    )
