"""GitHub at the edge of the pipeline: read a PR, get its code, publish the round.

    settings  GitHubSettings: credentials, API URL (GitHub Enterprise Server too), limits, policy
    auth      PyGithub client for a token or a GitHub App installation; the bot's login
    client    every request counted (KPI api_calls) and retried (5xx, timeouts, rate limits)
    api       the REST operations, JSON turned into records at the boundary
    workspace one cached (partial) clone per repository; `pull/N/head` and the base per round
    fallback  the change from the API's patches when git cannot fetch it
    plan      what to publish (summary comment, review with inline comments, check run), pure
    publish   the plan sent idempotently; dryrun shows it instead
    round     run_pr_round: the whole round, for the CLI and the App worker

Nothing in here is imported by the analysis core.
"""

from __future__ import annotations

from reviewbot.github.round import PrRoundOutcome, run_pr_round
from reviewbot.github.settings import GitHubSettings

__all__ = ["GitHubSettings", "PrRoundOutcome", "run_pr_round"]
