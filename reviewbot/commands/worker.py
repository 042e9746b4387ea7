"""`reviewbot worker`: consume round jobs from the queue (huey's consumer, run in-process)."""

from __future__ import annotations

import argparse
import logging
import sys

from reviewbot.errors import UsageError
from reviewbot.service.github_round import github_round
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import Worker, make_consumer
from reviewbot.settings import load_settings

__all__ = ["add_arguments", "main"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, default=1, help="rounds run at once by this process (threads)")
    parser.add_argument(
        "--config", help="YAML settings file (default: $REVIEWBOT_CONFIG); the environment wins"
    )


def main(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    settings = load_settings(args.config)
    settings.require_credentials()
    runtime = Runtime.open(settings)
    try:
        worker = Worker(settings, runtime.book, runtime.queue, github_round(settings))
        consumer = make_consumer(runtime.queue, args.workers)
        worker.start()
        print(
            f"reviewbot worker: {args.workers} thread(s), owner {worker.owner}; {runtime.describe()}",
            file=sys.stderr,
            flush=True,
        )
        try:
            consumer.run()  # returns after SIGINT/SIGTERM, once running rounds have finished
        finally:
            worker.stop()
    finally:
        runtime.close()
    return 0
