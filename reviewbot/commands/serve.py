"""`reviewbot serve`: the GitHub App's webhook server (Starlette on uvicorn).

With `--with-worker` the same process also runs the queue consumer, for a one-machine install.
"""

from __future__ import annotations

import argparse
import contextlib
import logging

import uvicorn

from reviewbot.commands._service import add_service_arguments, service_logging, service_settings
from reviewbot.service.app import Lifecycle, create_app
from reviewbot.service.runtime import Runtime
from reviewbot.service.server import server_config

__all__ = ["add_arguments", "main"]

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port to listen on (default: 8080)")
    parser.add_argument("--with-worker", action="store_true", help="also run rounds in this process")
    add_service_arguments(parser, workers_help="with --with-worker: rounds run at once")


def main(args: argparse.Namespace) -> int:
    service_logging(args)
    settings = service_settings(args, secret=True, credentials=args.with_worker)
    runtime = Runtime.open(settings)
    try:
        lifecycle = _embedded_worker(runtime, args.workers) if args.with_worker else None
        app = create_app(settings, runtime.book, runtime.queue, lifecycle)
        mode = f" with {args.workers} worker thread(s)" if args.with_worker else ""
        # Say whether the round-history pages are served: they are off unless a token is set.
        pages = (
            "history pages at /prs/OWNER/REPO/N (bearer token)"
            if settings.history_token
            else "no history pages"
        )
        log.info(
            "reviewbot serve: http://%s:%d/webhook%s; %s; %s",
            args.host,
            args.port,
            mode,
            pages,
            runtime.describe(),
        )
        # log_config=None keeps the CLI's logging set-up (service.logs); uvicorn's access log is only
        # shown with -v (the delivery lines say more). The header/body deadlines and connection
        # limits are service.server's (docs/security.md).
        config = server_config(
            app, settings, host=args.host, port=args.port, access_log=getattr(args, "verbose", 0) >= 1
        )
        server = uvicorn.Server(config)
        # The signal uvicorn re-raises after a clean shutdown ends here, as it does in uvicorn.run.
        with contextlib.suppress(KeyboardInterrupt):
            server.run()
        if not server.started:
            return 3  # uvicorn said why (the address is in use, ...), as uvicorn.run exits
    finally:
        runtime.close()
    return 0


def _embedded_worker(runtime: Runtime, workers: int) -> Lifecycle:
    from reviewbot.service.github_round import github_round
    from reviewbot.service.worker import Worker, make_consumer

    worker = Worker(runtime.settings, runtime.book, runtime.queue, github_round(runtime.settings))
    consumer = make_consumer(runtime.queue, workers, embedded=True)

    def start() -> None:
        worker.start()
        consumer.start()

    def stop() -> None:
        consumer.stop(graceful=True)
        worker.stop()

    return Lifecycle(on_start=start, on_stop=stop)
