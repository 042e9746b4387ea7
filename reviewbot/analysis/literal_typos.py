"""String literals a change compares against that look like a misspelling of the project's own spelling
(pure, apart from searching the head tree).

A literal compared on an added line (`tmpl == "chaglm4"`, `t.first == "<|im_emd|>"`, `val == "bfp16"`,
`strcmp(s, "...")`, `x in ("a", "b")`, `.startswith("...")`) is reported when:
- the head tree names it nowhere but the change's own added lines, and there only inside comparisons,
  comments or other strings (an error message listing it): nothing defines it as a value (a `choices=`
  entry, a dict key, an assignment), so nothing can produce it;
- the head tree writes, on another line, a value one edit away (a letter replaced, inserted or dropped,
  or two neighbouring letters swapped): a quoted string (`"<|im_end|>"`, `"fp16"`) or a word of an
  upper-case constant (`chatglm4` of `LLAMA_VOCAB_PRE_TYPE_CHATGLM4`), case aside;
- and neither within ten lines of the literal in its file nor compared elsewhere in that file: values
  compared side by side (`t.first == "<|eot_id|>" || t.first == "<|eom_id|>"`) are alternatives, not a
  misspelling;
- for a pattern looked for inside a value (`"merger" in name`, `.startswith(...)`), only as a quoted
  string: a fragment may be written only inside longer names.

The comparison is then always false for what users and models actually write: the branch it guards
never runs (a template never selected, an end-of-turn token never found, a documented value rejected).

Not judged: a command-line flag compared beside another flag (`arg == "--gpu-layers-draft" || arg ==
"-ngld"`: the spellings of one option, a new short one included); literals under five characters or with fewer than three letters, edits of anything but a letter
(`qwen2`/`qwen3`, `phi`/`phi3`, `flash-attn`/`flash_attn`, `glm-4.6*`), case-only differences, literals with spaces
(messages, not values), and lines in tests.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.text import single_edit
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree, read_many

__all__ = ["LiteralTypo", "compared_literals", "literal_typos", "typo_of", "top_level_strings"]

_MIN_LEN = 5
_MIN_LETTERS = 3
_MAX_PLACES = 3
_MAX_SPELLINGS = 2
_SIBLINGS = 10  # lines either side where the other spelling is a sibling alternative, not the intended one
_MAX_FILES = 80  # files read to find the project's spelling
_VALUE = re.compile(r"[A-Za-z0-9_<>|.:/+\-]+")
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*)")
# Where a literal right after (or before) it is compared, not stored.
_BEFORE = re.compile(r"(?:==|!=|\bstrn?cmp\s*\([^,()]*,|\bcompare\s*\(|\bcase)\s*$")
_AFTER = re.compile(r"^\s*(?:==|!=)")
# A pattern looked for inside a value (`"merger" in name`, `.startswith("...")`): a fragment, which the
# project may well write only inside longer names.
_PATTERN_BEFORE = re.compile(r"\b(?:startswith|endswith|find|rfind|count|strstr\s*\([^,()]*,)\s*\(?\s*$")
_PATTERN_AFTER = re.compile(r"^\s*(?:not\s+)?in\b(?!\s*[(\[{])")
_IN = re.compile(r"\b(?:not\s+)?in\s*[(\[{]\s*$")
_STRCMP_FIRST = re.compile(r"\bstrn?cmp\s*\(\s*$")
_ITEMS = re.compile(r"""(?:["'][^"']*["']\s*,\s*)+$""")  # the items before this one in `in ("a", "b", ...)`
_MAX_LINE = 400  # longer lines are data (a one-line list or JSON), not a condition
_SOURCE = re.compile(r"\.(?:py|c|cc|cpp|cxx|h|hh|hpp|cu|cuh)$")


@dataclass(frozen=True)
class LiteralTypo:
    path: str
    line: int
    literal: str  # as the change writes it
    others: tuple[str, ...]  # the project's spellings one edit away, the likeliest first
    places: tuple[tuple[str, int, str], ...]  # where the head tree writes the first (path, line, text)
    text: str  # the changed line, stripped


def top_level_strings(line: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each string literal of one line that is not inside another one: the
    `'bfp16'` inside `f"... ['fp16', 'bfp16'] ..."` is part of a message, not a value."""
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(line):
        c = line[i]
        if c == "#" or line.startswith("//", i):
            break  # a comment: what follows is prose
        if c not in "\"'":
            i += 1
            continue
        j = i + 1
        while j < len(line) and line[j] != c:
            j += 2 if line[j] == "\\" else 1
        if j >= len(line):
            break  # unterminated on this line (a multi-line string): leave the rest alone
        out.append((i, j + 1, line[i + 1 : j]))
        i = j + 1
    return out


def _pattern(line: str, start: int, end: int) -> bool:
    return bool(_PATTERN_BEFORE.search(line[:start]) or _PATTERN_AFTER.match(line[end:]))


def _compared(line: str, start: int, end: int) -> bool:
    before, after = line[:start], line[end:]
    if _BEFORE.search(before) or _AFTER.match(after) or _STRCMP_FIRST.search(before):
        return True
    if _pattern(line, start, end):
        return True
    # an element of the tuple, list or set after `in`: `x in ("a", "b")`
    if re.search(r"\bin\s*[(\[{]", before) is None:
        return False
    head = _ITEMS.sub("", before)
    found = _IN.search(head)
    # `for name in ("enorm", "hnorm")` walks the values; it compares nothing
    return found is not None and re.search(r"\bfor\b", head[: found.start()]) is None


def _value_like(text: str) -> bool:
    return (
        len(text) >= _MIN_LEN
        and sum(ch.isalpha() for ch in text) >= _MIN_LETTERS
        and _VALUE.fullmatch(text) is not None
    )


def compared_literals(line: str) -> list[tuple[str, bool]]:
    """The literals one source line compares something with (see the module doc), each with whether it
    is a pattern looked for inside a value rather than a whole value."""
    if _COMMENT.match(line) or len(line) > _MAX_LINE:
        return []
    return [
        (t, _pattern(line, s, e))
        for s, e, t in top_level_strings(line)
        if _value_like(t) and _compared(line, s, e)
    ]


def typo_of(wrong: str, right: str) -> bool:
    """`wrong` is one edit from `right` (a letter replaced, inserted, dropped, or two neighbours
    swapped), the edit only of letters (not a digit, a separator or a `*`) and not of case alone."""
    a, b = wrong.lower(), right.lower()
    edit = single_edit(a, b)
    if edit is None:
        return False  # equal (case aside) or further apart
    i, kind = edit
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    edited = (
        {longer[i], shorter[i]}
        if kind == "replace"
        else {longer[i], longer[i + 1]}
        if kind == "swap"
        else {longer[i]}
    )
    return all(ch.isalpha() for ch in edited)  # a digit, separator or glob edit makes another name


def docstring_lines(text: str | None) -> frozenset[int]:
    """Lines inside a string that spans lines (a docstring, an example): prose, not code."""
    tree = python_tree(text) if text else None
    if tree is None:
        return frozenset()
    return frozenset(
        n
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.end_lineno
        and node.end_lineno > node.lineno
        for n in range(node.lineno, node.end_lineno + 1)
    )


def _edits(text: str) -> set[str]:
    """Strings that every variant one edit from `text` contains (halves, and the swap across them)."""
    mid = len(text) // 2
    swap = text[: mid - 1] + text[mid] + text[mid - 1] + text[mid + 1 :]
    return {text[:mid], text[mid:], swap}


_CONSTANT = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")


def _tokens(line: str) -> set[str]:
    """The values a line writes: its quoted strings, and the words of its upper-case constants
    (`LLAMA_VOCAB_PRE_TYPE_CHATGLM4` names the value `chatglm4`). Not plain identifiers or prose: a
    variable `merged` says nothing of a value `merger`."""
    if _COMMENT.match(line):
        return set()
    words = {t for _, _, t in top_level_strings(line)}
    for c in _CONSTANT.findall(line):
        words.update(c.split("_"))
    return words


def _defined_here(literal: str, text: str) -> bool:
    """The added line writes `literal` as a value (not compared, not inside a message)."""
    return any(
        t == literal and not _compared(text, s, e) for s, e, t in top_level_strings(text)
    ) and not _COMMENT.match(text)


def literal_typos(
    added: Mapping[str, Mapping[int, str]],
    tree: RepoTree,
    excluded: Callable[[str], bool] | None = None,
    heads: Mapping[str, str | None] | None = None,
) -> list[LiteralTypo]:
    """Likely misspelled compared literals of the change; `added` maps each changed path to its added
    lines (head numbering -> text). See the module doc."""
    wanted = _wanted(added, excluded, heads or {})
    if not wanted:
        return []
    alone = _unwritten(wanted, added, tree)
    if not alone:
        return []
    grep = getattr(tree, "grep", None)
    anchors = {v for lit in alone for a in _edits(lit) for v in (a, a.lower(), a.upper(), a.capitalize())}
    found = grep(sorted(anchors), substrings=True) if callable(grep) else None
    if not found:
        return []
    paths = _nearest(
        [p for p in found if not (excluded is not None and excluded(p)) and not is_test_path(p)], added
    )
    spellings = _spellings(read_many(tree, paths), alone)
    out: list[LiteralTypo] = []
    for lit in sorted(alone):
        for path, n, text, pattern in wanted[lit]:
            if _flag_alias(lit, text):
                continue
            ranked = _ranked(spellings.get(lit, {}), (path, n), lit, pattern)
            if ranked:
                others = tuple(other for other, _ in ranked[:_MAX_SPELLINGS])
                out.append(LiteralTypo(path, n, lit, others, ranked[0][1], text))
    return sorted(out, key=lambda t: (t.path, t.line, t.literal))


def _flag_alias(literal: str, line: str) -> bool:
    """A command-line flag compared beside another flag of another spelling (`arg == "--gpu-layers-draft"
    || arg == "-ngld"`): the line lists the spellings of one option, and a new short one is typed by
    users, not a misspelling of a neighbour (`-ngl`)."""
    if not literal.startswith("-"):
        return False
    return any(
        o != literal and o.startswith("-") and not typo_of(literal, o) for o, _ in compared_literals(line)
    )


def _wanted(
    added: Mapping[str, Mapping[int, str]],
    excluded: Callable[[str], bool] | None,
    heads: Mapping[str, str | None],
) -> dict[str, list[tuple[str, int, str, bool]]]:
    """The literals the change compares in its source files: literal -> (path, line, text, pattern)."""
    wanted: dict[str, list[tuple[str, int, str, bool]]] = {}
    for path, lines in added.items():
        if not _SOURCE.search(path) or is_test_path(path) or (excluded is not None and excluded(path)):
            continue
        prose = docstring_lines(heads.get(path)) if path.endswith(".py") else frozenset()
        for n, text in sorted(lines.items()):
            if n in prose:
                continue  # an example in a docstring compares nothing
            for lit, pattern in compared_literals(text):
                wanted.setdefault(lit, []).append((path, n, text.strip(), pattern))
    return wanted


def _ranked(
    spellings: Mapping[str, list[tuple[str, int, str, bool]]],
    here: tuple[str, int],
    literal: str,
    pattern: bool,
) -> list[tuple[str, tuple[tuple[str, int, str], ...]]]:
    """The spellings written on lines other than `here` (as quoted strings only, for a `pattern`), those
    written most often as a string value first, each with its places, values first."""
    merged: dict[str, list[tuple[str, int, str, bool]]] = {}  # `FP16` and `fp16` are one spelling
    written: dict[str, str] = {}
    for other in sorted(spellings, key=lambda o: (-sum(s[3] for s in spellings[o]), o)):
        # a word of a constant one letter longer or shorter at its end is another form (DECODE, WINDOW)
        spots = [s for s in spellings[other] if s[3] or not (pattern or _at_end(literal, other))]
        if spots:
            written.setdefault(other.lower(), other)
            merged.setdefault(other.lower(), []).extend(spots)
    rows = []
    for key, spots in merged.items():
        if any(_alternative(key, p == here[0], ln - here[1], text) for p, ln, text, _ in spots):
            continue
        kept = sorted({s for s in spots if (s[0], s[1]) != here}, key=lambda s: (not s[3], s[0], s[1]))
        if kept:
            values = sum(s[3] for s in kept)
            places = tuple((p, ln, t) for p, ln, t, _ in kept[:_MAX_PLACES])
            # a spelling seen only in constants reads in the literal's case: `chatglm4`, not `CHATGLM4`
            shown = key if not values and literal.islower() else written[key]
            rows.append((-values, -len(kept), shown, places))
    return [(other, places) for _, _, other, places in sorted(rows)]


def _at_end(literal: str, other: str) -> bool:
    a, b = literal.lower(), other.lower()
    return abs(len(a) - len(b)) == 1 and (a.startswith(b) or b.startswith(a))


def _alternative(spelling: str, same_file: bool, distance: int, text: str) -> bool:
    """The other spelling is another value of the same domain, not the intended one: written right beside
    the literal (`== "<|eot_id|>" || == "<|eom_id|>"`) or compared in its file, or compared for
    equality anywhere (`model_type == "mistral"` beside a new `== "mixtral"`)."""
    compared = [(lit.lower(), pat) for lit, pat in compared_literals(text)]
    if same_file and (abs(distance) <= _SIBLINGS or any(lit == spelling for lit, _ in compared)):
        return True
    return any(lit == spelling and not pat for lit, pat in compared)


def _nearest(paths: list[str], added: Mapping[str, Mapping[int, str]]) -> list[str]:
    """At most _MAX_FILES of `paths`: the changed files first, then those beside them, then the rest
    (short anchors match many files; the project's spelling is most often near the change)."""
    dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in added}

    def rank(p: str) -> tuple[int, str]:
        here = p.rsplit("/", 1)[0] if "/" in p else ""
        return (0 if p in added else 1 if here in dirs else 2, p)

    return sorted(paths, key=rank)[:_MAX_FILES]


def _unwritten(
    wanted: dict[str, list[tuple[str, int, str, bool]]],
    added: Mapping[str, Mapping[int, str]],
    tree: RepoTree,
) -> set[str]:
    """The wanted literals the head tree writes only on the change's added lines, and there never as a value."""
    grep = getattr(tree, "grep", None)
    holders = grep(sorted(wanted), substrings=True) if callable(grep) else None
    if holders is None:
        return set()
    texts = read_many(tree, sorted(holders))
    alone = set(wanted)
    for path, body in texts.items():
        if not body:
            continue
        own = added.get(path, {})
        for n, line in enumerate(body.split("\n"), start=1):
            for lit in [x for x in alone if x in line]:
                if n not in own or _defined_here(lit, line):
                    alone.discard(lit)
    return alone


def _spellings(
    texts: Mapping[str, str | None], alone: Iterable[str]
) -> dict[str, dict[str, list[tuple[str, int, str, bool]]]]:
    """For each literal, the spellings one edit away the texts write, with where (path, line, text, and
    whether the line writes it as a string literal of its own: a value rather than part of a name)."""
    out: dict[str, dict[str, list[tuple[str, int, str, bool]]]] = {}
    wanted = sorted(alone)
    near = re.compile("|".join(re.escape(a) for lit in wanted for a in _edits(lit)), re.IGNORECASE)
    for path in sorted(texts):
        body = texts[path]
        if not body:
            continue
        for n, line in enumerate(body.split("\n"), start=1):
            if near.search(line) is None:
                continue
            strings = {t for _, _, t in top_level_strings(line)}
            for tok in _tokens(line):
                for lit in wanted:
                    if abs(len(tok) - len(lit)) <= 1 and typo_of(lit, tok):
                        spot = (path, n, line.strip()[:200], tok in strings)
                        out.setdefault(lit, {}).setdefault(tok, []).append(spot)
    return out
