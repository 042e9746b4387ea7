"""double-argv-increment (P0): a command-line handler advances past its value before reading it.

## What it does
In a hand-written C/C++ option loop (llama.cpp's family: `if (arg == "-ctk" || arg == "--cache-type-k")
{ ... }` over `argv` with an index `i`), follows a handler the change adds or edits in order: `++i`,
`i++`, `i += 1`, a macro whose `#define` in the same file advances `i` (`CHECK_ARG`, defined as
`if (++i >= argc) { ... }`), and the reads `argv[i]`, `argv[++i]`, `argv[i++]`, `argv[i + 1]`. It
reports a read two or more slots past the option when the slot between was never read: the value was
stepped over (`analysis.argv_handlers`).

Not flagged: handlers with a loop, another index (`argv[j]`), `i` changed another way or handed to a
call (which may advance it); a handler that reads every slot it steps over (two values:
`CHECK_ARG a = argv[i]; CHECK_ARG b = argv[i];`); handlers on lines the change did not touch.

## Why is this bad?
Every launch that passes the option breaks: the handler takes the token after the value (the next
option, parsed as this option's value), or `argv[argc]` (a null pointer) when the value is last, and the
value itself is then parsed as an option. It compiles, and a test that never passes the option
never sees it (ik_llama.cpp 7642ac3ec: `CHECK_ARG` then `argv[++i]` for `-ctk`, `-ctv`, `-ictk`).

## Example
```cpp
if (arg == "-ctk" || arg == "--cache-type-k") {
    CHECK_ARG                           // advances i to the value
    params.cache_type_k = argv[++i];    // advances again: reads the token after the value
    return true;
}
```

## Use instead
```cpp
if (arg == "-ctk" || arg == "--cache-type-k") {
    CHECK_ARG
    params.cache_type_k = argv[i];
    return true;
}
```
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.analysis.argv_handlers import ArgvKind, ArgvSlip, argv_slips, changed_cpp
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "double-argv-increment"
severity = Severity.P0
summary = "A command-line handler advances past its option's value before reading it: the value is skipped."


def _finding(s: ArgvSlip) -> Finding:
    option = " / ".join(s.options)
    evidence = [msg("double-argv-increment.read", place=place(s.path, s.line), text=clip(s.text, 100))]
    if s.macro:
        evidence.append(msg("double-argv-increment.macro", macro=s.macro))
    return Finding.make(
        rule=id,
        severity=severity,
        path=s.path,
        line=s.line,
        anchor=f"{s.options[0]}",
        title=msg("double-argv-increment.title", option=option),
        evidence=tuple(evidence),
        suggestion=msg("double-argv-increment.suggestion"),
        extra=(("field", s.field), ("option", s.options[-1]), ("handler", place(s.path, s.handler_line))),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    for s in argv_slips(changed_cpp(ctx.change)):
        if s.kind is ArgvKind.DOUBLE:
            yield _finding(s)
