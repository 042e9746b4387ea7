"""`reviewbot worker`: consume round jobs from the queue (huey's consumer, run in-process)."""

from __future__ import annotations

import argparse
import logging

from reviewbot.commands._service import add_service_arguments, service_logging, service_settings
from reviewbot.service.github_round import github_round
from reviewbot.service.runtime import Runtime
from reviewbot.service.worker import Worker, make_consumer

__all__ = ["add_arguments", "main"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_service_arguments(parser, workers_help="rounds run at once by this process (threads)")


def main(args: argparse.Namespace) -> int:
    service_logging(args)
    settings = service_settings(args, secret=False, credentials=True)
    runtime = Runtime.open(settings)
    try:
        worker = Worker(settings, runtime.book, runtime.queue, github_round(settings))
        consumer = make_consumer(runtime.queue, args.workers)
        worker.start()
        log.info(
            "reviewbot worker: %d thread(s), owner %s; %s", args.workers, worker.owner, runtime.describe()
        )
        try:
            consumer.run()  # returns after SIGINT/SIGTERM, once running rounds have finished
        finally:
            worker.stop()
    finally:
        runtime.close()
    return 0
