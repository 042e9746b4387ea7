"""arg-value-not-consumed (P1): a command-line handler that took a value no longer takes it.

## What it does
In a hand-written C/C++ option loop (llama.cpp's family of parsers over `argv` with an index `i`),
compares each handler the change edits with the same option's handler at the base: it reports one that
advanced `i` to read a value at the base and neither advances nor reads any more at the head (its read
commented out: `//params.indexer_cache_type_k = argv[++i];`), while the option strings stay registered
(`analysis.argv_handlers`).

Not flagged: an option the change removes, a handler that now reads its value another way (a helper
handed `i`, a capitalised macro this file does not define, which may advance `i` in a header), a loop or
another index (not judged), a handler whose read was deleted rather than commented out (a valued option
deliberately turned into a switch), handlers the change did not touch.

## Why is this bad?
The option still parses, but its value does not go with it: on an existing command line
(`-ictk q8_0 -m model.gguf`) the value is read as the next option, and the launch fails with
"invalid argument: q8_0" (ik_llama.cpp 96938a109), or worse, is taken as a positional argument. An
option whose effect is disabled must still consume its value to keep command lines working.

## Example
```cpp
if (arg == "-ictk" || arg == "--indexer-cache-type-k") {
    LOG_WARN("ignored");
    //params.indexer_cache_type_k = argv[++i];
    return true;
}
```

## Use instead
```cpp
if (arg == "-ictk" || arg == "--indexer-cache-type-k") {
    CHECK_ARG                 // still consume the value
    LOG_WARN("ignored");
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

id = "arg-value-not-consumed"
severity = Severity.P1
summary = (
    "A command-line handler that took a value no longer consumes it: the value is parsed as the next option."
)


def _finding(s: ArgvSlip) -> Finding:
    option = " / ".join(s.options)
    return Finding.make(
        rule=id,
        severity=severity,
        path=s.path,
        line=s.line,
        anchor=f"{s.options[0]}",
        title=msg("arg-value-not-consumed.title", option=option, count=s.base_values),
        evidence=(
            msg("arg-value-not-consumed.handler", place=place(s.path, s.line), text=clip(s.text, 100)),
        ),
        suggestion=msg("arg-value-not-consumed.suggestion"),
        extra=(
            ("field", s.field),
            ("option", s.options[-1]),
        ),
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    for s in argv_slips(changed_cpp(ctx.change)):
        if s.kind is ArgvKind.NOT_CONSUMED:
            yield _finding(s)
