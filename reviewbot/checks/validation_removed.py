"""validation-removed (P3; opt-in): a guard or validation present at base is dropped without a test change.

## What it does
The notes half of guard-removed, off unless a repository enables it (`.reviewbot.toml`: `[review]
enabled = ["validation-removed"]`). In a function the change touches, when no test file changed in the
same pull request mentions what went:
- a **dropped guard**: the same statement now runs under fewer conditions (`if os.environ.get("OLD"):
  os.environ["NEW"] = ...` -> the write alone), outside the constructor every model runs (guard-removed
  reports that one, P0);
- a **removed validation**: a `raise` / `throw` under a condition, an `assert`, a check macro
  (`FT_CHECK`, `TORCH_CHECK`) deleted, with no validation of the same condition left in the head.

It shares guard-removed's detection and its exclusions (moved or rewritten checks, checks turned into
warnings, limitations lifted, tensor checks, kernels, argument parser branches: see that rule).

Opt-in because it measured as noise: as P2 it was right on 0 of 57 findings of two dev-scan samples and
0 of 6 test findings (as P1), and as a P3 note blind labellers counted none of its 6 test findings a
problem, and 1 of its 3 train findings (docs/accuracy.md). A dropped guard or a removed validation is most often what the pull request
is for. A team that wants every removed check pointed out turns it on.

## Why is this bad?
A validation encodes a decision for some configurations; deleting it inside an unrelated change lets
through what it rejected, and nothing shows the reviewer that the behaviour changed on purpose.

## Example
```python
def validate(self):
    pass  # was: if self.chunked_prefill_size % self.page_size != 0: raise ValueError(...)
```

## Use instead
Keep the check, or say in the pull request why it goes and change the test that covered it.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewbot.checks import guard_removed
from reviewbot.checks.base import CheckContext
from reviewbot.model.finding import Finding, Severity

id = guard_removed.NOTES_ID
severity = Severity.P3
summary = "A guard or validation present at base is dropped without a test change (opt-in)."


def run(ctx: CheckContext) -> Iterable[Finding]:
    return guard_removed.reported(ctx, notes=True)
