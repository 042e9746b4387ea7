"""Comments left behind by a change (pure): an unchanged comment directly above a rewritten statement
that still names what the statement no longer does.

For each run of added lines that replaces removed lines in the same hunk (the same statement
rewritten: the same assignment target, call or keyword before and after), the comment block directly
above it in the head — unchanged by the change — is compared with the code: a word the comment
names that the removed code used and the added code does not (`gcd` above a formula that dropped
`gcd(...)`), or a number the comment states that was the removed code's value and is no longer in the
code (`# default 8` above `reserve = 8` -> `reserve = 16`).

Only words that look like code are considered: a called function, a snake_case or camelCase
identifier, a number other than 0 and 1. The comment must be a full-line comment (`#`, `//`) and may
not mention the new word too (then it describes both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewbot.lang.facts import Lang, lang_for_path
from reviewbot.lang.index import DEFAULT_EXCLUDES, is_excluded, is_test_path
from reviewbot.model.change import ChangedFile, ChangeSet, Hunk

__all__ = ["StaleComment", "stale_comments"]


@dataclass(frozen=True)
class StaleComment:
    path: str
    line: int  # the rewritten statement's first added line
    comment_line: int
    comment: str
    word: str  # what the comment names
    new: str  # NUMBER: what replaced it in the code ("" for a word)
    was: str  # the removed code line that used it
    number: bool


_AFTER = 5  # head lines after a rewritten statement that still count as its code
_IDENT = re.compile(r"[A-Za-z_]\w*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_STRING = re.compile(r"""(['"]).*?\1""")


def _comment(text: str, lang: Lang) -> str | None:
    t = text.strip()
    marker = "#" if lang is Lang.PYTHON else "//"
    if t.startswith(marker):
        return t[len(marker) :].strip()
    return None


def _code(text: str, lang: Lang) -> str:
    """The code of a line without its trailing comment and string contents."""
    marker = "#" if lang is Lang.PYTHON else "//"
    body = _STRING.sub('""', text)
    return body.split(marker, 1)[0]


def _head_of(code: str) -> str:
    """What a statement is about: its assignment target, called function or keyword."""
    t = code.strip()
    m = re.match(r"^([\w.\[\]>-]+)\s*(?::[^=]+)?(?:[-+*/|&]?=)(?!=)", t)
    if m:
        return m.group(1)
    m = re.match(r"^(\w+)", t)
    return m.group(1) if m else ""


def _code_words(code: str) -> set[str]:
    calls = set(re.findall(r"([A-Za-z_]\w*)\s*\(", code))
    return {
        w for w in _IDENT.findall(code) if w in calls or "_" in w.strip("_") or re.search(r"[a-z][A-Z]", w)
    }


def _numbers(code: str) -> set[str]:
    return {n for n in _NUMBER.findall(code) if n not in ("0", "1")}


def _runs(h: Hunk) -> list[list[tuple[int, str]]]:
    runs: list[list[tuple[int, str]]] = []
    for n, t in h.added:
        if runs and runs[-1][-1][0] == n - 1:
            runs[-1].append((n, t))
        else:
            runs.append([(n, t)])
    return runs


def _file(f: ChangedFile) -> list[StaleComment]:
    lang = lang_for_path(f.path)
    if lang is None or f.head_text is None or f.base_text is None:
        return []
    head = f.head_text.split("\n")
    added = f.added_lines
    out: list[StaleComment] = []
    for h in f.hunks:
        if h.whitespace_only:
            continue
        # Every word the hunk's added code uses, case-folded (`split_k_limit` -> `SPLIT_K_LIMIT` is a rename).
        hunk_words = {_bare(w) for _, t in h.added for w in _IDENT.findall(_code(t, lang))}
        removed = [(n, _code(t, lang)) for n, t in h.removed if _comment(t, lang) is None and t.strip()]
        if not removed:
            continue
        for run in _runs(h):
            out.extend(_run(f.path, run, removed, hunk_words, head, added, lang))
    return out


def _run(
    path: str,
    run: list[tuple[int, str]],
    removed: list[tuple[int, str]],
    hunk_words: set[str],
    head: list[str],
    added: dict[int, str],
    lang: Lang,
) -> list[StaleComment]:
    """The stale comments of one run of added lines: a statement rewritten (same head as removed code)
    under an unchanged comment that names a word or a number the rewrite took away."""
    code_added = [_code(t, lang) for _, t in run if _comment(t, lang) is None and t.strip()]
    if not code_added:
        return []
    heads = {_head_of(c) for c in code_added} - {""}
    same = [(n, c) for n, c in removed if _head_of(c) in heads]
    if not same:
        return []  # not the same statement rewritten
    block = _comment_block(head, added, run[0][0] - 1, lang)
    if not block or any(_looks_like_code(b) for _, b in block):
        return []  # no comment, or commented-out code rather than a description
    # The statement's code now, with the lines right after it (a word may have moved there).
    after = head[run[-1][0] : run[-1][0] + _AFTER]
    now = " ".join([*code_added, *(_code(t, lang) for t in after if _comment(t, lang) is None)])
    before = " ".join(c for _, c in same)
    still = {_bare(w) for w in _IDENT.findall(now)} | hunk_words
    gone = {w for w in _code_words(before) if _bare(w) not in still}
    gone_numbers = _numbers(before) - _numbers(now)
    new_numbers = sorted(_numbers(now) - _numbers(before))
    return _stale_lines(path, run[0][0], sorted(block), same, gone, gone_numbers, new_numbers)


def _stale_lines(
    path: str,
    line: int,
    block: list[tuple[int, str]],
    same: list[tuple[int, str]],
    gone: set[str],
    gone_numbers: set[str],
    new_numbers: list[str],
) -> list[StaleComment]:
    """Each comment line that names a word the rewrite dropped, or a number it replaced (when the line
    names none of the new numbers)."""
    out: list[StaleComment] = []
    for cline, body in block:
        words = {w for w in _IDENT.findall(body) if _named_as_code(w, body)}
        for w in sorted(gone & words):
            out.append(StaleComment(path, line, cline, body, w, "", _was(same, w), False))
        numbers = set(_NUMBER.findall(body))
        if new_numbers and not numbers & set(new_numbers):
            for n in sorted(gone_numbers & numbers):
                out.append(StaleComment(path, line, cline, body, n, new_numbers[0], _was(same, n), True))
    return out


def _comment_block(head: list[str], added: dict[int, str], line: int, lang: Lang) -> list[tuple[int, str]]:
    """The unchanged comment lines directly above head line `line + 1`, from the nearest up."""
    block: list[tuple[int, str]] = []
    while line >= 1 and line not in added:
        body = _comment(head[line - 1], lang)
        if body is None:
            break
        block.append((line, body))
        line -= 1
    return block


def _bare(word: str) -> str:
    """A word case-folded without a getter's prefix: `self._get_max_model_len(...)` still reads what
    the comment calls `max_model_len` (a rewrite into a getter keeps the comment true)."""
    return re.sub(r"^_*(?:get_)?", "", word.lower())


def _named_as_code(word: str, comment: str) -> bool:
    """The comment names `word` as code, not as prose: an identifier shape (snake_case, camelCase,
    CamelCase), an abbreviation with no vowel (`gcd`, `lcm`), or a call or quote in the comment
    (`merge()`, `sample`). "Forward and sample the next tokens" names no function, though the old
    code called `batch.sample(...)`."""
    if "_" in word.strip("_") or re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", word):
        return True
    if not re.search(r"[aeiouy]", word, re.IGNORECASE):
        return True
    return re.search(rf"(?:`{re.escape(word)}\b|(?<!\w){re.escape(word)}\s*\()", comment) is not None


def _looks_like_code(comment: str) -> bool:
    t = comment.strip()
    return bool(
        re.match(r"^[\w.\[\]]+\s*[-+*/]?=[^=]", t)
        or t.endswith((";", "{", "}"))
        or re.match(r"^[\w.]+\(.*\)$", t)
    )


def _was(lines: list[tuple[int, str]], word: str) -> str:
    rx = re.compile(rf"(?<![\w.]){re.escape(word)}(?![\w])")
    return next((c.strip() for _, c in lines if rx.search(c)), lines[0][1].strip())


def stale_comments(change: ChangeSet) -> list[StaleComment]:
    """Stale comments of the changed source files, one per statement (the first word found), by path and line."""
    out: dict[tuple[str, int], StaleComment] = {}
    for f in sorted(change.files, key=lambda f: f.path):
        if f.skipped is not None or is_test_path(f.path) or is_excluded(f.path, DEFAULT_EXCLUDES):
            continue
        for s in _file(f):
            out.setdefault((s.path, s.line), s)
    return [out[k] for k in sorted(out)]
