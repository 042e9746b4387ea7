"""Run a composite action's steps the way the Actions runner does, for the steps that are shell.

Only what reviewbot's action.yml uses is understood, and anything else is refused (so a new
expression in action.yml fails the test instead of being skipped): `${{ inputs.X }}`,
`${{ github.X.Y }}` and `${{ steps.ID.outputs.X }}` substitution; `if:` conditions made of
`always()`, `A == 'v'` and `A != 'v'` joined by `&&`; `$GITHUB_OUTPUT`; `shell: bash` run as
`bash --noprofile --norc -eo pipefail FILE` like the runner. `uses:` steps are not run: the caller
says which it skips and why.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_TERM = re.compile(r"^([\w.-]+)\s*(==|!=)\s*'([^']*)'$")


@dataclass
class StepRun:
    name: str
    ran: bool
    returncode: int = 0
    output: str = ""


@dataclass
class ActionRun:
    steps: list[StepRun] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(s.ran and s.returncode != 0 for s in self.steps)


class Context:
    def __init__(self, inputs: dict[str, str], github: dict[str, Any]) -> None:
        self.inputs = inputs
        self.github = github
        self.steps: dict[str, dict[str, str]] = {}

    def value(self, ref: str) -> str:
        head, _, rest = ref.partition(".")
        if head == "inputs":
            return self.inputs[rest]
        if head == "github":
            node: Any = self.github
            for part in rest.split("."):
                node = node.get(part, "") if isinstance(node, dict) else ""
            return str(node)
        if head == "steps":
            step, kind, name = rest.split(".", 2)
            assert kind == "outputs", ref
            return self.steps.get(step, {}).get(name, "")
        raise AssertionError(f"expression not understood by the test runner: {ref}")

    def substitute(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1)), text)

    def condition(self, expr: str) -> bool:
        expr = _EXPR.sub(lambda m: m.group(1), expr.strip())
        ok = True
        for term in (t.strip() for t in expr.split("&&")):
            if term == "always()":
                continue
            m = _TERM.match(term)
            assert m, f"condition not understood by the test runner: {term}"
            equal = self.value(m.group(1)) == m.group(3)
            ok = ok and (equal if m.group(2) == "==" else not equal)
        return ok


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def run_action(
    action: dict[str, Any],
    *,
    with_: dict[str, str],
    github: dict[str, Any],
    cwd: Path,
    env: dict[str, str],
    skip_uses: dict[str, str],
    scratch: Path,
) -> ActionRun:
    """Run the composite action's shell steps in `cwd`; `skip_uses` maps a `uses:` prefix to why it
    is not run (any other `uses:` step fails the run)."""
    assert action["runs"]["using"] == "composite"
    defaults = Context({}, github)
    inputs = {k: defaults.substitute(str(v.get("default", ""))) for k, v in action.get("inputs", {}).items()}
    unknown = set(with_) - set(inputs)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    ctx = Context({**inputs, **with_}, github)
    result = ActionRun(outputs=ctx.steps)
    failed = False
    for i, step in enumerate(action["runs"]["steps"]):
        name = step.get("name") or step.get("uses") or f"step {i}"
        cond = step.get("if")
        should = ctx.condition(cond) if cond else not failed
        if cond and "always()" not in cond and failed:
            should = False
        if "uses" in step:
            why = next((r for p, r in skip_uses.items() if step["uses"].startswith(p)), None)
            assert why is not None, f"no reason given to skip {step['uses']}"
            result.steps.append(
                StepRun(name, False, output=f"skipped: {why}" if should else "condition false")
            )
            continue
        if not should:
            result.steps.append(StepRun(name, False, output="condition false"))
            continue
        assert step.get("shell") == "bash", f"{name}: only bash steps are run"
        script = scratch / f"step-{i}.sh"
        script.write_text(ctx.substitute(step["run"]), encoding="utf-8")
        out_file = scratch / f"step-{i}.out"
        out_file.write_text("")
        step_env = {k: ctx.substitute(str(v)) for k, v in step.get("env", {}).items()}
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env={**os.environ, **env, **step_env, "GITHUB_OUTPUT": str(out_file)},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if "id" in step:
            ctx.steps[step["id"]] = dict(
                line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line
            )
        result.steps.append(StepRun(name, True, proc.returncode, proc.stdout + proc.stderr))
        failed = failed or proc.returncode != 0
    return result
