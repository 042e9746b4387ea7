"""Config-file keys a change stops reading (pure, apart from searching the head tree).

A Python config *key read* is a key taken from a config dictionary on a line the diff removed: a
getter of the DeepSpeed kind (`get_scalar_param(param_dict, FP32_ALLREDUCE, False)`), or
`config.get("key")` / `cfg["key"]` on a receiver named like a config (`config`, `cfg`, `conf`,
`param_dict`, `ds_config`, `model_config`, ...). The key is a string literal, or a constant the base
side of a changed file binds to one (`FP32_ALLREDUCE = "fp32_allreduce"`).

A key is *dropped* when no Python source of the head tree (tests and docs aside) quotes it any more
nor takes it as a parameter of a config class's `__init__` (a config dict splatted into `RWConfig(**d)`):
nothing reads it, aliases it or warns about it, so a config file that sets it is silently ignored. Not
dropped: keys the base announced as deprecated (see `flag_removals.announced`), keys of test files,
files the change deletes.

Its place in the head is the line that took the place of where its reader was called: when the read sits in a getter the change
removes (`def get_allreduce_always_fp32(param_dict)`), the removed call of that getter
(`self.allreduce_always_fp32 = get_allreduce_always_fp32(param_dict)`), else the read itself.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reviewbot.analysis.pyast import python_tree
from reviewbot.analysis.removals.flags import announced
from reviewbot.analysis.removals.named_flags import declared_fields, head_anchor
from reviewbot.analysis.sides import Side
from reviewbot.lang.index import is_test_path
from reviewbot.model.change import RepoTree, read_many

__all__ = ["DroppedKey", "dropped_keys"]

_KEY = r"(?:[\"']([A-Za-z_][\w.-]*)[\"']|([A-Z][A-Z0-9_]*))"
_RECEIVER = r"(?:\w+_)?(?:config|cfg|conf)(?:_dict)?|param_dict|config_params"
_READS = (
    re.compile(r"\bget_\w*param\s*\(\s*[\w.]+\s*,\s*" + _KEY + r"\s*[,)]"),
    re.compile(r"\b(?:" + _RECEIVER + r")\s*(?:\.get\s*\(|\[)\s*" + _KEY + r"\s*[,)\]]"),
)
_STORE = re.compile(r"\s*=(?!=)")  # a plain store; `cfg["x"] *= 2` reads the key too
_CONSTANT = re.compile(r"^\s*([A-Z][A-Z0-9_]*)\s*=\s*[\"']([A-Za-z_][\w.-]*)[\"']\s*(?:#.*)?$")
_DEF = re.compile(r"^\s*def\s+(\w+)\s*\(")
_DOC = re.compile(r"(?i)\.(?:md|rst|txt|adoc|html?)$|(?:^|/)docs?/")


@dataclass(frozen=True)
class DroppedKey:
    key: str
    path: str  # the changed file that read it
    base_line: int  # the removed read
    line: int  # its place in the head (see the module doc)
    text: str  # the removed read, as written (stripped)


def _constants(texts: Iterable[str | None]) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in texts:
        for line in (text or "").split("\n"):
            m = _CONSTANT.match(line)
            if m:
                out.setdefault(m.group(1), m.group(2))
    return out


def _reads(s: Side, base_lines: list[str], constants: dict[str, str]) -> Iterable[tuple[str, int]]:
    for n in sorted(s.removed):
        if n > len(base_lines):
            continue
        for pattern in _READS:
            for m in pattern.finditer(base_lines[n - 1]):
                if m.group(0).endswith("]") and _STORE.match(base_lines[n - 1], m.end()):
                    continue  # `pass_config["tir.x"] = True` writes the key for a callee: not a read
                key = m.group(1) or constants.get(m.group(2) or "")
                if key:
                    yield key, n


def _caller_line(s: Side, base_lines: list[str], read_line: int) -> int:
    """The removed call of the removed getter the read sits in, else the read itself."""
    for n in range(read_line - 1, max(read_line - 8, 0), -1):
        m = _DEF.match(base_lines[n - 1])
        if not m:
            continue
        if n not in s.removed:
            break
        call = re.compile(r"(?<![\w.])" + re.escape(m.group(1)) + r"\s*\(")
        for c in sorted(s.removed):
            if c <= len(base_lines) and not _DEF.match(base_lines[c - 1]) and call.search(base_lines[c - 1]):
                return c
        break
    return read_line


def _quoted_in_head(keys: set[str], tree: RepoTree) -> set[str]:
    grep = getattr(tree, "grep", None)
    found = grep(sorted(keys), ["*.py"]) if callable(grep) else None
    if found is None:
        return set(keys)  # cannot tell: treat every key as still read
    paths = sorted(p for p in found if not is_test_path(p) and not _DOC.search(p))
    bodies = [b for b in read_many(tree, paths).values() if b]
    parameters = {p for body in bodies for p in _config_parameters(body)}  # each module parsed once
    return {
        k for k in keys if k in parameters or any(re.search(f"[\"']{re.escape(k)}[\"']", b) for b in bodies)
    }


def _config_parameters(body: str) -> set[str]:
    """The parameters of the `__init__` of the module's config classes (`class RWConfig(PretrainedConfig):
    def __init__(self, ..., multi_query=False)`): a config dict splatted into the class (`RWConfig(**d)`,
    `from_pretrained`) still hands the key to that parameter."""
    module = python_tree(body) if "Config" in body else None
    if module is None:
        return set()
    return {
        a.arg
        for c in ast.walk(module)
        if isinstance(c, ast.ClassDef) and "Config" in c.name
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name == "__init__"
        for a in (*f.args.args, *f.args.kwonlyargs)
    }


def dropped_keys(
    changed: Iterable[Side], texts: dict[str, tuple[str | None, str | None]], tree: RepoTree | None
) -> list[DroppedKey]:
    """The config keys the change stops reading with no alias and no announcement."""
    if tree is None:
        return []
    constants = _constants(b for b, _ in texts.values())
    found: dict[str, DroppedKey] = {}
    for s in changed:
        base_text, head_text = texts.get(s.path, (None, None))
        if not s.path.endswith(".py") or is_test_path(s.path) or not base_text or head_text is None:
            continue
        base_lines = base_text.split("\n")
        for key, n in _reads(s, base_lines, constants):
            if key in found or re.search(f"[\"']{re.escape(key)}[\"']", head_text):
                continue
            others = [b for p, (b, _) in texts.items() if b and p != s.path]
            if announced(key, base_lines, n, others):
                continue
            line = head_anchor(s, _caller_line(s, base_lines, n), head_text.split("\n"))
            found[key] = DroppedKey(key, s.path, n, line, base_lines[n - 1].strip())
    if not found:
        return []
    still = _quoted_in_head(set(found), tree) | _model_fields(set(found), [h for _, h in texts.values()])
    return [d for k, d in found.items() if k not in still]


def _model_fields(keys: set[str], heads: Iterable[str | None]) -> set[str]:
    """The keys a config model of a changed file now declares as fields: moved into the model, still read."""
    declared = {name for h in heads if h and "class " in h for name in declared_fields(h)}
    return keys & declared
