"""What the repository index must know about for the base-vs-head rules (pure).

`default-changed`, `env-switch-renamed` and `guard-removed` ask the head index about names the
derivation rules do not: every reader of an environment variable the change reads or writes (in
either language), the consumers and explicit writers of a field whose default changed, the other
writers of a field a removed derivation wrote, the subclasses of a class whose constructor lost a
guard. The pipeline adds `HistoryNames.index` to the names it indexes (and searches tests for), and
searches the documentation for `HistoryNames.docs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewbot.analysis.defaults.changes import default_names
from reviewbot.analysis.envs.switches import changed_env_names
from reviewbot.analysis.option_drift import added_option_names
from reviewbot.analysis.removals.guards import removal_names
from reviewbot.analysis.sides import sides
from reviewbot.lang.facts import FileFacts
from reviewbot.model.change import ChangeSet

__all__ = ["HistoryNames", "history_names"]


@dataclass(frozen=True)
class HistoryNames:
    index: frozenset[str]  # names the index parses files for (and finds in tests)
    docs: frozenset[str]  # environment variables whose documentation mentions are evidence


def history_names(
    change: ChangeSet, base_facts: dict[str, FileFacts], head_facts: dict[str, FileFacts]
) -> HistoryNames:
    ss = sides(change, base_facts, head_facts)
    env = changed_env_names(ss)
    names = env | removal_names(ss) | default_names(ss) | added_option_names(ss)
    return HistoryNames(frozenset(n for n in names if len(n) > 2), frozenset(env))
