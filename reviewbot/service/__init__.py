"""The GitHub App as a service: the webhook server answers a delivery in milliseconds (signature, parse,
one transaction recording the delivery and its jobs, one queue message per job), and workers run each job's
round later from a durable queue (huey on SQLite or Redis), with metrics, retention and a read-only history
page. The round itself is the same one the CLI runs; this package only schedules and records it.
"""
