"""Is a read of a switch inside a condition a truth test of the switch (pure)?

`if cfg.x:` and `if a and cfg.x:` test it: the statements under them run because of it. `if n <
seq_len + cfg.x:` uses it as a number: what runs under it is decided by the comparison, not by the
switch. Read from the added line's text (the reads judged are all on lines the change adds).
"""

from __future__ import annotations

import re

from reviewbot.analysis.sides import Side
from reviewbot.lang.facts import FieldRead

__all__ = ["switch_atom"]

_OPERAND_AFTER = re.compile(r"^\)*\s*(?:[-+*/%<>=!&|^\[.]|\bin\b|\bis\b)")
_OPERAND_BEFORE = re.compile(r"(?:[-+*/%<>=,^\[]|\bin|\bis)\s*\(*$")


def switch_atom(r: FieldRead, s: Side) -> bool:
    """The read is a truth test of the switch itself (`if cfg.x:`, `if a and cfg.x:`), not an operand
    of arithmetic or a comparison inside a condition (`if n < seq_len + cfg.x:`): only then does the
    switch decide whether the statements it gates run. `&&`/`||` count as boolean (not operands)."""
    text = next((t for h in s.hunks for n, t in h.added if n == r.line), "")
    at = text.find(r.expr)
    if at < 0:
        return True  # the line is not at hand: judged as before (a gate)
    end = at + len(r.expr)
    while at > 0:  # the receiver the read names only in part (`self.` of `self.config.x`, `p->` of `p->x`)
        if text[at - 2 : at] == "->" or text[at - 2 : at] == "::":
            at -= 2
        elif text[at - 1].isalnum() or text[at - 1] in "_.":
            at -= 1
        else:
            break
    after = text[end:].replace("&&", " and ").replace("||", " or ")
    before = text[:at].replace("&&", " and ").replace("||", " or ")
    return not (_OPERAND_AFTER.match(after) or _OPERAND_BEFORE.search(before))
