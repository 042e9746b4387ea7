"""Find how to run a C++ truth table: the owner default-constructed, each column set through its member.

A C++ derivation is executed when it runs in a method (`Owner::method`) of a class or struct that
can be default-constructed, and every column of its table is a member path of the owner
(`use_kvcache`, `attn_config.need_rope_kv_cache`) or reaches one through an unconditional copy into
the method's default-constructed local before the guard (`config.rope_config = attn_config.rope_config;`
makes the column `config.rope_config.style` the member `attn_config.rope_config.style`). The target
is read from the local the method returns (`return config;`) or, for a non-const method, from the
owner after the call. The method's other parameters take their declared defaults, else the literal
arguments of a call in the repository, else 1 for an integer (said in the harness: no column reads
it). Anything else gets a reason: no runnable claim is made for it.

How the test is compiled comes from the repository: the first `g++`/`clang++`/`c++` line of the
script the `[tests]` command runs (read at the base), its flags and the sources it names
(`cpp_compile`). The generated file is execution/cpp_harness_code.py's; running it,
execution/cpp_harness_run.py.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from reviewbot.execution.cpp_harness_compile import Compile, read_at
from reviewbot.lang.index import RepoIndex
from reviewbot.model.executed import Harness
from reviewbot.model.truthtable import TruthTable

__all__ = ["CppPlan", "cpp_harness"]

_IDENT = r"[A-Za-z_]\w*"
_PATH = re.compile(rf"^{_IDENT}(?:\.{_IDENT})*$")
# an assignment's target path: `config.rope_config = ...`, `x.f |= ...` (not `==`, `<=`, `!=`)
_WRITE = re.compile(rf"(?<![\w.>])((?:this->)?{_IDENT}(?:\.{_IDENT})*)\s*[-+*/|&^]?=(?!=)")
_HEADERS = (".h", ".hh", ".hpp", ".hxx")
_INTEGERS = {"int", "long", "short", "size_t", "int32_t", "int64_t", "uint32_t", "uint64_t", "unsigned"}
_ARITHMETIC = _INTEGERS | {"bool"}


@dataclass(frozen=True)
class CppPlan:
    """A C++ harness and what generating its test needs beyond the record."""

    harness: Harness
    header: str  # the owner's header, as included (`rtp_llm/cpp/config/ModelConfig.h`)
    qualified: str  # the owner with its namespace (`rtp_llm::ModelConfig`)
    namespace: str  # `rtp_llm` ("" global)
    call: str  # the method call with its arguments (`getAttentionConfigs(1)`)
    read: str  # how the target is read: "result" (the returned local) or "owner"
    target_type: str  # `bool`, an enum name, an integer type
    columns: tuple[tuple[str, str, str], ...]  # (column, the member path it sets, its C++ type)
    compile: Compile


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _params(text: str) -> list[tuple[str, str, str]]:
    """(type, name, default) of a parameter list's text (`int64_t tp_size = 1`)."""
    out: list[tuple[str, str, str]] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        decl, _, default = part.partition("=")
        m = re.match(rf"^(.*?)[\s&*]*({_IDENT})\s*$", decl.strip())
        if m is None or part.strip() == "void":
            continue
        out.append((m.group(1).replace("const ", "").strip(), m.group(2), default.strip()))
    return out


def _body(text: str, owner: str, method: str) -> tuple[str, str, bool] | None:
    """The parameter list, the body and constness of `owner::method`'s definition in `text`."""
    m = re.search(rf"\b{re.escape(owner)}::{re.escape(method)}\s*\(([^)]*)\)\s*(const)?[^{{;]*\{{", text)
    if m is None:
        return None
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return m.group(1), text[m.end() : i - 1], bool(m.group(2))


def _top_statements(body: str) -> list[str]:
    """The body's statements at its own brace depth, in order (nested blocks left out)."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in body:
        if ch == "{":
            depth += 1
            cur = [] if depth == 1 else cur
        elif ch == "}":
            depth -= 1
            cur = []
        elif depth == 0:
            cur.append(ch)
            if ch == ";":
                out.append(" ".join("".join(cur).split()).rstrip(";").strip())
                cur = []
    return out


@dataclass(frozen=True)
class _Method:
    owner: str
    params: list[tuple[str, str, str]]
    locals: dict[str, str]  # default-constructed local -> its type
    copies: list[tuple[str, str]]  # `local.path = member.path` in order, unconditional, at top level
    returns: str  # the name returned ("" none)
    const: bool
    writes: tuple[str, ...] = ()  # every path the body assigns, at any depth (`config.rope_config`)


def _method(text: str, owner: str, method: str) -> _Method | None:
    found = _body(_strip_comments(text), owner, method)
    if found is None:
        return None
    params, body, const = found
    local_vars: dict[str, str] = {}
    copies: list[tuple[str, str]] = []
    returns = ""
    for s in _top_statements(body):
        if m := re.fullmatch(r"return\s+(\w+)", s):
            returns = m.group(1)
        elif m := re.fullmatch(rf"({_IDENT}(?:::{_IDENT})*)\s+({_IDENT})", s):
            local_vars[m.group(2)] = m.group(1).rsplit("::", 1)[-1]
        elif m := re.fullmatch(rf"({_IDENT}(?:\.{_IDENT})+)\s*=\s*((?:this->)?{_IDENT}(?:\.{_IDENT})*)", s):
            copies.append((m.group(1), m.group(2).removeprefix("this->")))
    writes = tuple(w.removeprefix("this->") for w in _WRITE.findall(body))
    return _Method(owner, _params(params), local_vars, copies, returns, const, writes)


def _member_type(index: RepoIndex, owner: str, path: str) -> str | None:
    """The type of `owner`'s member path `a.b.c`; None when a part is not a declared member."""
    kind = owner
    for part in path.split("."):
        decl = index.field_decl(kind, part)
        if decl is None or not decl.type:
            return None
        kind = decl.type
    return kind


def _column(name: str, m: _Method, index: RepoIndex) -> tuple[str, str] | str:
    """(member path or parameter name, its type) a column sets; or why it cannot be set."""
    name = name.removeprefix("this->")
    if not _PATH.match(name):
        return f"the column `{name}` is no member path"
    head, _, rest = name.partition(".")
    if head in m.locals:
        covering = [(dst, src) for dst, src in m.copies if (name + ".").startswith(dst + ".")]
        touching = [w for w in m.writes if (name + ".").startswith(w + ".") or w.startswith(name + ".")]
        if len(covering) != 1 or touching != [covering[0][0]]:
            return (
                f"the column `{name}` is a field of the local `{head}` that no single copy of a member sets"
            )
        dst, src = covering[0]
        name = src + name[len(dst) :]
        head, _, rest = name.partition(".")
    if head in m.locals:
        return f"the column `{name}` comes from another local"
    if any(p[1] == head for p in m.params):
        return f"the column `{name}` is a parameter of the method: only member columns are set"
    kind = _member_type(index, m.owner, name)
    if kind is None:
        return f"the column `{name}` is not a member path of `{m.owner}`"
    return name, kind


def _target(table: TruthTable, m: _Method, index: RepoIndex) -> tuple[str, str, str] | str:
    """How the target is read ("result"/"owner"), the path read, its type; or why it cannot be."""
    target = table.target.removeprefix("this->")
    head, _, rest = target.partition(".")
    if head in m.locals:
        if head != m.returns or not rest:
            return f"the target `{target}` is a local that `{table.function}` does not return"
        kind = _member_type(index, m.locals[head], rest)
        return ("result", rest, kind) if kind else f"the target `{target}` is no declared member"
    if m.const:
        return f"the target `{target}` is neither returned nor written by a non-const method"
    kind = _member_type(index, m.owner, target)
    return ("owner", target, kind) if kind else f"the target `{target}` is not a member of `{m.owner}`"


def _literal_call(repo: Path, sha: str, method: str, count: int) -> tuple[tuple[str, ...], str] | None:
    """The literal arguments of the first call `.method(1, ...)` in the repository at `sha`."""
    out = subprocess.run(
        ["git", "-C", str(repo), "grep", "-n", "-E", rf"[.>]{re.escape(method)}\(", sha, "--"],
        capture_output=True,
        text=True,
        check=False,
    )
    lit = r"(?:-?\d+|true|false|[A-Za-z_]\w*::[A-Za-z_]\w*)"
    for line in out.stdout.splitlines():
        where, _, code = line.partition(f"{sha}:")[2].partition(":")
        lineno, _, code = code.partition(":")
        if m := re.search(rf"[.>]{method}\(\s*({lit}(?:\s*,\s*{lit})*)\s*\)", code):
            args = tuple(a.strip() for a in m.group(1).split(","))
            if len(args) == count:
                return args, f"{where}:{lineno}"
    return None


def _arguments(m: _Method, repo: Path, sha: str, method: str) -> tuple[list[str], str]:
    """The call's arguments (up to the first declared default) and where they come from."""
    required = [p for p in m.params if not p[2]]
    if not required:
        return [], ""
    called = _literal_call(repo, sha, method, len(m.params))
    if called is not None:
        return list(called[0]), called[1]
    args: list[str] = []
    for kind, _, default in m.params:
        if default:
            break  # the declared defaults from here on
        if kind.split("::")[-1] not in _INTEGERS:
            return [], ""
        args.append("1")
    names = ", ".join(f"`{p[1]}`" for p in required)
    return args, f"no call in the repository gives {names}; 1 chosen (no column reads it)"


def _header(index: RepoIndex, owner: str) -> str:
    """The header that declares the owner ("" none)."""
    return next((o.path for o in index.owners(owner) if o.path.endswith(_HEADERS)), "")


def _namespace(text: str, owner: str) -> str:
    """The namespaces open where `owner` is declared in a header's text (`rtp_llm`, `a::b`)."""
    code = _strip_comments(text)
    at = re.search(rf"\b(?:class|struct)\s+{re.escape(owner)}\b[^;]*?\{{", code)
    if at is None:
        return ""
    opened: list[tuple[str, int]] = []  # (name, brace depth it opened at)
    depth = 0
    for m in re.finditer(r"namespace\s+([\w:]+)\s*\{|[{}]", code[: at.start()]):
        if m.group(1):
            opened.append((m.group(1), depth))
            depth += 1
        elif m.group(0) == "{":
            depth += 1
        else:
            depth -= 1
            while opened and opened[-1][1] >= depth:
                opened.pop()
    return "::".join(n for n, _ in opened)


def _default_constructible(text: str, owner: str) -> bool:
    ctors = re.findall(rf"(?<![~:\w]){re.escape(owner)}\s*\(([^)]*)\)\s*[:{{;=]", _strip_comments(text))
    return not ctors or any(all(p[2] for p in _params(c)) for c in ctors)


@dataclass(frozen=True)
class _Located:
    method: _Method
    header: str
    namespace: str


def _locate(
    table: TruthTable, head_text: str | None, index: RepoIndex, repo: Path, sha: str
) -> _Located | str:
    """The method's definition, the owner's header and namespace; or why the owner cannot be built."""
    fn = table.function or ""
    owner, _, method = fn.rpartition("::")
    owner = owner.rsplit("::", 1)[-1]
    if not owner or head_text is None:
        return f"the derivation runs in `{fn or 'a free function'}`, not in a method of a class"
    if not (re.fullmatch(_IDENT, owner) and re.fullmatch(_IDENT, method)) or "\n" in table.path:
        return f"`{fn}` in `{table.path}` is not spelled as a method the generated test can name"
    m = _method(head_text, owner, method)
    if m is None:
        return f"the definition of `{fn}` was not found in `{table.path}`"
    header = _header(index, owner)
    header = header if re.fullmatch(r"[\w./+-]+", header) else ""  # included as `#include "header"`
    header_text = read_at(repo, sha, header) if header else None
    if header_text is None:
        return f"`{owner}` is declared in no header of the repository"
    if not _default_constructible(header_text, owner):
        return f"`{owner}` has no default constructor"
    declared = re.search(rf"\b{re.escape(method)}\s*\(([^)]*)\)", _strip_comments(header_text))
    if declared is not None and len(_params(declared.group(1))) == len(m.params):
        m = replace(m, params=_params(declared.group(1)))  # the declaration carries the defaults
    return _Located(m, header, _namespace(header_text, owner))


def cpp_harness(
    table: TruthTable,
    head_text: str | None,
    index: RepoIndex,
    repo: Path,
    head_sha: str,
    compile_: Compile | str,
) -> CppPlan | str:
    """The plan of a C++ table, or one sentence saying why it is not executed."""
    located = _locate(table, head_text, index, repo, head_sha)
    if isinstance(located, str):
        return located
    m = located.method
    columns: list[tuple[str, str, str]] = []
    for v in table.variables:
        found = _column(v.name, m, index)
        if isinstance(found, str):
            return found
        columns.append((v.name, found[0], found[1]))
    target = _target(table, m, index)
    if isinstance(target, str):
        return target
    if target[2] not in _ARITHMETIC and not index.enum_members(target[2]):
        return f"the target `{table.target}` is a `{target[2]}`: only bool, integer and enum targets are compared"
    method = (table.function or "").rpartition("::")[2]
    args, given_from = _arguments(m, repo, head_sha, method)
    if not args and m.params and not all(p[2] for p in m.params):
        return f"`{table.function}` takes arguments that have no default and no literal call in the repository gives"
    if isinstance(compile_, str):
        return compile_
    owner = f"{located.namespace}::{m.owner}" if located.namespace else m.owner
    harness = Harness(
        path=table.path,
        module=located.header,
        import_root="",
        owner=owner,
        kind="cpp",
        function=method,
        target=target[1],
        keywords=tuple((c[0], c[1]) for c in columns),
        enums=tuple(dict.fromkeys(v.enum for v in table.variables if v.enum)),
        given=tuple((p[1], a) for p, a in zip(m.params, args, strict=False)),
        given_from=given_from,
        call=True,
    )
    call = f"{method}({', '.join(args)})"
    return CppPlan(
        harness,
        located.header,
        owner,
        located.namespace,
        call,
        target[0],
        target[2],
        tuple(columns),
        compile_,
    )
