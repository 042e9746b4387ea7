"""always-true-guard (P0; P1 when only some spellings are misread): a guard that is always true or
always false, so one of its branches never runs.

## What it does
Flags, on the changed lines, a guard whose value does not depend on the configuration:
- an environment holder object compared with a bool: `envs.X is True` where the same code uses
  `envs.X.get()` (the holder is an object, never the bool `True`): always false; or tested for truth
  (`if envs.X:`), where the code uses it as an object or its registry declares it one (`X =
  EnvBool(...)`): always true;
- P1: such a holder handed to a parameter that its function (in a changed file, or the module the
  caller imports it from) tests for truth (`raise_error_or_warn(self, envs.X, ...)` with `if strict:
  raise`): the function takes that branch whatever the operator sets;
- a standard environment read compared with a non-string: `os.environ.get("X") == 1`,
  `os.getenv("X") is True`: the environment gives a string, so the test is always false;
- a bare name tested for truth (`if SOME_FLAG:`) that the same file binds once to a function, a class,
  a non-empty string literal or an instance of a project class without `__bool__`/`__len__` (a
  singleton instance is always truthy);
- P1: a raw environment string used as a bool (`os.getenv("X", False)`, `bool(os.getenv("X"))`):
  `X=0` or `X=false` is a non-empty string and still enables; when a registry entry returns the raw
  string (`"VLLM_X": lambda: os.getenv("VLLM_X", False)`), the finding at the read (the line to fix)
  cites the guard the change adds on the entry (`if envs.VLLM_X:`), where the branch that always runs is;
- P1: a rank divided instead of taken modulo (`tp_rank / tp_size == 0`);
- P1: a C/C++ `strcmp` with an option's name tested for truth (`else if (strcmp(argv[i], "--keep-split"))`):
  0 on a match, so the option never takes its branch and every other argument that gets there does;
- P1 (P2 in an `assert`: a validation that never fails only lets through what it was written to
  reject): a Python truth test the code fixes (`analysis.truthy_tests`): an `or` with an operand that
  is always truthy (`mode == "train" or "finetune"`, `builder is None or NotImplementedBuilder`), a
  method tested without being called (`if self.use_cache:`), a tuple (`assert (cond, "msg")`), `is`
  against a string literal (`args.mode is "train"`: a string read at run time is another object);
- P1 (P2 in an `assert`): a function tested without its call, known by a call of the same name
  elsewhere in the repository (`analysis.uncalled_calls`): `if current_platform.is_cuda:` where code
  calls `current_platform.is_cuda()` (a bound method is always truthy: every platform takes the branch;
  vLLM 371d04d39, fixed by 32ef4983c), `if is_hip:` for an imported `is_hip` the code calls; not when
  the guarded body calls it (`if hooks.on_start: hooks.on_start()` asks whether one is set) or when
  the repository assigns that name;
- P2: a command-line switch the command line cannot change (`analysis.stuck_flags`):
  `add_argument("--x", default=True, action="store_true")` is `True` for every launch, passing it
  changes nothing and no spelling turns it off (a `--no-x` writing the same destination is the way out);
  P3 in a script beside the package (`benchmark/`, `examples/`, `tools/`, `scripts/`);
- P2: an option that parses its value with `bool` (`add_argument("--onnx-safe", type=bool)`):
  `bool("false")` is `True`, so `--onnx-safe false` turns it on (P3 beside the package);
- P1: a preprocessor guard added to a source file on a macro only another source file `#define`s
  (`#ifndef GGML_USE_CUDA_SYCL_VULKAN` in `arg.cpp`, defined in `common.cpp`): each source file is
  compiled alone, so the guard is constant there (`analysis.macro_guards`);
- P2: a string literal compared on a changed line that the repository writes nowhere else, one letter
  from a value it does write (`tmpl == "chaglm4"` where the project has `LLAMA_VOCAB_PRE_TYPE_CHATGLM4`,
  `== "<|im_emd|>"` where it writes `"<|im_end|>"`): no input is ever that misspelling
  (`analysis.literal_typos`; values compared side by side, digit edits and fragments are left alone).

Not flagged: an `or` that picks a value (`name = x or "default"`), a method a decorator turns into a
property, a macro a header, a build file or a script defines or names, or that nothing defines (a
`-D` opt-in), a name bound to a bool or a comparison, a name rebound anywhere in the file, an
`Optional` that can be `None`, an instance of a class that defines `__bool__`/`__len__` (or of a
library class; a holder registry whose class defines `__bool__`, `__len__` or `__get__`), a read that
is parsed (`== "1"`, `bool(int(...))`), a raw read without a bool or number default (the "set to
anything" idiom).

## Why is this bad?
The `else` that used to run never runs again (or the opt-in never takes effect), for every model and
deployment, and nothing fails: the switch silently does nothing.

## Example
```python
if envs.SGLANG_USE_MODELSCOPE is True:      # an EnvBool object, never `True`
    from modelscope import HubApi
```

## Use instead
```python
if envs.SGLANG_USE_MODELSCOPE.get():
    from modelscope import HubApi
```
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from reviewbot.analysis.constant_guards import ConstantGuard, ConstantKind, constant_guards, holder_object_use
from reviewbot.analysis.env_bindings import bound_name, written_comparison
from reviewbot.analysis.envs.holder_args import (
    HolderArg,
    HolderTruth,
    ObjectProof,
    holder_args,
    holder_truth_tests,
    registry_holder,
    truthful,
)
from reviewbot.analysis.literal_typos import literal_typos
from reviewbot.analysis.macro_guards import macro_guards
from reviewbot.analysis.pyast import Texts, side_texts
from reviewbot.analysis.sides import Side, sides
from reviewbot.analysis.stuck_flags import bool_typed, stuck_flags
from reviewbot.analysis.truthy_tests import TruthyKind, TruthyTest, truthy_tests
from reviewbot.analysis.uncalled_calls import uncalled_calls
from reviewbot.analysis.undefined_names import module_files, registry_path
from reviewbot.checks.always_true_guard_more import TEXT as _TEXT
from reviewbot.checks.always_true_guard_more import (
    bool_typed_finding,
    literal_finding,
    macro_finding,
    stuck_finding,
    uncalled_finding,
)
from reviewbot.checks.base import CheckContext
from reviewbot.checks.util import clip, place
from reviewbot.lang.facts import EnvRead
from reviewbot.model.finding import Finding, Severity
from reviewbot.model.messages import Message, msg

id = "always-true-guard"
severity = Severity.P0
summary = "A guard that is always true or always false, so one branch never runs."


def _title(c: ConstantGuard) -> Message:
    if c.kind in (ConstantKind.ENV_OBJECT, ConstantKind.ENV_CONSTANT):
        key = "env-object" if c.kind is ConstantKind.ENV_OBJECT else "env-constant"
        return msg(f"always-true-guard.title.{key}", read=clip(c.read, _TEXT), value=c.value, name=c.name)
    if c.kind is ConstantKind.ENV_STRING:
        if c.bound:  # the field that takes the misread value is what a reader looks for
            return msg("always-true-guard.title.env-string-bound", name=c.name, field=c.bound)
        return msg("always-true-guard.title.env-string", name=c.name)
    if c.kind is ConstantKind.DIVISION:
        return msg("always-true-guard.title.division", text=clip(c.text, _TEXT), rank=c.name)
    if c.kind is ConstantKind.STRCMP:
        return msg("always-true-guard.title.strcmp", text=clip(c.text, _TEXT), option=c.bound)
    return msg("always-true-guard.title.name", text=clip(c.text, _TEXT), value=c.value, name=c.name, bound=clip(c.bound, 40))  # fmt: skip


def _evidence(c: ConstantGuard) -> list[Message]:
    if c.kind is ConstantKind.ENV_OBJECT:
        return [msg("always-true-guard.object-use", use=clip(c.bound.replace("·", c.read.split(" ")[0] if c.accessor.endswith(".X") else c.name), _TEXT), place=place(c.bound_path, c.bound_line))]  # fmt: skip
    if c.kind is ConstantKind.NAME:
        return [msg("always-true-guard.bound", name=c.name, bound=clip(c.bound, _TEXT), place=place(c.bound_path, c.bound_line))]  # fmt: skip
    if c.kind is ConstantKind.ENV_STRING:
        table = ", ".join(f"`{c.name}={s}` → {v}" for s, v in c.samples)
        read = (
            [msg("always-true-guard.registry-read", place=place(c.bound_path, c.bound_line))]
            if c.bound_path
            else []
        )
        return [*read, msg("always-true-guard.samples", table=table)]
    if c.kind is ConstantKind.ENV_CONSTANT:
        return [msg("always-true-guard.string", name=c.name)]
    if c.kind is ConstantKind.STRCMP:
        return [msg("always-true-guard.strcmp", option=c.bound)]
    return [msg("always-true-guard.division", rank=c.name)]


def _suggestion(c: ConstantGuard) -> Message:
    if c.kind is ConstantKind.ENV_OBJECT:
        return msg("always-true-guard.suggestion.env-object", name=c.name)
    if c.kind in (ConstantKind.ENV_CONSTANT, ConstantKind.ENV_STRING):
        return msg("always-true-guard.suggestion.env", name=c.name)
    if c.kind is ConstantKind.DIVISION:
        return msg("always-true-guard.suggestion.division", rank=c.name)
    if c.kind is ConstantKind.STRCMP:
        return msg("always-true-guard.suggestion.strcmp", option=c.bound)
    return msg("always-true-guard.suggestion.name", name=c.name)


def _named_target(c: ConstantGuard, ctx: CheckContext) -> ConstantGuard:
    """A raw environment string the facts bind to nothing, named from its line, and a compared read
    quoted as its line writes it (`analysis.env_bindings`)."""
    f = ctx.change.file(c.path)
    if c.kind not in (ConstantKind.ENV_STRING, ConstantKind.ENV_CONSTANT) or f is None or not f.head_text:
        return c
    lines = f.head_text.split("\n")
    line = lines[c.line - 1] if 0 < c.line <= len(lines) else ""
    if c.kind is ConstantKind.ENV_CONSTANT:
        return replace(c, written=written_comparison(c.name, line))
    return c if c.bound else replace(c, bound=bound_name(c.name, line))


def _finding(c: ConstantGuard) -> Finding:
    return Finding.make(
        rule=id,
        severity=Severity.P0 if c.kind.constant else Severity.P1,
        path=c.path,
        line=c.line,
        anchor=f"{c.kind.value}|{c.name}|{c.text}",
        title=_title(c),
        evidence=tuple(_evidence(c)),
        suggestion=_suggestion(c),
        # the field is the variable a deployment sets, the name the title gives beside it is the code's own
        extra=(("field", c.name), ("kind", c.kind.value), ("value", c.value), *_binding(c)),
    )


def _binding(c: ConstantGuard) -> tuple[tuple[str, str], ...]:
    """The code's own name for a raw environment string (`check_server` for `MOONCAKE_CHECK_SERVER`):
    a reader may know the setting by either."""
    if c.kind is not ConstantKind.ENV_STRING or not c.bound:
        return ()
    return (("binding", c.bound.rsplit(".", 1)[-1]),)


def _truthy_finding(t: TruthyTest) -> Finding:
    """A Python truth test the code fixes: P2 in an `assert` (a validation that never fails lets through
    only what it was written to reject), P1 elsewhere (a branch taken, or skipped, by every configuration)."""
    text = clip(t.text, _TEXT)
    at = place(t.path, t.bound_line)
    if t.kind is TruthyKind.TUPLE:
        title = msg("always-true-guard.title." + ("tuple-assert" if t.in_assert else "tuple"), text=text)
        evidence: list[Message] = []
    elif t.kind is TruthyKind.OPERAND:
        title = msg("always-true-guard.title.operand", text=text, operand=t.operand)
        evidence = [
            msg("always-true-guard.defined", operand=t.operand, place=at)
            if t.bound_line
            else msg("always-true-guard.literal", operand=t.operand)
        ]
    elif t.kind is TruthyKind.UNCALLED:
        title = msg("always-true-guard.title.uncalled", text=text, operand=t.operand, place=at)
        evidence = []
    else:
        title = msg("always-true-guard.title.is-literal", text=text, value=str(t.value))
        evidence = []
    if t.in_assert:
        evidence.append(msg("always-true-guard.validation"))
    return Finding.make(
        rule=id,
        severity=Severity.P2 if t.in_assert else Severity.P1,
        path=t.path,
        line=t.line,
        anchor=f"{t.kind.value}|{t.function}|{t.text}",
        title=title,
        evidence=tuple(evidence),
        suggestion=msg(f"always-true-guard.suggestion.{_suggested(t)}", operand=t.operand),
        extra=(("field", t.operand.strip("'\"") or t.text), ("kind", t.kind.value), ("value", str(t.value))),
    )


class _Holders:
    """What the holder rules read from the head tree, each file once per round: the registry module
    that a changed file's `envs` is bound to, and the module a called name is imported from."""

    def __init__(self, ctx: CheckContext, changed: list[Side], texts: Texts) -> None:
        self.ctx, self.changed, self.texts = ctx, changed, texts
        self.tree = ctx.change.head_tree
        self._paths: list[str] | None = None
        self._registries: dict[str, tuple[str | None, str | None]] = {}
        self._modules: dict[str, tuple[str, str] | None] = {}

    def paths(self) -> list[str]:
        if self._paths is None:
            self._paths = self.tree.paths() if self.tree is not None else []
        return self._paths

    def registry(self, path: str) -> tuple[str | None, str | None]:
        """The registry module `path`'s `envs` is bound to, and its text."""
        if path not in self._registries:
            head = self.texts.get(path, (None, None))[1]
            found = registry_path(head, self.paths()) if head is not None and self.tree is not None else None
            body = self.tree.read(found) if self.tree is not None and found else None
            self._registries[path] = (found, body)
        return self._registries[path]

    def proof(self, e: EnvRead) -> ObjectProof | None:
        """A read using `e`'s holder as an object, else its registry's declaration of it as one; None
        when the registry's holder class defines its truth (`__bool__`) or is a descriptor (`__get__`)."""
        registry, body = self.registry(e.path)
        if body and truthful(body):
            return None
        use = holder_object_use(e, self.changed, self.ctx.index)
        if use is not None:
            return ObjectProof(use.parse.replace("·", f"{e.accessor[:-1]}{e.name}"), use.path, use.line)
        return registry_holder(e.name, registry, body) if registry and body else None

    def module(self, dotted: str) -> tuple[str, str] | None:
        """The head's one file of module `dotted` and its text (a diff alone has no tree: None)."""
        if dotted not in self._modules:
            files = module_files(dotted, self.paths())
            text = self.tree.read(files[0]) if self.tree is not None and len(files) == 1 else None
            self._modules[dotted] = (files[0], text) if text else None
        return self._modules[dotted]


def _proof_evidence(proof: ObjectProof) -> Message:
    """Where the holder shows it is an object: a use (`envs.X.get()`) or its registry declaration."""
    key = "declared-object" if proof.declared else "object-use"
    return msg(f"always-true-guard.{key}", use=clip(proof.text, _TEXT), place=place(proof.path, proof.line))


def _holder_truth_finding(h: HolderTruth) -> Finding:
    """P0 like `envs.X is True`: the branch does not depend on the setting for anyone."""
    return Finding.make(
        rule=id,
        severity=Severity.P0,
        path=h.read.path,
        line=h.read.line,
        anchor=f"holder-truth|{h.read.name}|{h.read.function}|{h.text}",
        title=msg(
            "always-true-guard.title.env-object", read=clip(h.text, _TEXT), value=h.value, name=h.read.name
        ),
        evidence=(_proof_evidence(h.proof),),
        suggestion=msg("always-true-guard.suggestion.env-object", name=h.read.name),
        extra=(("field", h.read.name), ("kind", "env-object"), ("value", h.value)),
    )


def _holder_arg_finding(h: HolderArg) -> Finding:
    """P1: the callee's truth test of the parameter takes one branch for every value the operator sets."""
    read = f"{h.read.accessor[:-1]}{h.read.name}"
    return Finding.make(
        rule=id,
        severity=Severity.P1,
        path=h.read.path,
        line=h.read.line,
        anchor=f"holder-arg|{h.read.name}|{h.read.function}|{h.callee}|{h.param}",
        title=msg("always-true-guard.title.holder-arg", read=read, callee=h.callee, param=h.param),
        evidence=(
            msg("always-true-guard.holder-arg", param=h.param, place=place(h.def_path, h.def_line)),
            _proof_evidence(h.proof),
        ),
        suggestion=msg("always-true-guard.suggestion.holder-arg", name=h.read.name),
        extra=(("field", h.read.name), ("kind", "holder-arg"), ("value", "True")),
    )


def _suggested(t: TruthyTest) -> str:
    """The suggestion's key: a class or function operand is tested against, a literal compared with."""
    if t.kind is TruthyKind.OPERAND and t.bound_line:
        return "operand-object"
    return t.kind.value


def run(ctx: CheckContext) -> Iterable[Finding]:
    changed = sides(ctx.change, ctx.base_facts, ctx.head_facts)
    for c in constant_guards(changed, ctx.index):
        yield _finding(_named_target(c, ctx))
    texts = side_texts(ctx.change)
    python = [s for s in changed if s.path.endswith(".py")]
    if python:
        for t in truthy_tests(python, texts):
            yield _truthy_finding(t)
        holders = _Holders(ctx, changed, texts)
        for h in holder_args(python, texts, holders.proof, holders.module):
            yield _holder_arg_finding(h)
        for held in holder_truth_tests(python, holders.proof):
            yield _holder_truth_finding(held)
        for f in stuck_flags(python, texts):
            yield stuck_finding(f)
        for b in bool_typed(python, texts):
            yield bool_typed_finding(b)
        for u in uncalled_calls(python, texts, ctx.change.head_tree):
            yield uncalled_finding(u)
    if ctx.change.head_tree is not None:  # a diff alone: no tree to search for the macro's definitions
        heads = {path: head for path, (_, head) in texts.items()}
        for g in macro_guards(changed, heads, ctx.change.head_tree):
            yield macro_finding(g)
        added = {f.path: f.added_lines for f in ctx.change.files if f.head_text is not None}
        for lt in literal_typos(added, ctx.change.head_tree, ctx.index.is_excluded, heads):
            yield literal_finding(lt)
