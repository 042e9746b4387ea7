"""A few bytes that are not UTF-8 no longer hide a file from review (issue 16, item 6).

One byte of Latin-1 in a C++ comment used to skip the whole file: its P1 vanished and the round was
INCOMPLETE. Now the byte reads as U+FFFD, the file is analysed, and one note names it.
"""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.example import build_example
from reviewbot.model.change import SkipReason
from reviewbot.model.review import Status
from reviewbot.review.pipeline import review_change
from tests.gitrepo import git

PATH = "rtp_llm/cpp/config/ModelConfig.cc"


def _review(repo: Path, base: str, head: str) -> tuple[Status, list[tuple[str, str, str]], list[str]]:
    change = load_change(repo, base, head)
    try:
        review = review_change(change)
    finally:
        change.close()
    findings = [(f.severity.value, f.rule, f.title) for f in review.findings]
    notes = [f"{n.reason.value} {n.path}: {n.message}" for n in review.notes]
    return review.status, findings, notes


def test_one_latin1_byte_in_a_cpp_comment_keeps_the_file_and_its_p1(tmp_path: Path) -> None:
    ex = build_example(tmp_path / "pr1361")
    clean_status, clean_findings, _ = _review(ex.path, ex.base, ex.round1)
    assert clean_status is Status.BLOCKING and any(sev == "P1" for sev, _, _ in clean_findings)

    git(ex.path, "checkout", "-q", "-b", "latin1", ex.round1)
    source = (ex.path / PATH).read_bytes()
    marker = b"// Skip rope+bias+transpose kernel"
    assert source.count(marker) == 1
    (ex.path / PATH).write_bytes(source.replace(marker, b"// Caf\xe9: skip rope+bias+transpose kernel"))
    git(ex.path, "commit", "-q", "-am", "a Latin-1 byte in a comment")
    head = git(ex.path, "rev-parse", "HEAD")

    status, findings, notes = _review(ex.path, ex.base, head)
    assert status is Status.BLOCKING
    # The same P1 as without the byte; only text quoting the comment may differ.
    assert [(s, r) for s, r, _ in findings if s == "P1"] == [
        (s, r) for s, r, _ in clean_findings if s == "P1"
    ]
    assert [(s, r) for s, r, _ in findings] == [(s, r) for s, r, _ in clean_findings]
    assert notes == [
        f"{SkipReason.REPLACED_BYTES.value} {PATH}: "
        f"{PATH}: 1 byte(s) are not UTF-8 and were read as U+FFFD; analysed as decoded"
    ]


def test_a_binary_file_without_nul_bytes_is_still_skipped(tmp_path: Path) -> None:
    ex = build_example(tmp_path / "pr1361")
    git(ex.path, "checkout", "-q", "-b", "blob", ex.round1)
    (ex.path / "rtp_llm/cpp/config/table.cc").write_bytes(bytes(range(0x80, 0x100)) * 64)
    git(ex.path, "add", "-A")
    git(ex.path, "commit", "-q", "-m", "a generated table that is not text")
    head = git(ex.path, "rev-parse", "HEAD")
    status, findings, notes = _review(ex.path, ex.base, head)
    assert any(sev == "P1" for sev, _, _ in findings)  # ModelConfig.cc is still reviewed
    assert notes == [
        "non-utf8 rtp_llm/cpp/config/table.cc: rtp_llm/cpp/config/table.cc: not UTF-8 text; not analysed"
    ]
    assert status is Status.BLOCKING
