"""How the repository compiles its C++ tests, for the generated truth-table test (execution/cpp_harness.py).

The compiler, its flags and the sources it links are those of the first `g++`/`clang++`/`c++` line of
the script the `[tests]` command runs (`sh run_tests.sh`), read at the base: the base chooses what
runs, as for the tests themselves. The derivation's own file is always among the sources. No such
line, no compile: the table gets the reason and no runnable claim.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reviewbot.model.change import ChangeSet


def read_at(repo: Path, sha: str, path: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(repo), "show", f"{sha}:{path}"], capture_output=True, text=True, check=False
    )
    return out.stdout if out.returncode == 0 else None


__all__ = ["Compile", "cpp_compile", "read_at"]

_COMPILERS = ("g++", "clang++", "c++")
_SOURCES = (".cc", ".cpp", ".cxx", ".c")
_PAIRED = (
    "-I",
    "-isystem",
    "-iquote",
    "-D",
    "-U",
    "-include",
    "-L",
    "-l",
    "-x",
)  # flags with a separate value


@dataclass(frozen=True)
class Compile:
    """How the repository compiles a C++ test: compiler, flags, the sources it links, where it says so."""

    compiler: str
    flags: tuple[str, ...]
    sources: tuple[str, ...]
    origin: str  # `run_tests.sh:44`

    def command(self, test: str, binary: str) -> str:
        args = [self.compiler, *self.flags, "-o", binary, test, *self.sources]
        return " ".join(shlex.quote(a) for a in args)


def _script(command: str) -> str | None:
    """The repository script a test command runs (`sh run_tests.sh` -> `run_tests.sh`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 2 and words[0] in ("sh", "bash"):
        return words[1].removeprefix("./")
    if words and words[0].endswith(".sh"):
        return words[0].removeprefix("./")
    return None


def _is_test_source(path: str) -> bool:
    """A test's own source (it has its `main`, as the generated test does): not linked in."""
    name = path.rsplit("/", 1)[-1]
    parts = path.split("/")[:-1]
    return (
        name.rsplit(".", 1)[0].endswith("_test")
        or name.startswith("test_")
        or "test" in parts
        or "tests" in parts
    )


def _compile_line(words: list[str], cc_path: str) -> tuple[list[str], list[str]]:
    """The flags and the literal library sources of one compiler invocation's words (no `-o`, no
    `-c`/`-S`/`-E`: the generated test is linked into a program of its own)."""
    flags: list[str] = []
    sources: list[str] = []
    rest = iter(words)
    for w in rest:
        if w in ("&&", "||", ";", "|", ">", "2>") or w.startswith((">", "2>")):
            break
        if w in ("-o", "-MF", "-MT", "-MQ"):
            next(rest, None)
        elif w in _PAIRED:
            flags += [w, next(rest, "")]
        elif w.startswith("-") and w not in ("-c", "-S", "-E") and not w.startswith("-M"):
            flags.append(w)
        elif w.endswith(_SOURCES) and "$" not in w and "*" not in w and not _is_test_source(w):
            sources.append(w)
    if cc_path not in sources:
        sources.append(cc_path)
    return flags, sources


def cpp_compile(change: ChangeSet, repo: Path, command: str, cc_path: str) -> Compile | str:
    """How the repository compiles its C++ tests: the first compiler line of the script its `[tests]`
    command runs, read at the base (the base chooses what runs); or why none was found."""
    script = _script(command)
    text = read_at(repo, change.base_sha, script) if script else None
    if text is None:
        return (
            f"no C++ compile command: the [tests] command `{command}` runs no script of the repository "
            "with a g++/clang++ line"
        )
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        try:
            words = shlex.split(code)
        except ValueError:
            continue
        at = next((i for i, w in enumerate(words) if w in _COMPILERS), None)
        if at is not None:
            flags, sources = _compile_line(words[at + 1 :], cc_path)
            return Compile(words[at], tuple(flags), tuple(sources), f"{script}:{n}")
    return f"no C++ compile command: `{script}` has no g++/clang++ line"
