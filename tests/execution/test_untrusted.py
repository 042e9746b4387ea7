"""What comes out of the sandbox is untrusted (issue 16, item 2): JUnit files are never read through a
symbolic link or from outside the run directory, and test names and output are capped, show their
control characters escaped and never carry a value of the worker's secret-looking environment."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewbot.execution.execute import ExecSettings, execute, executor
from reviewbot.execution.junit import MAX_NAME_CHARS, open_inside, parse_junit
from reviewbot.model.untrusted import (
    REDACTED,
    escape_controls,
    redact,
    secret_values,
    untrusted_name,
    untrusted_text,
)
from reviewbot.report.render import render_json, render_markdown
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.execution.probe import change_of, flag_derivation, make_repo, toml

FAST = ExecSettings(time_budget_s=60, max_workers=2)
XML = '<testsuites><testsuite name="s"><testcase classname="{cls}" name="{name}"/></testsuite></testsuites>'

# The worker's own secrets, under the names the probe found passing the scrub.
PLANTED = {
    "MYSQL_PWD": "mysql-pwd-7f3a9c",
    "DB_PASS": "db-pass-51be02",
    "CELERY_BROKER_URL": "redis://:broker-pw-90d1@cache.internal:6379/0",
    "SENTRY_DSN": "https://sentrykey4c2e@o1.ingest.example/42",
    "GITHUB_TOKEN": "ghs_0123456789abcdefABCDEF",
    "REVIEWBOT_DB_URL": "postgresql://reviewbot:pg-secret-77aa@db.internal/reviewbot",
}
# Every string that must never come back: whole values and the passwords inside the URLs.
NEVER = [*PLANTED.values(), "broker-pw-90d1", "sentrykey4c2e", "pg-secret-77aa", "reviewbot:pg-secret-77aa"]


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PWD", "/work/somewhere")  # a path, not a password
    yield PLANTED


def test_secret_values_are_those_of_secret_looking_names_and_urls_with_a_user_part(
    planted: dict[str, str],
) -> None:
    values = secret_values()
    assert set(NEVER) <= set(values)
    assert "/work/somewhere" not in values
    assert secret_values({"HOME": "/root", "DSN": "abc", "URL": "https://example.org/x"}) == ()
    text = "connect redis://:broker-pw-90d1@cache.internal:6379/0 then broker-pw-90d1 again"
    assert redact(text, values) == f"connect {REDACTED} then {REDACTED} again"


def test_names_show_controls_escaped_and_are_capped_with_a_hash() -> None:
    assert escape_controls("a\nb\rc\td\x1b[31m\u202eevil\udce9") == "a\\nb\\rc\\td\\x1b[31m\\u202eevil\\xe9"
    long_a, long_b = "x" * 1000 + "a", "x" * 1000 + "b"
    a, b = untrusted_name(long_a, 100, secrets=()), untrusted_name(long_b, 100, secrets=())
    assert len(a) == len(b) == 100 and a != b and a.startswith("x" * 90 + "…#")
    out = untrusted_text("ok\n\x1b[2Jline\t2\n" + "y" * 10_000, 200, secrets=())
    assert len(out) == 200 and out.startswith("…") and out.endswith("y")
    assert untrusted_text("ok\n\x1b[2Jline\t2", secrets=()) == "ok\n\\x1b[2Jline\t2"


def _xml(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(XML.format(cls="suite", name=name))
    return path


def test_junit_is_never_read_through_a_link_or_from_outside_the_run(tmp_path: Path) -> None:
    host = tmp_path / "host"
    _xml(host / "host.xml", "HOST_ONLY_CASE")
    run = tmp_path / "run"
    good = _xml(run / "build" / "ok.xml", "test_ok")
    os.symlink(host, run / "linked")  # a directory link
    os.symlink(host / "host.xml", run / "build" / "file-link.xml")  # a file link
    os.link(host / "host.xml", run / "build" / "hard.xml")  # a second name for a host file
    os.mkfifo(run / "build" / "fifo.xml")  # would block a plain open()
    candidates = [
        good,
        run / "linked" / "host.xml",
        run / "build" / "file-link.xml",
        run / "build" / "hard.xml",
        run / "build" / "fifo.xml",
        host / "host.xml",
    ]
    for root in (run, None):
        cases, problems = parse_junit(candidates, root)
        assert list(cases) == ["suite::test_ok"], root
        assert len(problems) == 5 and not any("HOST_ONLY_CASE" in p for p in problems)
        joined = "\n".join(problems)
        assert "symbolic link" in joined and "hard link" in joined and "not a regular file" in joined
    assert "outside the run directory" in "\n".join(parse_junit([host / "host.xml"], run)[1])
    with pytest.raises(OSError, match="symbolic link"):
        open_inside(run / "linked" / "host.xml", run)


def test_a_build_link_to_a_host_directory_is_not_read_by_a_real_run(tmp_path: Path) -> None:
    """The probe's attack: `build` in the PR links to a host directory whose XML changes during the run."""
    host = tmp_path / "host"
    host_xml = _xml(host / "host.xml", "HOST_ONLY_CASE")
    cfg = toml("sleep 1") + 'junit = "build/*.xml"\n'
    repo, base, _ = make_repo(tmp_path / "r", {".reviewbot.toml": cfg}, {})
    os.symlink(host, repo.path / "build")
    head = repo.commit({}, "build is a link")
    stop = threading.Event()

    def host_writes() -> None:  # another process on the host keeps rewriting its report
        n = 0
        while not stop.wait(0.05):
            n += 1
            host_xml.write_text(XML.format(cls="suite", name=f"HOST_ONLY_CASE_{n}"))

    writer = threading.Thread(target=host_writes, daemon=True)
    writer.start()
    try:
        ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), FAST)
    finally:
        stop.set()
        writer.join()
    assert ex.head is not None and ex.head.cases == {}
    assert "HOST_ONLY_CASE" not in json.dumps(ex.to_json())
    assert any("symbolic link 'build'" in n for n in ex.head.notes), ex.head.notes


LEAKY_TESTS = """import os
secrets = {secrets!r}
names = ["test_" + s for s in secrets] + [
    "test_two\\nlines", "test_red\\u202eevil\\u2028sep", "test_" + "p" * 5000 + "1", "test_" + "p" * 5000 + "2"
]
os.makedirs("build", exist_ok=True)
from xml.sax.saxutils import quoteattr
with open("build/junit.xml", "w", encoding="utf-8") as out:
    out.write('<testsuites><testsuite name="leak">')
    for n in names:
        out.write("<testcase classname=%s name=%s file=%s/>" % (quoteattr("test_leak"), quoteattr(n), quoteattr("test_leak.py")))
    out.write("</testsuite></testsuites>")
print("leaking", *secrets, "\\x1b[2J")
"""


def test_secrets_written_into_test_names_and_output_never_reach_a_finding_or_the_report(
    tmp_path: Path, planted: dict[str, str]
) -> None:
    script = LEAKY_TESTS.format(secrets=NEVER)
    cfg = toml(f"{sys.executable} leak.py") + 'junit = "build/*.xml"\n'
    repo, base, head = make_repo(
        tmp_path / "r",
        {".reviewbot.toml": cfg, "leak.py": script},
        {"test_leak.py": "def test_nothing():\n    pass\n"},
    )
    ex = execute(change_of(repo, base, head), repo.path, flag_derivation(), FAST)
    assert ex.head is not None and ex.head.exit_code == 0
    record = json.dumps(ex.to_json()) + repr(ex.head.cases) + ex.head.output + "\n".join(ex.head.notes)
    assert not [s for s in NEVER if s in record]
    names = [c.name for c in ex.head.cases.values()]
    # Redacted names can coincide (`test_[redacted]`): they are one test case then, never a secret.
    assert f"test_{REDACTED}" in names
    assert "test_two\\nlines" in names and "test_red\\u202eevil\\u2028sep" in names
    long = [n for n in names if n.startswith("test_ppp")]
    assert len(long) == 2 and all(len(n) == MAX_NAME_CHARS for n in long)
    assert "leaking" in ex.head.output and "\x1b" not in ex.head.output

    # The whole round: the new tests pass with the branch reverted, so ineffective-test names them.
    change = change_of(repo, base, head)
    try:
        review = review_change(change, ReviewSettings(execute=executor(repo.path, FAST)))
    finally:
        change.close()
    ineffective = [f for f in review.findings if f.rule == "ineffective-test"]
    assert ineffective and any(REDACTED in f.title for f in ineffective)
    published = render_markdown(review) + json.dumps(render_json(review))
    assert not [s for s in NEVER if s in published]
