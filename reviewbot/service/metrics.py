"""Prometheus metrics for `GET /metrics`.

Two sources, by design:

- cluster-wide, read from the database at scrape time: deliveries by event and outcome, jobs by
  state, queue depth, round durations, retries, failures, GitHub API calls — written by every
  server and worker (reviewbot/service/counters.py), so they are the same whichever server is
  scraped (with several servers, scrape one or aggregate with max(), not sum());
- this server process only: signature/size rejections (nothing is written to the database for
  unauthenticated requests) and webhook handling latency.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from reviewbot.errors import ReviewbotError
from reviewbot.service import counters
from reviewbot.service.jobs import JobBook
from reviewbot.service.queue import JobQueue
from reviewbot.store.tables import JOB_STATES

__all__ = ["ServiceMetrics"]

log = logging.getLogger(__name__)

# counter name in the database -> (exported name, help, label names)
_COUNTERS = {
    "deliveries": (
        "reviewbot_deliveries",
        "Verified webhook deliveries by event and outcome.",
        ("event", "outcome"),
    ),
    "jobs_finished": ("reviewbot_jobs_finished", "Round jobs that ended, by final state.", ("state",)),
    "job_failures": ("reviewbot_job_failures", "Round jobs recorded as failed, by kind.", ("kind",)),
    "job_retries": ("reviewbot_job_retries", "Failed round attempts that were retried with backoff.", ()),
    "jobs_recovered": (
        "reviewbot_jobs_recovered",
        "Interrupted round jobs re-queued after a worker stopped.",
        (),
    ),
    "jobs_resent": (
        "reviewbot_jobs_resent",
        "Queued round jobs whose message the queue had lost, sent again.",
        (),
    ),
    "jobs_cancelled": (
        "reviewbot_jobs_cancelled",
        "Round jobs cancelled because their pull request was closed, by the state they were in.",
        ("state",),
    ),
    "command_refusals": (
        "reviewbot_command_refusals",
        "Refused /reviewbot commands by what was done: replied; edited or held (one new reply per user, PR and hour).",
        ("outcome",),
    ),
    "pruned": (
        "reviewbot_pruned",
        "Rows removed by retention, by table.",
        ("table",),
    ),
    "github_api_calls": (
        "reviewbot_github_api_calls",
        "GitHub API requests of rounds, by kind (read/write/auth/retry).",
        ("kind",),
    ),
}


class _DatabaseCollector(Collector):
    def __init__(self, book: JobBook, queue: JobQueue | None) -> None:
        self.book = book
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("reviewbot_store_up", "1 when the database answered this scrape.")
        try:
            values = self.book.read_counters()
            states = self.book.counts_by_state()
        except ReviewbotError as exc:
            log.warning("metrics: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        for key, (name, doc, label_names) in _COUNTERS.items():
            family = CounterMetricFamily(name, doc, labels=list(label_names))
            for labels_text, value in sorted(values.get(key, {}).items()):
                labels = json.loads(labels_text)
                family.add_metric([labels.get(n, "") for n in label_names], value)
            if not label_names and not values.get(key):
                family.add_metric([], 0.0)
            yield family
        yield self._histogram(values)
        jobs = GaugeMetricFamily("reviewbot_jobs", "Round jobs by current state.", labels=["state"])
        for state in JOB_STATES:
            jobs.add_metric([state], states.get(state, 0))
        yield jobs
        depth = GaugeMetricFamily(
            "reviewbot_queue_depth", "Round jobs waiting to run (queued, incl. retries)."
        )
        depth.add_metric([], states.get("queued", 0))
        yield depth
        if self.queue is not None:
            msgs = GaugeMetricFamily(
                "reviewbot_queue_messages", "Messages in the huey queue.", labels=["kind"]
            )
            try:
                msgs.add_metric(["ready"], self.queue.pending())
                msgs.add_metric(["scheduled"], self.queue.scheduled())
            except Exception as exc:  # a queue outage must not break the scrape
                log.warning("metrics: the queue did not answer: %s", exc)
            yield msgs

    @staticmethod
    def _histogram(values: dict[str, dict[str, float]]) -> Metric:
        base = "round_duration_seconds"
        empty = counters.labels_key({})
        by_le = {json.loads(k)["le"]: v for k, v in values.get(f"{base}_bucket", {}).items()}
        buckets = [(repr(b), by_le.get(repr(b), 0.0)) for b in counters.DURATION_BUCKETS]
        buckets.append(("+Inf", by_le.get("+Inf", 0.0)))
        family = HistogramMetricFamily(
            "reviewbot_round_duration_seconds", "Wall time of rounds that completed."
        )
        family.add_metric([], buckets, sum_value=values.get(f"{base}_sum", {}).get(empty, 0.0))
        return family


class ServiceMetrics:
    """The registry behind /metrics, with the server-local instruments."""

    def __init__(self, book: JobBook, queue: JobQueue | None) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_DatabaseCollector(book, queue))
        self.rejected = Counter(
            "reviewbot_webhook_rejected",
            "Webhook requests refused before parsing (this server process), by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "reviewbot_webhook_seconds",
            "Time to answer a webhook delivery (this server process).",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=self.registry,
        )
