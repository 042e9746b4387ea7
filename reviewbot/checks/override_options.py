"""The command-line options a write overrides (for unconditional-override): the option in the same file
whose destination the write sets, and whether the command line can ask for another value than the one
written."""

from __future__ import annotations

import re

from reviewbot.analysis.writes.scopes import FileScopes, file_scopes
from reviewbot.checks.base import CheckContext
from reviewbot.lang.facts import Assignment, Lang
from reviewbot.model.change import ChangedFile

__all__ = ["option_scopes", "overridden_option"]

# Receivers that hold parsed command-line arguments (`args.x`) or are the arguments' own class (`self.x`).
_ARGS_RECEIVER = re.compile(r"^(?:self|this|\w*args|namespace|opts|options)$")


def _command_line_option(a: Assignment, scopes: FileScopes | None) -> int | None:
    """The line of the command-line option this Python write's field is (`add_argument("--x")` in the
    same file, written through `args.x` or the arguments' own `self.x`): the user's explicit setting."""
    if scopes is None or a.lang is not Lang.PYTHON or not _ARGS_RECEIVER.match(a.receiver or "self"):
        return None
    return scopes.option_line(a.field)


def option_scopes(ctx: CheckContext, path: str) -> FileScopes | None:
    changed = ctx.change.file(path)
    if changed is None or changed.head_text is None:
        return None
    return file_scopes(path, changed.head_text)


def overridden_option(ctx: CheckContext, a: Assignment, changed: ChangedFile | None) -> int | None:
    """The line of the command-line option the write overrides, when the change writes the line itself
    (not a guard changed around it) and the option can ask for another value than the one written."""
    if changed is None or a.line not in changed.added_lines:
        return None
    scopes = option_scopes(ctx, a.path)
    option = _command_line_option(a, scopes)
    if option is not None and scopes is not None and scopes.option_stores(a.field) == a.value.strip():
        # `args.overlap_grad_reduce = True` for a `store_true` option: the command line can only ask for
        # the value written, so no explicit choice is lost (dev-scan sample 9).
        return None
    return option
