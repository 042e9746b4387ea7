"""The core's settings for a repository, built in one place for the command line and GitHub.

A repository configures its review in `.reviewbot.toml`, read from the base revision (so a pull
request cannot change how it is reviewed). `repo_config` reads it against the known rules and the
bundled checklists; `configured` makes the `ReviewSettings` of it, the only place they are made. The
caller adds what is its own: the report's language when it chooses one, extra checklists, the test
executor, the facts cache, the timings of the stages before the core, the progress display and the
round's budget. Nothing changes the settings once made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypedDict, Unpack

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.checks.registry import KNOWN_RULES
from reviewbot.config import RepoConfig, load_repo_config
from reviewbot.lang.cache import FactsCache
from reviewbot.model.budget import RoundBudget
from reviewbot.model.change import ChangeSet, Note, RepoTree
from reviewbot.review.checklist import bundled_names
from reviewbot.review.pipeline import Execution, ReviewSettings
from reviewbot.review.progress import Progress

__all__ = ["CallerParts", "configured", "repo_config"]


class CallerParts(TypedDict, total=False):
    """What a caller adds to a repository's settings: the `ReviewSettings` fields of these names."""

    execute: Callable[[ChangeSet, list[ChangedDerivation]], Execution | None] | None
    notes: tuple[Note, ...]
    timings_ms: dict[str, float]
    facts_cache: FactsCache | None
    budget: RoundBudget
    progress: Progress | None


def repo_config(base_tree: RepoTree | None) -> RepoConfig:
    """The base revision's `.reviewbot.toml` (defaults when it has none); RepoConfigError when it is
    not valid."""
    return load_repo_config(base_tree, rules=KNOWN_RULES, checklists=bundled_names())


def configured(
    cfg: RepoConfig,
    *,
    lang: str | None = None,
    extra_checklists: Sequence[str] = (),
    **more: Unpack[CallerParts],
) -> ReviewSettings:
    """The settings of a repository configured by `cfg`: `lang` (the caller's choice) wins over
    `[review] lang`, else English; `extra_checklists` come after the repository's; `more` are
    the caller's own parts (CallerParts)."""
    return ReviewSettings(
        lang=lang or cfg.review.lang or "en",
        checklists=list(dict.fromkeys([*cfg.checklists, *extra_checklists])),
        checklist_texts=dict(cfg.repo_checklists),
        disabled_rules=cfg.disabled,
        enabled_rules=cfg.enabled,
        exclude=cfg.exclude,
        cpp_macros=cfg.cpp.macros,
        **more,
    )
