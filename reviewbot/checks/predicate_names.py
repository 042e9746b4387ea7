"""The name duplicated-predicate suggests for a local that keeps a predicate: built from what the
predicate means (`rope_style_is_no_and_no_kvcache`), in the order it is written."""

from __future__ import annotations

from reviewbot.checks.pinning import column_name, constant, in_source_order, split_comparison
from reviewbot.checks.util import identifier
from reviewbot.lang.facts import Lang
from reviewbot.lang.predicate import Atom, Or, Pred, literals, loose_key

__all__ = ["MAX_NAME", "local_declaration", "name_for"]

MAX_NAME = 48  # characters of a suggested local's name
_NEGATED_PREFIX = (("use_", "no_"), ("has_", "no_"), ("enable_", "disable_"), ("is_", "not_"))
_COMPARE_WORDS = {">": "above", "<": "below", ">=": "at_least", "<=": "at_most"}
_NEGATED_COMPARE = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}


def _word(atom: Atom, want: bool) -> str:
    """The words of one literal: `rope_style_is_no`, `no_kvcache`, `has_quant`, `seq_len_above_8`."""
    parts = split_comparison(atom.text)
    if parts is not None:
        left, op, right = parts
        lc, rc = constant(left), constant(right)
        const = lc if rc is None else rc if lc is None else None
        if const is not None:
            field = column_name(right if lc is not None else left)
            if lc is not None:
                op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            if not want:
                op = {"==": "!=", "!=": "==", "is": "is not", "is not": "is"}.get(
                    op, _NEGATED_COMPARE.get(op, op)
                )
            value = const.py.rsplit(".", 1)[-1].strip("'\"").lower() or "empty"
            if const.kind == "none":
                return f"{field}_is_none" if op in ("==", "is") else f"has_{field}"
            if op in ("==", "is"):
                return f"{field}_is_{value}"
            if op in ("!=", "is not"):
                return f"{field}_is_not_{value}"
            if op in _COMPARE_WORDS:
                return f"{field}_{_COMPARE_WORDS[op]}_{value}"
        return identifier(atom.text) if want else f"not_{identifier(atom.text)}"
    word = column_name(atom.text)
    if want:
        return word
    if word.endswith("_empty"):  # `!x.items.empty()` -> `items_not_empty`
        return word[: -len("empty")] + "not_empty"
    for prefix, negated in _NEGATED_PREFIX:
        if word.startswith(prefix) and len(word) > len(prefix):
            return negated + word[len(prefix) :]
    return f"not_{word}"


def name_for(part: Pred, written: str) -> str:
    """A local's name built from what the predicate means, in the order it is written."""
    if isinstance(part, Or):
        words = [name_for(a, written) for a in part.args]
        joiner = "_or_"
    else:
        lits = literals(part)
        if not lits:
            return identifier(loose_key(part), "condition")
        words = [_word(atom, want) for atom, want in in_source_order(lits, written)]
        joiner = "_and_"
    name = identifier(joiner.join(words), "condition")
    if len(name) > MAX_NAME:  # cut at a word boundary
        name = name[:MAX_NAME].rsplit("_", 1)[0]
    return identifier(name, "condition")


def local_declaration(part: Pred, written: str, lang: Lang) -> str:
    """The statement that keeps `written` in a local named by `name_for`, in the file's language."""
    name = name_for(part, written)
    return f"const bool {name} = {written};" if lang is Lang.CPP else f"{name} = {written}"
