"""Is a read of a switch a truth test of it, or a copy that keeps its default's old value (pure)?

`if cfg.x:` and `if a and cfg.x:` test it: the statements under them run because of it. `if n <
seq_len + cfg.x:` uses it as a number: what runs under it is decided by the comparison, not by the
switch. Read from the added line's text (the reads judged are all on lines the change adds).
"""

from __future__ import annotations

import re

from reviewbot.analysis.sides import Side
from reviewbot.lang.facts import FieldRead

__all__ = ["copied_as_is", "switch_atom"]

# A comparison with "true" is still a truth test of the switch (`cfg.x == True`, `cfg.x is True`, `!= 0`).
_TRUTH_COMPARED = re.compile(
    r"^\s*(?:==\s*(?:True|true|1)|is\s+True|!=\s*(?:False|false|0|None|nullptr|NULL))\b"
)
# What makes the read an operand: an arithmetic, comparison, bitwise or subscript operator right after it
# (its own closing parenthesis first is the `if`'s: `if (cfg.x) ++n;` tests it) or right before it. An
# assignment before it (`y = cfg.x ? a : b`, `if v := cfg.x:`) takes the truth value, so is no operand.
_OPERAND_AFTER = re.compile(r"^\s*(?:[-+*/%<>=!&|^\[.]|\bin\b|\bis\b|\bnot\s+in\b)")
_OPERAND_BEFORE = re.compile(r"(?:[-+*/%<>^\[,]|[=!<>]=|\bin|\bis)\s*\(*$")


def switch_atom(r: FieldRead, s: Side) -> bool:
    """The read is a truth test of the switch itself (`if cfg.x:`, `if a and cfg.x:`, `cfg.x ? a : b`),
    not an operand of arithmetic or a comparison inside a condition (`if n < seq_len + cfg.x:`): only
    then does the switch decide whether the statements it gates run. `&&`/`||` count as boolean."""
    text = next((t for h in s.hunks for n, t in h.added if n == r.line), "")
    m = re.search(re.escape(r.expr) + r"(?!\w)", text)  # not the prefix of a longer name (`cfg.x_limit`)
    if m is None:
        return True  # the line is not at hand: judged as before (a gate)
    at, end = m.start(), m.end()
    while at > 0:  # the receiver the read names only in part (`self.` of `self.config.x`, `p->` of `p->x`)
        if text[at - 2 : at] == "->" or text[at - 2 : at] == "::":
            at -= 2
        elif text[at - 1].isalnum() or text[at - 1] in "_.":
            at -= 1
        else:
            break
    after = text[end:].replace("&&", " and ").replace("||", " or ")
    compared = _TRUTH_COMPARED.match(after)
    if compared is not None:
        after = after[compared.end() :]
    before = text[:at].replace("&&", " and ").replace("||", " or ")
    return not (_OPERAND_AFTER.match(after) or _OPERAND_BEFORE.search(before))


def copied_as_is(r: FieldRead, default: str, s: Side) -> bool:
    """The read only copies the switch into a local that the same function otherwise sets to the
    switch's own default, first and on every path the copy is on (`drop = True` / `if valid: drop =
    cfg.drop_last_valid`), and to nothing else: at its default the switch changes nothing the code did
    without it. A local the function also sets to another value (`drop = False` / `if train: drop =
    True`) is a decision the switch takes part in."""
    writes = s.head_facts.assignments if s.head_facts is not None else ()
    copy = next((a for a in writes if a.line == r.line and a.value == r.expr and "." not in a.target), None)
    if copy is None:
        return False
    others = [
        a for a in writes if a.target == copy.target and a.function == copy.function and a.line != copy.line
    ]
    if any(a.value not in (default, r.expr) for a in others):
        return False
    around = copy.guard.atoms() if copy.guard is not None else frozenset()
    return any(
        a.value == default
        and a.line < copy.line
        and (a.guard.atoms() if a.guard is not None else frozenset()) <= around
        for a in others
    )
