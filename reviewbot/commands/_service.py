"""What `reviewbot serve` and `reviewbot worker` share: the `--workers`/`--config`/`--log-format`
options, their logging (INFO, text or JSON lines: service.logs) and the checked settings they start
from."""

from __future__ import annotations

import argparse

from reviewbot.errors import UsageError
from reviewbot.execution.sandbox import hide_from_sandbox
from reviewbot.extras import require_extras
from reviewbot.service.logs import FORMATS, configure_logging
from reviewbot.settings import Settings, load_settings

__all__ = ["add_service_arguments", "service_logging", "service_settings"]


def add_service_arguments(parser: argparse.ArgumentParser, *, workers_help: str) -> None:
    """Add `--workers N` (rounds run at once), `--config FILE` and `--log-format text|json`."""
    parser.add_argument("--workers", type=int, default=1, help=workers_help)
    parser.add_argument(
        "--config", help="settings file, YAML or .toml (default: $REVIEWBOT_CONFIG); the environment wins"
    )
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        default="text",
        help="log lines on stderr: text (default) or json (one JSON object per line)",
    )


def service_logging(args: argparse.Namespace) -> None:
    """Log at INFO (one line per delivery and per job outcome) in the chosen format."""
    configure_logging(getattr(args, "log_format", "text"), getattr(args, "verbose", 0))


def service_settings(args: argparse.Namespace, *, secret: bool, credentials: bool) -> Settings:
    """The settings from `--config` and the environment, failing early (UsageError) on a bad
    `--workers`, or on a missing webhook secret / GitHub credentials when the caller needs them."""
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    settings = load_settings(args.config)
    # A Redis queue or a PostgreSQL store without its client: one line naming the extra, exit 2.
    require_extras(queue_url=settings.queue_url, db_url=settings.database_url)
    # Pull-request tests run in a sandbox on this host: it must not see the service's own secrets
    # and state, wherever the config file put them (the defaults are hidden already).
    hide_from_sandbox(settings.private_paths())
    if secret:
        settings.require_secret()
    if credentials:
        settings.require_credentials()
    return settings
