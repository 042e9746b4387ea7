"""The records of `reach`: how far a guarded rule reaches, per guard atom and per config builder."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from reviewbot.lang.facts import Assignment
from reviewbot.model.messages import Message, clauses, msg

__all__ = ["AtomReach", "ModelReach", "Reach"]


@dataclass(frozen=True)
class AtomReach:
    atom: str  # as written in the guard (canonical)
    field: str  # the configuration field the atom tests
    true_at_default: bool | None  # None: no default found
    default: str = ""  # e.g. "`RopeConfig.style` defaults to `RopeStyle.No` (RopeConfig.h:16)"
    derived: str = ""  # e.g. "`use_kvcache` is `task_type == TaskType.LANGUAGE_MODEL` (model_config.py:23)"
    population: str = ""  # e.g. "every task_type other than LANGUAGE_MODEL (DENSE_EMBEDDING, ...)"
    display: str = ""  # the field with its owner, e.g. `rope_config.style`
    want: bool = True  # the truth value the guard needs (`!x` needs x false)
    members: tuple[str, ...] = ()  # derived from an enum: the members of the source field that satisfy
    source: str = ""  # derived atoms: the field they are computed from (`task_type`)
    default_value: str = ""  # the default's value (`RopeStyle.No`)
    # The same sentences as catalogue messages (the str fields above are their English text, which the
    # wording logic below tests): `population_bare` leaves out the listed members.
    default_msg: Message | str = dataclasses.field(default="", compare=False)
    derived_msg: Message | str = dataclasses.field(default="", compare=False)
    population_msg: Message | str = dataclasses.field(default="", compare=False)
    population_bare: Message | str = dataclasses.field(default="", compare=False)


@dataclass(frozen=True)
class ModelReach:
    """One config builder and whether it reaches the rule."""

    name: str  # `Bert`
    path: str
    line: int
    reaches: bool | None  # True: as built; None: depends on a value known only at run time
    notes: tuple[str, ...] = ()
    excluded: bool = False  # sets a guard field to a value that keeps the rule off
    function: str = ""  # the builder's qualified name (`Bert._create_config`)
    # Every write the builder makes, its helpers' included, in the order they happen.
    writes: tuple[Assignment, ...] = field(default=(), repr=False, compare=False)
    note_msgs: tuple[Message | str, ...] = field(default=(), compare=False)  # `notes` as messages

    def describe(self) -> str:
        return str(self.describe_msg())

    def describe_msg(self) -> Message:
        where = f"{self.path}:{self.line}"
        if not self.note_msgs:
            return msg("reach.model", name=self.name, where=where)
        return msg("reach.model.notes", name=self.name, where=where, notes=clauses(self.note_msgs))


@dataclass(frozen=True)
class Reach:
    sentence: str
    atoms: tuple[AtomReach, ...]
    fires_at_default: bool | None  # True when every atom is true at its default
    models: tuple[str, ...] = ()  # `Bert (rtp_llm/models/bert.py:6; task_type DENSE_EMBEDDING)`
    wide: bool = False  # fires for a whole population (a derived atom) or at defaults
    places: tuple[str, ...] = field(default=())  # `path:line` of the builders that reach it
    population: str = ""  # the configurations in words, without the model list
    builders: tuple[ModelReach, ...] = ()  # every builder considered, excluded ones included
    text: Message | str = field(default="", compare=False)  # `sentence` as a message
    population_msg: Message | str = field(default="", compare=False)  # `population` as a message
