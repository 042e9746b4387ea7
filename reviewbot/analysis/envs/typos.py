"""Environment names a change reads or writes that look like a misspelling of another one (pure, apart from
searching the head tree).

A name counts as a likely typo of another when:
- the change reads it (`os.environ.get("X")`, `getenv("X")`, `envs.X`, a project helper) or writes it
  (`os.environ["X"] = ...`, `setenv`) on an added line, and the head tree names it nowhere else;
- another name, one edit away (one letter inserted, dropped or replaced, or two neighbouring letters
  swapped) or differing only in case, is named by the head tree (code, docs, Dockerfiles, shell
  scripts) on a line that treats it as an environment variable (an environment accessor, `export`,
  `ENV`, `$NAME`, a `.env`, shell, Dockerfile, YAML or documentation file);
- or the change introduces both names, found nowhere else, and the word they differ in is the
  repository's in one (`GPTQ`: `gptq` elsewhere) and written nowhere else in the other (`GTPQ`): the
  latter is the misspelling (`envs.word_use`);
- or it is another name of the repository with one inner word more, read into a local of the same name
  as the repository reads the shorter one (`envs.segments`: code copied from a sibling project).

Edits that usually make another name rather than a typo are left out: a changed digit (`V1`/`V2`) and
an edit inside a word of fewer than four characters (`TP_SIZE`/`PP_SIZE`, `KV`/`QKV`), or another letter in a
vowel-less acronym of four (`DLWS_JOB_ID`/`DLTS_JOB_ID`: two cluster systems).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviewbot.analysis.envs.segments import segment_copies
from reviewbot.analysis.envs.word_use import first_use
from reviewbot.analysis.sides import Side
from reviewbot.analysis.text import single_edit
from reviewbot.lang.clauses import ClauseKind
from reviewbot.lang.env import is_env_name
from reviewbot.model.change import RepoTree, read_many

__all__ = ["EnvTypo", "env_typos", "one_edit"]

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_WORD = re.compile(r"[A-Za-z0-9_]+")
_MIN_WORD = 4
_MAX_PLACES = 20
# Lines where an upper-case name is an environment variable.
_ENV_LINE = re.compile(
    r"environ|getenv|setenv|putenv|\benvs?\b|\benv\.|\bENV\b|\bexport\b|\$\{?[A-Z]|\s-e\s|--env\b|env_var|EnvVar|"
    r"Env(?:Bool|Int|Str|Float|Field|Var)\b|env_(?:bool|int|str|flag)"
)
_ENV_FILE = re.compile(
    r"(?i)(?:^|/)(?:Dockerfile[^/]*|[^/]*\.(?:sh|bash|env|ya?ml|md|rst|txt|toml|cfg|ini)|\.env[^/]*)$"
)


@dataclass(frozen=True)
class EnvTypo:
    path: str
    line: int
    name: str  # as the change spells it
    other: str  # the repository's name one edit away
    places: tuple[tuple[str, int, str], ...]  # where the head tree names `other` (path, line, text)
    text: str  # the changed line, stripped
    written: bool  # the change writes the name rather than reads it
    # no other name found, but a lower-case letter inside an upper-case word (`SCHEDUlER_RATIO`)
    mixed_case: bool = False
    # both names are new in the change: (the repository's word, the misspelt word, where the repository
    # uses the former: path, line, text)
    word: tuple[str, str, str, int, str] | None = None
    # one inner word more than `other`, read into the same local: (the extra word, the local)
    segment: tuple[str, str] | None = None


def _edits(name: str) -> Iterable[str]:
    """Every string one edit away from `name` over the letters of environment names."""
    for i in range(len(name) + 1):
        for c in _ALPHABET:
            yield name[:i] + c + name[i:]
        if i < len(name):
            yield name[:i] + name[i + 1 :]
            for c in _ALPHABET:
                if c != name[i]:
                    yield name[:i] + c + name[i + 1 :]
        if i + 1 < len(name) and name[i] != name[i + 1]:
            yield name[:i] + name[i + 1] + name[i] + name[i + 2 :]  # two letters swapped: GTPQ / GPTQ


def _word_at(name: str, i: int) -> str:
    start = name.rfind("_", 0, i) + 1
    end = name.find("_", i)
    return name[start : end if end >= 0 else len(name)]


def one_edit(a: str, b: str) -> bool:
    """True when `b` differs from `a` by case only, or by one edit that reads as a typo (see module doc)."""
    if a == b:
        return False
    if a.upper() == b.upper():
        return True
    edit = single_edit(a, b)
    if edit is None:
        return False
    i, kind = edit
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    if kind == "indel":
        # `KV_CACHE` / `KVCACHE`: a dropped separator is a typo whatever the words' length.
        return longer[i] == "_" or len(_word_at(longer, i)) >= _MIN_WORD
    if kind == "swap" and (longer[i].isdigit() or longer[i + 1].isdigit()):
        return False
    if longer[i].isdigit() and shorter[i].isdigit():
        return False
    words = (_word_at(longer, i), _word_at(shorter, i))
    if kind == "replace" and all(len(w) <= _MIN_WORD and _ACRONYM.fullmatch(w) for w in words):
        return False  # `DLWS` / `DLTS`: another letter in a vowel-less acronym names another system
    return min(map(len, words)) >= _MIN_WORD


# An acronym: capitals without a vowel (`DLWS`, `GPTQ`, `NCCL`); `GTPQ` for `GPTQ` is a swap, still a typo.
_ACRONYM = re.compile(r"[B-DF-HJ-NP-TV-Z]+")


_MIXED = re.compile(r"(?<=[A-Z])[a-z](?=[A-Z])|^[a-z](?=[A-Z]{2})|(?<=[A-Z_]{3})[a-z]$")


def mixed_case(name: str) -> bool:
    """An upper-case name with a stray lower-case letter inside a word: `SCHEDUlER_RATIO`, not `HF_token`."""
    lower = [c for c in name if c.islower()]
    return 0 < len(lower) <= 2 and _MIXED.search(name) is not None and is_env_name(name.upper())


def _changed_names(s: Side) -> dict[str, tuple[int, bool]]:
    """Names read or written on added lines of the head: name -> (first line, written)."""
    out: dict[str, tuple[int, bool]] = {}
    if s.head_facts is not None:
        for e in sorted(s.head_facts.env_reads, key=lambda e: e.line):
            if e.line in s.added:
                out.setdefault(e.name, (e.line, False))
    if s.head is not None:
        for c in s.head.clauses:
            if c.kind is ClauseKind.ENV_WRITE and c.env_name and c.line in s.added:
                out.setdefault(c.env_name, (c.line, True))
    return out


def _grep(tree: RepoTree, words: Iterable[str], substrings: bool = False) -> set[str] | None:
    grep = getattr(tree, "grep", None)
    if not callable(grep):
        return None
    found = grep(sorted(set(words)), substrings=True) if substrings else grep(sorted(set(words)))
    return set(found) if found is not None else None


def anchors(name: str) -> tuple[str, str, str]:
    """Two halves of `name` (upper case), and the name with the letters either side of the middle
    swapped, such that every string one edit away contains one of them.

    An edit at position i leaves `name[:i]` and the text after it intact: at or after the middle the
    first half survives, before it the second half does; only the swap across the middle breaks both,
    and it is the third anchor. One `git grep -F` for the anchors finds every file that can hold a
    variant, where a pattern per variant (some 2,000 for a 25-letter name) made one grep take 20 s on a
    large tree."""
    upper = name.upper()
    mid = len(upper) // 2
    return (
        upper[:mid],
        upper[mid:],
        upper[: mid - 1] + upper[mid : mid + 1] + upper[mid - 1] + upper[mid + 1 :],
    )


def _mentions(texts: dict[str, str | None], words: set[str]) -> dict[str, list[tuple[str, int, str]]]:
    out: dict[str, list[tuple[str, int, str]]] = {}
    for path in sorted(texts):
        body = texts[path]
        if not body:
            continue
        for number, line in enumerate(body.split("\n"), start=1):
            for w in set(_WORD.findall(line)) & words:
                out.setdefault(w, []).append((path, number, line.strip()[:200]))
    return out


def env_typos(
    changed: Iterable[Side], heads: dict[str, str | None], tree: RepoTree | None, excluded: object = None
) -> list[EnvTypo]:
    """Likely misspelled environment names of the change (see the module doc); `heads` maps a head
    path to its text, `excluded` is anything with `is_excluded(path)` (the index: vendored trees)."""
    if tree is None:
        return []
    sides = list(changed)
    wanted = _wanted(sides)
    if not wanted:
        return []
    # The name itself: anywhere but the lines this change added, it is not a typo (or not only here).
    own_paths = _grep(tree, wanted)
    if own_paths is None:
        return []
    own = _mentions(read_many(tree, sorted(own_paths)), set(wanted))
    added = {(s.path, n) for s in sides for n in s.added}
    alone = {n for n in wanted if all((p, ln) in added for p, ln, _ in own.get(n, []))}
    variants = _variants(alone)
    strays = [
        EnvTypo(s.path, line, name, name.upper(), (), _text(heads, s.path, line), written, True)
        for name in sorted(alone)
        if mixed_case(name)
        for s, line, written in wanted[name]
    ]
    is_excluded = getattr(excluded, "is_excluded", None)
    excluding = is_excluded if callable(is_excluded) else None
    paths = _grep(tree, {a for n in alone for a in anchors(n)}, substrings=True) if variants else set()
    out = _pairs(alone, wanted, tree, added, heads, excluding)
    out.extend(_copies(alone, wanted, tree, added, heads, excluding))
    if paths:
        kept = sorted(p for p in paths if not (excluding is not None and excluding(p)))
        found = _mentions(read_many(tree, kept), set(variants))
        out.extend(_typos(found, variants, wanted, added, heads))
    named = {t.name for t in out}
    out.extend(t for t in strays if t.name not in named)
    return sorted(out, key=lambda t: (t.path, t.line, t.name, t.other))


_Wanted = dict[str, list[tuple[Side, int, bool]]]


def _wanted(sides: list[Side]) -> _Wanted:
    """The environment-like names the change adds (six letters or more), with where and whether written."""
    wanted: _Wanted = {}
    for s in sides:
        for name, (line, written) in _changed_names(s).items():
            if len(name) >= 6 and is_env_name(name.upper()):
                wanted.setdefault(name, []).append((s, line, written))
    return wanted


def _variants(alone: set[str]) -> dict[str, set[str]]:
    """{variant: the names it is one edit away from} for the names found nowhere else."""
    variants: dict[str, set[str]] = {}
    for name in sorted(alone):
        for v in {*_edits(name.upper()), name.upper()}:
            if v != name and is_env_name(v) and one_edit(name, v):
                variants.setdefault(v, set()).add(name)
    return variants


def _typos(
    found: dict[str, list[tuple[str, int, str]]],
    variants: dict[str, set[str]],
    wanted: _Wanted,
    added: set[tuple[str, int]],
    heads: dict[str, str | None],
) -> list[EnvTypo]:
    """A typo per added name whose variant the tree uses as an environment name (outside the change)."""
    out: list[EnvTypo] = []
    for other in sorted(found):
        places = [
            (p, ln, t)
            for p, ln, t in found[other]
            if (p, ln) not in added and (_ENV_LINE.search(t) or _ENV_FILE.search(p))
        ]
        if not places:
            continue
        for name in sorted(variants[other]):
            for s, line, written in wanted[name]:
                text = _text(heads, s.path, line)
                out.append(EnvTypo(s.path, line, name, other, tuple(places[:_MAX_PLACES]), text, written))
    return out


def _pairs(
    alone: set[str],
    wanted: _Wanted,
    tree: RepoTree,
    added: set[tuple[str, int]],
    heads: dict[str, str | None],
    excluded: Callable[[str], bool] | None,
) -> list[EnvTypo]:
    """Two names the change introduces, one edit apart and found nowhere else: the one whose differing
    word the repository never writes is the misspelling of the other (`GTPQ_BITS` of `GPTQ_BITS`)."""
    out: list[EnvTypo] = []
    for a, b in itertools.permutations(sorted(alone), 2):
        if a.upper() == b.upper() or not one_edit(a, b):
            continue
        i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        right, wrong = _word_at(a, i), _word_at(b, i)
        if right.upper() == wrong.upper():
            continue
        use = first_use(tree, right, added, excluded)
        if use is None or first_use(tree, wrong, added, excluded) is not None:
            continue
        places = tuple((s.path, line, _text(heads, s.path, line)) for s, line, _ in wanted[a])
        for s, line, written in wanted[b]:
            text = _text(heads, s.path, line)
            out.append(EnvTypo(s.path, line, b, a, places, text, written, word=(right, wrong, *use)))
    return out


def _copies(
    alone: set[str],
    wanted: _Wanted,
    tree: RepoTree,
    added: set[tuple[str, int]],
    heads: dict[str, str | None],
    excluded: Callable[[str], bool] | None,
) -> list[EnvTypo]:
    """Names one inner word longer than a name the repository reads into the same local (`envs.segments`)."""
    reads = [(n, _text(heads, s.path, line)) for n in sorted(alone) for s, line, _ in wanted[n]]
    out: list[EnvTypo] = []
    for c in segment_copies(reads, tree, added, lambda t: bool(_ENV_LINE.search(t)), excluded):
        for s, line, written in wanted[c.name]:
            text = _text(heads, s.path, line)
            out.append(
                EnvTypo(s.path, line, c.name, c.other, c.places, text, written, segment=(c.word, c.target))
            )
    return out


def _text(heads: dict[str, str | None], path: str, line: int) -> str:
    lines = (heads.get(path) or "").split("\n")
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""
