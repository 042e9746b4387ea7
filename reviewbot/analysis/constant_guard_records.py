"""The records of `analysis.constant_guards`: a guard whose value does not depend on the configuration,
and its kind (re-exported there, where their callers import them)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["OS_ACCESSORS", "ConstantKind", "ConstantGuard"]

# Accessors whose value is the environment's text (a `str`, or the default when unset).
OS_ACCESSORS = frozenset({"os.environ.get", "os.getenv", "os.environ[]"})


class ConstantKind(str, Enum):
    ENV_OBJECT = "env-object"  # `envs.X is True` on an object with `.get()`
    ENV_CONSTANT = "env-constant"  # `os.environ.get("X") == 1`
    ENV_STRING = "env-string"  # `os.getenv("X", False)`: "0" still enables
    DIVISION = "division"  # `tp_rank / tp_size == 0`
    NAME = "name"  # `if SOME_FLAG:` bound to an object, a function, a class, a string
    STRCMP = "strcmp"  # `if (strcmp(arg, "--x"))`: true for every argument but `--x`

    @property
    def constant(self) -> bool:
        """The guard has one value for every configuration (not only for some spellings)."""
        return self in (ConstantKind.ENV_OBJECT, ConstantKind.ENV_CONSTANT, ConstantKind.NAME)


@dataclass(frozen=True)
class ConstantGuard:
    kind: ConstantKind
    path: str
    line: int
    text: str  # the guard or the read, as found (canonical)
    name: str  # the variable, the tested name or the divided rank
    value: str  # "True" / "False": what it always gives ("" when it depends on the spelling)
    bound: str = ""  # NAME: what the name is bound to (`Holder()`, `def`, `"fast"`); STRCMP: the option;
    # ENV_STRING: the field or local the raw string is assigned to ("" when it is used in place)
    bound_line: int = 0  # NAME: the binding's line; ENV_OBJECT: a line that uses the holder as an object;
    # ENV_STRING read by a registry entry: the first guard the change adds on the entry
    bound_path: str = ""
    function: str = ""
    samples: tuple[tuple[str, str], ...] = ()  # ENV_STRING: (value set, what the read gives)
    accessor: str = ""  # ENV_*: how the switch is read (`os.environ.get`, `envs.X`)
    written: str = ""  # ENV_CONSTANT: the comparison as its line writes it (`os.environ.get("X") != "spawn"`)

    @property
    def read(self) -> str:
        """The read as code: as written when known, else rebuilt (`envs.X is True`, `os.environ.get("X")==1`)."""
        if self.written:
            return self.written
        if not self.accessor:
            return self.text
        if self.accessor.endswith(".X"):
            spelled = self.accessor[:-1] + self.name
        elif self.accessor == "os.environ[]":
            spelled = f'os.environ["{self.name}"]'
        else:
            spelled = f'{self.accessor}("{self.name}")'
        return (self.text or "·").replace("·", spelled)
