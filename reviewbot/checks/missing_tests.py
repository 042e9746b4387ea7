"""missing-tests (P1, blocking): a new or changed derivation branch that no test pins.

## What it does
For every derivation the change adds or alters, searches the test files of the change and of the whole
repository for the assigned field and the enclosing function. When none mentions either — or when the
project's tests were executed and none of them fails with the branch reverted — the branch is untested.
The suggestion lists the rows a focused test must pin and a ready-to-paste parametrised test sketch.

## Why is this bad?
A derived flag that is wrong produces no error, only wrong behaviour somewhere downstream (a skipped
kernel, a skipped cache write). Without a test that fixes the truth table, the next edit of the condition
goes unnoticed until production.

## Example
```cpp
if (config.rope_config.style == RopeStyle::No && !use_kvcache) {
    config.need_rope_kv_cache = false;   // no test mentions need_rope_kv_cache or getAttentionConfigs
}
```

## Use instead
A focused test of the truth table: the row where the rule fires, each row where exactly one guard atom is
flipped (the input is kept), and the row where the input already has the forced value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import assignment_anchor, short_function
from reviewbot.lang.facts import Lang
from reviewbot.lang.index import RepoIndex, is_test_path
from reviewbot.lang.predicate import Atom, literals
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.tests import ExecutionResults

id = "missing-tests"
severity = Severity.P1
summary = "A new or changed derivation branch has no test that pins it."

_NEGATE_VALUE = {"False": "True", "True": "False", "false": "true", "true": "false"}


def _column(atom: Atom) -> tuple[str, str, str]:
    """(column name, value that satisfies the atom, value that does not) for a test row."""
    parts = atom.text.split(" ")
    if len(parts) == 3 and parts[1] in ("==", "!="):
        left, op, right = parts
        enum_side, field_side = (left, right) if left[:1].isupper() else (right, left)
        col = field_side.rsplit(".", 1)[-1]
        other = f"<not {enum_side.rsplit('.', 1)[-1]}>"
        return (col, enum_side, other) if op == "==" else (col, other, enum_side)
    return atom.text.rsplit(".", 1)[-1], "True", "False"


def rows_to_pin(d: ChangedDerivation, index: RepoIndex) -> tuple[list[str], list[tuple[list[str], str]]]:
    """Columns and rows (inputs -> expected) a focused test must pin for this branch."""
    a = d.head
    cols: list[str] = []
    sat: list[str] = []
    unsat: list[str] = []
    for atom, want in literals(a.guard):
        col, yes, no = _column(atom)
        if yes.startswith("<not ") or no.startswith("<not "):
            enum_name = (no if yes.startswith("<not ") else yes).rsplit(".", 1)[0]
            members = index.enum_members(enum_name.rsplit(".", 1)[-1])
            named = (no if yes.startswith("<not ") else yes).rsplit(".", 1)[-1]
            alt = next((m for m in members if m != named), None)
            alt_text = f"{enum_name}.{alt}" if alt else f"<{enum_name} other than {named}>"
            yes, no = (alt_text, no) if yes.startswith("<not ") else (yes, alt_text)
        if not want:
            yes, no = no, yes
        cols.append(col)
        sat.append(yes)
        unsat.append(no)
    forced = a.value
    keep = _NEGATE_VALUE.get(forced, f"<not {forced}>")
    cols.append(f"{a.field} (input)")
    rows: list[tuple[list[str], str]] = [(sat + [keep], forced)]
    for i in range(len(sat)):
        flipped = list(sat)
        flipped[i] = unsat[i]
        rows.append((flipped + [keep], f"{keep} (kept)"))
    rows.append((sat + [forced], forced))
    return cols, rows


def _sketch(d: ChangedDerivation, index: RepoIndex, python_tests: bool) -> tuple[str, str]:
    cols, rows = rows_to_pin(d, index)
    a = d.head
    fn = short_function(a.function) or "derive"
    names = [c.replace(" (input)", "_in").replace(".", "_") for c in cols]
    if python_tests or a.lang is Lang.PYTHON:
        body = ",\n".join("        (" + ", ".join(inp) + f", {exp.split(' ')[0]})" for inp, exp in rows)
        code = (
            "import pytest\n\n\n"
            "@pytest.mark.parametrize(\n"
            f'    "{", ".join(names)}, expected",\n'
            "    [\n" + body + ",\n    ],\n)\n"
            f"def test_{fn}_{a.field}({', '.join(names)}, expected):\n"
            f"    config = make_config({', '.join(f'{n}={n}' for n in names)})  # the project's config builder\n"
            f"    assert config.{fn}().{a.field} == expected\n"
        )
        return code, "python"
    lines = "\n".join(
        "        {"
        + ", ".join(inp).replace(".", "::").replace("True", "true").replace("False", "false")
        + f", {exp.split(' ')[0].lower()}"
        + "},"
        for inp, exp in rows
    )
    code = (
        f"// Pins the truth table of {a.function} for {a.field}.\n"
        "struct Row { "
        + " ".join(f"/* {n} */ auto" for n in names)
        + " expected; };  // use concrete types\n"
        "const Row rows[] = {\n" + lines + "\n};\n"
        "for (const auto& row : rows) {\n"
        f"    // build the config from the row, call {fn}(...), compare .{a.field} with row.expected\n"
        "}\n"
    )
    return code, "cpp"


def _survived(ex: ExecutionResults, path: str, line: int) -> str:
    """The proof that no test pins the branch: its mutant ran and every test still passed."""
    r = ex.mutant_for(path, line)
    what = f"mutant {r.mutant.id} ({r.mutant.description})" if r is not None else "the branch reverted"
    return (
        f"ran `{ex.command}` with {what} applied ({ex.sandbox} sandbox): every test still passes "
        "(the mutant survives)."
    )


def _definitions(ctx: CheckContext) -> Counter[str]:
    """How many functions of the indexed source files carry each short name."""
    return Counter(
        short_function(fn.name)
        for facts in ctx.index.files.values()
        if not is_test_path(facts.path)
        for fn in facts.functions
    )


def run(ctx: CheckContext) -> Iterable[Finding]:
    python_tests = any(p.endswith(".py") for p in ctx.test_files)
    seen: set[str] = set()
    defined = _definitions(ctx) if ctx.derivations else Counter()
    for d in ctx.derivations:
        a = d.head
        fn = short_function(a.function)
        # A test that calls `forward` or `derive` says nothing about this branch when many functions
        # share that name; only a distinctive function name (defined once) counts as a mention.
        names = [n for n in (a.field, fn) if n and (n == a.field or defined[n] <= 1)]
        refs = ctx.index.tests_mentioning(names)
        killed = ctx.execution.killed_by(a.path, a.line) if ctx.execution is not None else None
        if refs and (killed is None or killed):
            continue
        anchor = assignment_anchor(a)
        if anchor in seen:
            continue
        seen.add(anchor)
        searched = f"searched {len(ctx.test_files)} test file(s) for {', '.join(f'`{n}`' for n in names)}"
        if not refs:
            evidence = [f"{searched}: no test mentions them."]
        else:
            evidence = [f"{searched}: mentioned at " + ", ".join(f"{r.path}:{r.line}" for r in refs[:5])]
        if killed == [] and ctx.execution is not None:
            evidence.append(_survived(ctx.execution, a.path, a.line))
        cols, rows = rows_to_pin(d, ctx.index)
        table = "; ".join(
            "(" + ", ".join(f"{c}={v}" for c, v in zip(cols, inp, strict=True)) + f") -> {exp}"
            for inp, exp in rows
        )
        code, code_lang = _sketch(d, ctx.index, python_tests)
        what = "new" if d.new_branch else "changed"
        yield Finding(
            rule=id,
            severity=severity,
            path=a.path,
            line=a.guard_line or a.line,
            title=f"The {what} derivation `{a.target} = {a.value}` in `{fn or a.path}` has no test that pins it.",
            anchor=anchor,
            evidence=tuple(evidence),
            suggestion=f"Add a focused test that pins these rows: {table}.",
            suggestion_code=code,
            suggestion_lang=code_lang,
            extra=(("field", a.field), ("function", a.function or ""), ("assignment", f"{a.path}:{a.line}")),
        )
