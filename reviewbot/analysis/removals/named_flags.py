"""Command-line flags a change removes while the repository still names them (pure, apart from searching
the head tree).

A flag is *defined* where a parser registers it: a string literal of an `add_argument(...)` /
`add_option(...)` / `option(...)` call's leading names in Python; in C++ a literal compared with the
argument (`arg == "--flash-attn"`, `strcmp(argv[i], "--x")`) or one of the names of an argument table
entry (`{"-fa", "--flash-attn"}`); a definition in a line comment (commented-out code) registers
nothing. A flag is *removed* when a line the diff removed defined it in a changed file and no file of the
head tree defines it (or keeps it as a quoted alias, `"--old"`: that search reads comments too, so a
registration the change only comments out still counts as kept) any more. A file the change deletes
removes nothing: its options went away with the program.
Its *references* are the head tree's other lines that still name it (`--old` as a whole word, not as
the prefix of a longer flag): help texts, log messages, docs, example scripts and configs, tests;
not a mention inside a comment of a script, config or source file.
For a Python option, a YAML / JSON / TOML config that sets its destination as a key
(`standalone_embedding_stage: false`) references it too. Change logs and release notes are history,
not references.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.sides import Side
from reviewbot.analysis.writes.scopes import call_text
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree, read_many

__all__ = [
    "CONFIG_FILE",
    "declared_fields",
    "RemovedFlag",
    "removed_flags",
    "defined_flags",
    "is_doc_reference",
    "is_history",
    "head_anchor",
    "whole_name",
]

# A long option; dotted sections too (`--training.data_parallel_degree`, torchtitan's TOML-mirroring flags).
_FLAG = r"--[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*"
_PY_CALL = re.compile(
    r"\b(?:add_argument|add_option|option|argument)\s*\(\s*((?:[rbuf]?(?:\"[^\"\n]*\"|'[^'\n]*')\s*,\s*)*"
    r"[rbuf]?(?:\"[^\"\n]*\"|'[^'\n]*'))"
)
_LITERAL = re.compile(r"[\"'](" + _FLAG + r")[\"']")
_CPP_DEF = re.compile(
    r"(?:==\s*|strcmp\s*\([^,()]+,\s*|\{\s*(?:\"[^\"\n]*\"\s*,\s*)*)\"(" + _FLAG + r")\"|"
    r"\"(" + _FLAG + r")\"\s*(?:==|\})"
)
_HISTORY = re.compile(
    r"(?i)(?:^|/)(?:change_?log|changes|history|news|release[-_ ]?notes?)[^/]*$|(?:^|/)releases?/"
)
_DOC = re.compile(r"(?i)\.(?:md|rst|txt|adoc|markdown|html?)$|(?:^|/)docs?/")
_MAX_REFS = 50


@dataclass(frozen=True)
class RemovedFlag:
    flag: str
    path: str  # the changed file
    base_line: int  # where the base defined it
    line: int  # where that line is (or was) in the head
    text: str  # the base definition, as written (stripped)
    refs: tuple[tuple[str, int, str], ...]  # head lines still naming it (path, line, text)
    hidden: bool = False  # the base hid it from `--help` (`help=argparse.SUPPRESS`): not a documented option


def _anchor(s: Side, base_line: int, head_lines: list[str]) -> int:
    """Where a removed definition sits in the head: the code line in the same position of the block
    that replaced it (the k-th removed line -> the k-th added code line), or the line that now follows
    the removal."""
    start = base_line
    while start - 1 in s.removed:
        start -= 1
    line = (s.head_line(start - 1) if start > 1 else 0) + 1
    block: list[int] = []
    while line in s.added:
        if line > len(head_lines) or not _NOT_CODE.match(head_lines[line - 1]):
            block.append(line)
        line += 1
    removed_code = [n for n in range(start, base_line + 1) if n in s.removed]
    return block[min(len(removed_code), len(block)) - 1] if block else s.head_line(base_line)


_NOT_CODE = re.compile(r"^\s*(?:$|#|//)")
head_anchor = _anchor  # for other removals (config keys) placed the same way


def _lines_of(text: str, start: int) -> int:
    return text.count("\n", 0, start) + 1


def _commented(text: str, pos: int, lang: str) -> bool:
    """`pos` sits in a line comment: commented-out code (`# parser.add_argument("--x")`) registers nothing."""
    prefix = text[text.rfind("\n", 0, pos) + 1 : pos]
    return "#" in prefix if lang == "python" else "//" in prefix or prefix.lstrip().startswith("*")


def defined_flags(text: str, lang: str) -> dict[str, list[int]]:
    """Flags a parser in `text` registers, with the lines of their definitions."""
    out: dict[str, list[int]] = {}
    if lang == "python":
        for m in _PY_CALL.finditer(text):
            if _commented(text, m.start(), lang):
                continue
            for lit in _LITERAL.finditer(m.group(1)):
                out.setdefault(lit.group(1), []).append(_lines_of(text, m.start(1) + lit.start()))
    else:
        for m in _CPP_DEF.finditer(text):
            flag = m.group(1) or m.group(2)
            start = m.start(1) if m.group(1) else m.start(2)
            if not _commented(text, start, lang):
                out.setdefault(flag, []).append(_lines_of(text, start))
    return out


CONFIG_FILE = re.compile(r"(?i)\.(?:ya?ml|json|toml)$")  # a YAML, JSON or TOML config file


def dest(flag: str) -> str:
    """argparse's destination of a long flag: `--max-len` -> `max_len`."""
    return flag.lstrip("-").replace("-", "_")


def _key(name: str) -> re.Pattern[str]:
    """`name:` / `"name":` / `name =` as a key of a YAML, JSON or TOML config."""
    return re.compile(r"^\s*(?:-\s*)?[\"']?" + re.escape(name) + r"[\"']?\s*[:=]")


def _quoted(flag: str) -> re.Pattern[str]:
    return re.compile(r"[\"']" + re.escape(flag) + r"[\"']")


def whole_name(flag: str) -> re.Pattern[str]:
    """`flag` as a whole name: `--old` but not `--old-style`, `max_len` but not `max_len_2`."""
    return re.compile(r"(?<![\w.-])" + re.escape(flag) + r"(?![\w-]|\.\w)")


def is_history(path: str) -> bool:
    """A change log or release notes: what the project was, not what it says now."""
    return _HISTORY.search(path) is not None


def is_doc_reference(path: str) -> bool:
    return _DOC.search(path) is not None


# Command lines generated from dataclasses: a library that does it, or flags built from field names.
_GENERATOR = re.compile(
    r"^\s*(?:import|from)\s+(?:tyro|simple_parsing|jsonargparse|draccus)\b|HfArgumentParser|ArgumentGroupFactory"
    r"|[\"']--[\"']\s*\+|add_argument\(\s*f[\"']--\{",
    re.M,
)
# An annotated class attribute (`steps: int = 10`, `buffer_size: int = Field(...)`, `max_in_cpu: int`): a field
# of a dataclass or pydantic model, which a generator turns into `--steps` and a model reads as the key.
_FIELD = re.compile(r"^[ \t]+([A-Za-z_]\w*)[ \t]*:[ \t]*[A-Za-z_\"'][^=\n]*(?:=|$)", re.M)


def declared_fields(text: str) -> list[str]:
    """The names of the annotated class attributes (dataclass / pydantic fields) `text` declares."""
    return _FIELD.findall(text)


def _generated_fields(
    head: str, generators: frozenset[str] = frozenset(), changed: frozenset[str] = frozenset()
) -> set[str]:
    """The dataclass-style fields a file's command line is now generated from: when the file generates
    it, its own fields and those of every changed Python file (`changed`: the dataclasses a generator
    reads may live next door, Megatron's `ArgumentGroupFactory(ProfilingConfig)`); when it imports a
    changed module that generates it (`generators`, dotted: a script handing its dataclass to
    `torchtitan.config_manager`'s tyro parser), its own fields; else nothing. A flag removed from its
    `add_argument` calls may now come from a field of that name."""
    if _GENERATOR.search(head):
        return set(_FIELD.findall(head)) | changed
    uses = any(
        re.search(rf"^\s*(?:from\s+{re.escape(g)}\s+import|import\s+{re.escape(g)}\b)", head, re.M)
        for g in generators
    )
    return set(_FIELD.findall(head)) if uses else set()


def _generator_modules(
    changed: list[Side], texts: dict[str, tuple[str | None, str | None]]
) -> frozenset[str]:
    """Dotted names of the changed Python modules whose head generates a command line from dataclasses."""
    return frozenset(
        s.path[: -len(".py")].replace("/", ".")
        for s in changed
        if s.path.endswith(".py") and _GENERATOR.search(texts.get(s.path, (None, None))[1] or "")
    )


def _last_field(flag: str) -> str:
    """`--training.seq_len` -> `seq_len`, `--padded-vocab-size` -> `padded_vocab_size`."""
    return flag.lstrip("-").rsplit(".", 1)[-1].replace("-", "_")


def _candidates(
    changed: Iterable[Side], texts: dict[str, tuple[str | None, str | None]]
) -> tuple[list[tuple[Side, str, int, str]], dict[str, list[str]]]:
    """(side, flag, base line, base text) of each flag a changed file stops registering (not kept as an
    alias in the same file), and each changed file's head lines."""
    candidates: list[tuple[Side, str, int, str]] = []
    heads: dict[str, list[str]] = {}
    changed = list(changed)
    generators = _generator_modules(changed, texts)
    python_heads = [texts.get(s.path, (None, None))[1] or "" for s in changed if s.path.endswith(".py")]
    fields = frozenset(
        f
        for s in changed
        if s.path.endswith(".py")
        for f in _FIELD.findall(texts.get(s.path, (None, None))[1] or "")
    )
    for s in changed:
        base_text, head_text = texts.get(s.path, (None, None))
        if not base_text or not s.removed:
            continue
        if head_text is None:
            # A deleted file is a program that went away with all its options (a work-in-progress example
            # with its own parser): what still names them passes them to another program, which may
            # accept them (llama.cpp's `main` reads `--batch_size` as `--batch-size`).
            continue
        lang = "python" if s.path.endswith(".py") else "cpp"
        before = defined_flags(base_text, lang)
        head = head_text or ""
        heads[s.path] = head.split("\n")
        base_lines = base_text.split("\n")
        generated = _generated_fields(head, generators, fields) if lang == "python" else set()
        for flag, lines in sorted(before.items()):
            removed_at = [n for n in lines if n in s.removed]
            if not removed_at or _quoted(flag).search(head):
                continue  # still registered, or kept as an alias, in the same file
            if _last_field(flag) in generated:
                continue  # now generated from a dataclass field of the same name (tyro, `"--" + name`)
            if _GENERATOR.search(head) and any(_quoted(flag).search(t) for t in python_heads):
                continue  # spelled in a changed dataclass's field metadata (`"arg_names": ["--profile"]`)
            candidates.append((s, flag, removed_at[0], base_lines[removed_at[0] - 1].strip()))
    return candidates, heads


_SUPPRESSED = re.compile(r"help\s*=\s*(?:argparse\.)?SUPPRESS\b")


def hidden(base_text: str, line: int) -> bool:
    """The definition at `line` hides its option from `--help` (`help=argparse.SUPPRESS`), read over the
    whole `add_argument(...)` call that holds the line."""
    return _SUPPRESSED.search(call_text(base_text.split("\n"), line)) is not None


# llama.cpp's parsers: `std::replace(arg.begin(), arg.end(), '_', '-');` before matching the options.
_UNDERSCORE_AS_DASH = re.compile(r"replace\s*\([^;]*'_'\s*,\s*'-'\s*\)")


def _dashed(flag: str) -> str:
    return flag[:2] + flag[2:].replace("_", "-") if flag.startswith("--") else flag


def _normalised(s: Side, dashed: str, heads: dict[str, list[str]], bodies: dict[str, str | None]) -> bool:
    """The parser that now takes the option reads `_` in arguments as `-` and registers `dashed`: the
    changed file itself, or, when it no longer registers `dashed` (its tool now parses with the common
    parser, as llama.cpp's server with `gpt_params_parse`), another C++ source of the head tree."""

    def parses(body: str | None) -> bool:
        return (
            bool(body)
            and _UNDERSCORE_AS_DASH.search(body or "") is not None
            and dashed in defined_flags(body or "", "cpp")
        )

    own = "\n".join(heads.get(s.path, []))
    if dashed in defined_flags(own, "cpp"):
        return parses(own)
    return any(parses(body) for path, body in bodies.items() if not path.endswith(".py"))


_HASH_COMMENTED = re.compile(
    r"(?i)\.(?:py|sh|bash|ya?ml|toml|cfg|ini|cmake|mk)$|(?:^|/)(?:Dockerfile|Makefile|CMakeLists\.txt)[^/]*$"
)
_SLASH_COMMENTED = re.compile(r"(?i)\.(?:c|cc|cpp|cxx|h|hh|hpp|cu|cuh|js|ts|rs|go|java)$")


def _comment_start(line: str, marker: str) -> int | None:
    """Where a line comment starts: the first `marker` outside a string literal (quotes before it
    balanced), at the start of the line or after a blank for `#` (`$#`, `a#b` are not comments)."""
    at = line.find(marker)
    while at >= 0:
        before = line[:at]
        quoted = before.count('"') % 2 == 1 or before.count("'") % 2 == 1
        blank = marker != "#" or at == 0 or before[-1].isspace()
        if not quoted and blank:
            return at
        at = line.find(marker, at + 1)
    return None


def in_comment(path: str, line: str, pos: int) -> bool:
    """`pos` of a line of `path` lies in a comment of the file's language (docs have none: a Markdown
    `#` is a heading). A flag named only in a comment of a script or source is a stale comment at
    most: nothing a user runs passes it (dev-scan sample 12: `# Check if --estimate.memory=True ...`)."""
    if _SLASH_COMMENTED.search(path):
        stripped = line.lstrip()
        if stripped.startswith(("/*", "* ", "*/")) or stripped == "*":
            return True  # a block comment's line (`*out = ...` is code)
        start = _comment_start(line, "//")
    elif _HASH_COMMENTED.search(path):
        start = _comment_start(line, "#")
    else:
        return False
    return start is not None and start < pos


def _references(
    s: Side, flag: str, paths: list[str], bodies: dict[str, str | None]
) -> list[tuple[str, int, str]] | None:
    """Where the head tree names `flag` (or, for a Python option, its destination as a config key);
    None when it is still registered somewhere (a move, or another tool's flag of that name)."""
    named, quoted = whole_name(flag), _quoted(flag)
    key = _key(dest(flag)) if s.path.endswith(".py") else None
    if key is not None and any(
        dest(flag) in declared_fields(body or "")
        for path, body in bodies.items()
        if path.endswith(".py") and not is_test_path(path)
    ):
        # A config key spelled as the destination still maps to a declared field of that name
        # (`moe_token_dropping: False` in a YAML config loaded into `TransformerConfig`): not the flag.
        key = None
    refs: list[tuple[str, int, str]] = []
    for path in paths:
        body = bodies.get(path)
        if not body or (flag not in body and dest(flag) not in body):
            continue
        if not is_doc_reference(path) and path.endswith((".py", ".cc", ".cpp", ".h", ".hpp", ".cu")):
            lang = "python" if path.endswith(".py") else "cpp"
            if flag in defined_flags(body, lang) or (path == s.path and quoted.search(body)):
                return None
        keyed = key is not None and CONFIG_FILE.search(path) is not None
        for number, line in enumerate(body.split("\n"), start=1):
            as_key = keyed and key is not None and key.search(line) is not None
            if as_key or any(not in_comment(path, line, m.start()) for m in named.finditer(line)):
                refs.append((path, number, line.strip()[:200]))
    return refs


def removed_flags(
    changed: Iterable[Side],
    texts: dict[str, tuple[str | None, str | None]],
    tree: RepoTree | None,
    excluded: object = None,
    keep_unreferenced: bool = False,
) -> list[RemovedFlag]:
    """Flags the change stops defining that the head tree still names (see the module doc); with
    `keep_unreferenced`, also those nothing names any more (their `refs` are empty)."""
    grep = getattr(tree, "grep", None)
    if tree is None or not callable(grep):
        return []
    candidates, heads = _candidates(changed, texts)
    if not candidates:
        return []
    # Flags are searched without their dashes (`git grep -w` needs a word at each end), a Python
    # option's destination too: YAML / JSON configs that feed the parser name it as a key.
    words = {flag.lstrip("-") for _, flag, _, _ in candidates}
    words |= {dest(flag) for s, flag, _, _ in candidates if s.path.endswith(".py")}
    words |= {
        _dashed(flag).lstrip("-")
        for s, flag, _, _ in candidates
        if "_" in flag and not s.path.endswith(".py")
    }
    found = grep(sorted(words))
    if found is None:
        return []
    is_excluded = getattr(excluded, "is_excluded", None)
    paths = sorted(p for p in found if not is_history(p) and not (callable(is_excluded) and is_excluded(p)))
    bodies = read_many(tree, paths)
    out: list[RemovedFlag] = []
    for s, flag, base_line, text in candidates:
        if "_" in flag and not s.path.endswith(".py") and _normalised(s, _dashed(flag), heads, bodies):
            continue  # `--ctx_size` still reaches `--ctx-size` through a parser that reads `_` as `-`
        refs = _references(s, flag, paths, bodies)
        if refs is None or not (refs or keep_unreferenced):
            continue
        refs.sort(key=lambda r: (is_doc_reference(r[0]), r[0] != s.path, r[0], r[1]))
        out.append(
            RemovedFlag(
                flag,
                s.path,
                base_line,
                _anchor(s, base_line, heads.get(s.path, [])),
                text,
                tuple(refs[:_MAX_REFS]),
                hidden=s.path.endswith(".py") and hidden(texts.get(s.path, ("", None))[0] or "", base_line),
            )
        )
    return out
