"""Does any caller pass a keyword? (pure, apart from searching the head tree)

A `kwargs["device"] = "cuda"` write only overwrites a value the user gave when some caller passes
`device=`. When the repository's every call of the function is found and none passes the key or
forwards a dict of keywords (`**opts`), the key is the function's own (dev-scan sample 12: sglang's
`process_mm_data(..., **kwargs)`, nine call sites, none passing `device`).

The answer is "unknown" (keep the finding) when the function is never called by name in the head tree
(a public entry point such as `from_pretrained`, called by users), when it is named without being called
(`handler = self.process`, `partial(fn, ...)`: a reference can be called with anything), or when its name
is a protocol method that is called without its name (`__init__`, `__call__`, `forward`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reviewbot.analysis.writes.scopes import call_text
from reviewbot.model.change import RepoTree, read_many

__all__ = ["unpassed_keyword"]

# Called without their name: a constructor through its class, `__call__`/`forward` through the object.
_NAMELESS = re.compile(r"^__\w+__$|^forward$")
_MAX_FILES = 200


def _calls(text: str, fn: str) -> list[str] | None:
    """The text of each call of `fn` in one file; None when the file names `fn` without calling it."""
    lines = text.split("\n")
    # any receiver: `self.fn(`, `super().fn(`, `procs[0].fn(`
    named = re.compile(r"(?<!\w)" + re.escape(fn) + r"\b(?!\w)")
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        for m in named.finditer(line):
            rest, head = line[m.end() :], line[: m.start()]
            if head.lstrip().startswith("#") or re.search(r"\bdef\s+$", head):
                continue  # a comment, or the definition
            if not rest.lstrip().startswith("("):
                return None  # a reference passed on or stored, or the name rebound
            text = call_text(lines, number, opener=fn + "(")
            if not _closes(text[text.find(fn + "(") :]):
                return None  # a call longer than the text read: its keywords are not all seen
            out.append(text)
    return out


def _closes(call: str) -> bool:
    """The parentheses opened by the call close within `call` (quoted text aside)."""
    depth = 0
    for c in re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", "", call):
        depth += 1 if c == "(" else -1 if c == ")" else 0
        if depth == 0 and c == ")":
            return True
    return False


def unpassed_keyword(
    fn: str,
    key: str,
    tree: RepoTree | None,
    texts: dict[str, str],
) -> bool:
    """True when the head tree calls `fn` by name at least once and no call passes `key=` or `**`.

    `texts` are files already read (the changed files' heads); the tree is searched for the rest."""
    if not fn.isidentifier() or _NAMELESS.match(fn) or tree is None:
        return False
    grep: Callable[[list[str]], set[str] | None] | None = getattr(tree, "grep", None)
    hits = grep([fn]) if callable(grep) else None
    if hits is None:
        return False
    found = sorted(p for p in hits if p.endswith(".py"))
    if len(found) > _MAX_FILES:
        return False
    bodies = dict(texts)
    missing = [p for p in found if p not in bodies]
    bodies.update({p: t for p, t in read_many(tree, missing).items() if t})
    passes = re.compile(r"(?<![\w.])" + re.escape(key) + r"\s*=(?!=)|\*\*")
    calls = 0
    for path in sorted(set(found) | {p for p in texts if p.endswith(".py")}):
        body = bodies.get(path)
        if not body or fn not in body:
            continue
        got = _calls(body, fn)
        if got is None:
            return False
        for call in got:
            inside = call[call.find(fn + "(") + len(fn) + 1 :]
            if passes.search(inside):
                return False
        calls += len(got)
    return calls > 0
