"""Which changed files a round keeps when a limit must leave some out: the files that can hold a
derivation first, so a limit never hides the change that matters.

Cutting by path order let a pull request hide its real change behind padding: 3,000 generated files
under `gen/` sort before `rtp_llm/...`, so the 3,000-file limit kept the padding and left the change
out. Files are now ranked by what the analysis would read, best first:

0. source files (Python, C++) that are not tests and not generated or vendored;
1. tests;
2. generated or vendored source files (by their path: `gen/`, `generated/`, `third_party/`, `_pb2.py`,
   `.pb.cc`, ...);
3. other text (build files, scripts, YAML/TOML);
4. data and documents (JSON, CSV, Markdown, images, models, lock files).

Within a rank, a file that looks like a config or derivation candidate comes first: a config-like
name (`config`, `flags`, `options`, `settings`, `params`, `args`, `env`) or, once its hunks are known
(the round budget), a changed line that writes a member or a guard (`x.y = ...`, `self.y = ...`,
`if (...)`). Then the original (path) order. A name is only a hint: a round that still left out a
file which `could_hold_derivation` is failed by the App (reviewbot.github.plan), so padding that
looks like source does not turn a failing check into a neutral one either.

Kept in step with `reviewbot.lang.facts.lang_for_path` and `reviewbot.lang.index.is_test_path`
(tests/github/test_padded_prs.py compares them): this layer sits below `lang` and cannot import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = [
    "SOURCE_SUFFIXES",
    "could_hold_derivation",
    "is_generated",
    "is_source",
    "is_test",
    "rank",
]

SOURCE_SUFFIXES = (
    ".py",
    ".pyi",
    ".cc",
    ".cpp",
    ".cxx",
    ".c++",
    ".h",
    ".hh",
    ".hpp",
    ".hxx",
    ".cu",
    ".cuh",
    ".inl",
)
_DATA_SUFFIXES = (
    ".json",
    ".jsonl",
    ".csv",
    ".tsv",
    ".txt",
    ".md",
    ".rst",
    ".lock",
    ".svg",
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".ico",
    ".pdf",
    ".bin",
    ".pb",
    ".pt",
    ".onnx",
    ".npy",
    ".npz",
    ".safetensors",
    ".dat",
    ".log",
    ".html",
    ".xml",
    ".ipynb",
    ".zip",
    ".gz",
    ".tar",
)
_GENERATED_DIRS = frozenset(
    {
        "gen",
        "generated",
        "autogen",
        "auto_generated",
        "_generated",
        "__generated__",
        "codegen",
        "build",
        "dist",
    }
)
_VENDORED_DIRS = frozenset(
    {"3rdparty", "3rd_party", "third_party", "thirdparty", "third-party", "vendor", "vendored", "external"}
)
_GENERATED_NAME = re.compile(
    r"(_pb2(_grpc)?\.pyi?|\.pb\.(h|cc)|\.grpc\.pb\.(h|cc)|_generated\.[a-z+]+|\.gen\.[a-z+]+|\.g\.[a-z+]+)$"
)
_TEST_DIRS = frozenset({"test", "tests", "testing", "unittest", "unittests"})
_TEST_ENDINGS = (
    "_test.py",
    "_test.cc",
    "_test.cpp",
    "_tests.cc",
    "_unittest.cc",
    "test.cc",
    "_test.cu",
    "_spec.py",
)
_CONFIG_NAME = re.compile(r"config|cfg|conf|flag|option|setting|param|args|env", re.IGNORECASE)
# A changed line that writes a member (`x.y = `, `x->y = `, `self.y = `) or is a guard.
_DERIVATION_LINE = re.compile(r"(\.|->)\s*\w+\s*(=(?!=)|[-+*/|&]=)|^\s*(if|elif|else\s+if)\b|\?.*:")


def is_source(path: str) -> bool:
    """Python or C++ by its suffix (what `lang_for_path` parses)."""
    return path.lower().endswith(SOURCE_SUFFIXES)


@lru_cache(maxsize=1 << 14)
def is_test(path: str) -> bool:
    """Test files by the conventions `reviewbot.lang.index.is_test_path` uses."""
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(p in _TEST_DIRS for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith(_TEST_ENDINGS)
        or name == "conftest.py"
    )


def is_generated(path: str) -> bool:
    """Generated or vendored by its path (a directory such as `gen/` or `third_party/`, a protoc name)."""
    parts = path.lower().split("/")
    dirs = set(parts[:-1])
    return bool(dirs & _GENERATED_DIRS or dirs & _VENDORED_DIRS or _GENERATED_NAME.search(parts[-1]))


def could_hold_derivation(path: str) -> bool:
    """A source file that is not a test: it may derive a runtime flag, whatever its directory says
    (a generated-looking path is no proof: the path is the pull request's to choose)."""
    return is_source(path) and not is_test(path)


def _tier(path: str) -> int:
    if is_source(path):
        if is_test(path):
            return 1
        return 2 if is_generated(path) else 0
    if path.lower().endswith(_DATA_SUFFIXES) or is_generated(path):
        return 4
    return 3


def rank(path: str, changed: Iterable[str] = ()) -> tuple[int, int]:
    """The sort key of a changed file when a limit leaves files out (lower is kept first): its tier
    (see the module doc), then 0 for a config or derivation candidate (by name, or by a changed
    line in `changed`), else 1."""
    name = path.rsplit("/", 1)[-1]
    candidate = bool(_CONFIG_NAME.search(name)) or any(_DERIVATION_LINE.search(line) for line in changed)
    return _tier(path), 0 if candidate else 1
