"""What a test run hands back is untrusted: one place makes a `TestRun` safe to keep and show.

Test names are made safe where JUnit is read (`junit.parse_junit`); this covers the rest of the
record: the output excerpt (controls other than newline and tab escaped, secrets of the worker's
environment redacted, the last `MAX_OUTPUT_CHARS` kept), the notes and the JUnit file names (one
line each, capped). The execution stage passes every run through `clean_run` before the rules,
the report or the store see it.
"""

from __future__ import annotations

from dataclasses import replace

from reviewbot.model.tests import HeadFailure, TestRun
from reviewbot.model.untrusted import secret_values, untrusted_name, untrusted_text

__all__ = ["MAX_OUTPUT_CHARS", "MAX_NOTE_CHARS", "MAX_JUNIT_FILES", "TAIL_LINES", "clean_run", "failure"]

MAX_OUTPUT_CHARS = 4096
MAX_NOTE_CHARS = 500
MAX_JUNIT_FILES = 200  # names kept in the record; every file was read
TAIL_LINES = 20  # lines of output a failed run shows (the report's test section and JSON)
MAX_TAIL_LINE_CHARS = 300


def clean_run(run: TestRun) -> TestRun:
    """`run` with everything that came out of the sandbox made safe (test cases are already)."""
    secrets = secret_values()
    files = [untrusted_name(f, secrets=secrets) for f in run.junit_files[:MAX_JUNIT_FILES]]
    if len(run.junit_files) > MAX_JUNIT_FILES:
        files.append(f"… {len(run.junit_files) - MAX_JUNIT_FILES} more")
    return replace(
        run,
        output=untrusted_text(run.output, MAX_OUTPUT_CHARS, secrets=secrets),
        notes=[untrusted_name(n, MAX_NOTE_CHARS, secrets=secrets, unique=False) for n in run.notes],
        junit_files=files,
    )


def failure(command: str, run: TestRun) -> HeadFailure | None:
    """What a reader needs to see why the run failed, from a cleaned run (`clean_run`): the command,
    its exit code and the last `TAIL_LINES` lines of its output (each cut to a readable length);
    None when the run passed."""
    if not run.timed_out and run.exit_code in (0, None):
        return None
    lines = run.output.rstrip("\n").split("\n")[-TAIL_LINES:] if run.output.strip() else []
    cut = [ln if len(ln) <= MAX_TAIL_LINE_CHARS else ln[: MAX_TAIL_LINE_CHARS - 1] + "…" for ln in lines]
    return {
        "command": command,
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "output_tail": "\n".join(cut),
    }
