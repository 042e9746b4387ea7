"""The one error hierarchy of reviewbot.

ReviewbotError
 +-- UsageError          bad arguments or configuration (exit 2)
 +-- EnvironmentProblem  git missing, not a repository, unknown revision (exit 2)
 +-- GitError            a git command failed while reviewing (exit 3)
 +-- StoreError          the rounds database could not be used (exit 3)
 +-- GitHubError         the GitHub API failed after retries (exit 3)
      +-- RateLimited    the primary rate limit is exhausted and the reset is far away
"""

from __future__ import annotations

__all__ = [
    "ReviewbotError",
    "UsageError",
    "EnvironmentProblem",
    "GitError",
    "StoreError",
    "GitHubError",
    "RateLimited",
]


class ReviewbotError(Exception):
    """Root of every error reviewbot raises on purpose; the message tells the user what to do."""

    exit_code = 3


class UsageError(ReviewbotError):
    exit_code = 2


class EnvironmentProblem(ReviewbotError):
    exit_code = 2


class GitError(ReviewbotError):
    exit_code = 3


class StoreError(ReviewbotError):
    exit_code = 3


class GitHubError(ReviewbotError):
    exit_code = 3


class RateLimited(GitHubError):
    def __init__(self, message: str, reset_at: float | None = None) -> None:
        super().__init__(message)
        self.reset_at = reset_at
