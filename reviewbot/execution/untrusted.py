"""What a test run hands back is untrusted: one place makes a `TestRun` safe to keep and show.

Test names are made safe where JUnit is read (`junit.parse_junit`); this covers the rest of the
record: the output excerpt (controls other than newline and tab escaped, secrets of the worker's
environment redacted, the last `MAX_OUTPUT_CHARS` kept), the notes and the JUnit file names (one
line each, capped). The execution stage passes every run through `clean_run` before the rules,
the report or the store see it.
"""

from __future__ import annotations

from dataclasses import replace

from reviewbot.model.tests import TestRun
from reviewbot.model.untrusted import secret_values, untrusted_name, untrusted_text

__all__ = ["MAX_OUTPUT_CHARS", "MAX_NOTE_CHARS", "MAX_JUNIT_FILES", "clean_run"]

MAX_OUTPUT_CHARS = 4096
MAX_NOTE_CHARS = 500
MAX_JUNIT_FILES = 200  # names kept in the record; every file was read


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
