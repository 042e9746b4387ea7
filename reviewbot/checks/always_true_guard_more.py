"""always-true-guard's findings for the guards other analyses find: a preprocessor macro only another
source file defines (`analysis.macro_guards`), a compared literal one letter from the project's spelling
(`analysis.literal_typos`), a command-line switch the command line cannot change (`analysis.stuck_flags`),
a function the repository calls elsewhere tested here without the call (`analysis.uncalled_calls`).
The rule's docs are in `checks.always_true_guard`."""

from __future__ import annotations

from reviewbot.analysis.literal_typos import LiteralTypo
from reviewbot.analysis.macro_guards import MacroGuard
from reviewbot.analysis.stuck_flags import BoolTyped, StuckFlag
from reviewbot.analysis.uncalled_calls import UncalledTest
from reviewbot.checks.util import beside_package, clip, place, places
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import msg

id = "always-true-guard"
TEXT = 80  # quoted code is clipped to this width in titles and evidence


def macro_finding(g: MacroGuard) -> Finding:
    """A preprocessor guard on a macro only another translation unit defines: P1, the code it selects
    (or leaves out) is the same in every build."""
    value = "true" if g.value else "false"
    return Finding.make(
        rule=id,
        severity=Severity.P1,
        path=g.path,
        line=g.line,
        anchor=f"macro|{g.name}|{g.text}",
        title=msg(
            "always-true-guard.title.macro", text=clip(g.text, TEXT), value=value, name=g.name, file=g.path
        ),
        evidence=(
            msg(
                "always-true-guard.macro-defined",
                name=g.name,
                places=places([place(p, n) for p, n in g.defined_at]),
            ),
        ),
        suggestion=msg("always-true-guard.suggestion.macro", name=g.name),
        extra=(("field", g.name), ("kind", "macro"), ("value", value)),
    )


def literal_finding(t: LiteralTypo) -> Finding:
    """A compared literal one edit from the project's spelling that nothing writes: P2, the branch it
    selects never runs for the values users and models actually give."""
    quoted = ", ".join(f"`{clip(text, TEXT)}` ({place(p, n)})" for p, n, text in t.places)
    other, more = t.others[0], t.others[1:]
    return Finding.make(
        rule=id,
        severity=Severity.P2,
        path=t.path,
        line=t.line,
        anchor=f"literal|{t.literal}",
        title=msg(
            "always-true-guard.title.literal-typo2" if more else "always-true-guard.title.literal-typo",
            text=clip(t.text, TEXT),
            literal=t.literal,
            other=other,
            other2=more[0] if more else "",
        ),
        evidence=(msg("always-true-guard.literal-typo", literal=t.literal, other=other, places=quoted),),
        suggestion=msg("always-true-guard.suggestion.literal-typo", literal=t.literal, other=other),
        extra=(("field", t.literal), ("kind", "literal-typo"), ("value", "false"), ("spelling", other)),
    )


def stuck_finding(f: StuckFlag) -> Finding:
    """An argparse switch whose default is what it stores: P2, every launch gets the same value and an
    operator who wants the other one has no way to ask for it (the default behaviour itself is kept);
    P3 in a benchmark, example or tool script beside the package."""
    value = str(f.value)
    return Finding.make(
        rule=id,
        severity=Severity.P3 if beside_package(f.path) else Severity.P2,
        path=f.path,
        line=f.line,
        anchor=f"stuck|{f.dest}",
        title=msg(
            "always-true-guard.title.stuck", flag=f.flag, value=value, action=f.action, other=str(not f.value)
        ),
        evidence=(
            msg(
                "always-true-guard.stuck",
                lines=", ".join(f"`{clip(t, TEXT)}` ({place(f.path, n)})" for n, t in f.quoted),
            ),
        ),
        suggestion=msg("always-true-guard.suggestion.stuck", dest=f.dest, other=str(not f.value)),
        extra=(("field", f.dest), ("kind", "stuck-flag"), ("value", value)),
    )


def uncalled_finding(t: UncalledTest) -> Finding:
    """A function tested without its call: P1 (a branch every configuration takes, or none does), P2 in an
    `assert` (a validation that never fails lets through what it was written to reject)."""
    path, line, text = t.called
    evidence = [msg("always-true-guard.called", place=place(path, line), call=clip(text, TEXT))]
    if t.in_assert:
        evidence.append(msg("always-true-guard.validation"))
    return Finding.make(
        rule=id,
        severity=Severity.P2 if t.in_assert else Severity.P1,
        path=t.path,
        line=t.line,
        anchor=f"uncalled-call|{t.function}|{t.text}",
        title=msg("always-true-guard.title.uncalled-call", text=clip(t.text, TEXT)),
        evidence=tuple(evidence),
        suggestion=msg("always-true-guard.suggestion.uncalled-call", text=clip(t.text, TEXT)),
        extra=(("field", t.text), ("kind", "uncalled"), ("value", "True")),
    )


def bool_typed_finding(f: BoolTyped) -> Finding:
    """An option parsed with `bool`: P2 (an operator's `false` turns it on), P3 in a script beside the package."""
    return Finding.make(
        rule=id,
        severity=Severity.P3 if beside_package(f.path) else Severity.P2,
        path=f.path,
        line=f.line,
        anchor=f"bool-type|{f.dest}",
        title=msg("always-true-guard.title.bool-type", flag=f.flag),
        evidence=(
            msg(
                "always-true-guard.stuck",
                lines=", ".join(f"`{clip(t, TEXT)}` ({place(f.path, n)})" for n, t in f.quoted),
            ),
        ),
        suggestion=msg("always-true-guard.suggestion.bool-type", flag=f.flag),
        extra=(("field", f.dest), ("kind", "bool-type"), ("value", "True")),
    )
