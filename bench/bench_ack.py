"""Benchmark: how fast `reviewbot serve` acknowledges webhook deliveries (issue 15 item 14).

    python3 bench/bench_ack.py                                   # SQLite store and SQLite queue
    python3 bench/bench_ack.py --db postgresql://postgres@127.0.0.1:5432/test \
        --queue redis://127.0.0.1:6379/0                         # PostgreSQL + Redis
    python3 bench/bench_ack.py --deliveries 200 --concurrency 16 --json

`reviewbot serve` runs as its own process (as deployed; no worker, so only the acknowledgement is
measured: signature, payload checks, the delivery and its job recorded in one transaction, the
message enqueued). The bench sends `--deliveries` signed `pull_request.synchronize` deliveries, each
for its own PR and head (so each creates a job), from `--concurrency` threads over keep-alive
connections, and prints the latency percentiles of the answers (all must be 202) and the server's
CPU seconds. A PostgreSQL database given with --db gets a schema of its own (dropped afterwards);
a Redis queue gets a queue name of its own (its keys deleted afterwards).

Target (docs/reliability.md): p99 under 100 ms on both. Latency on a shared machine varies with its
load: compare runs made under the same load, and read the CPU seconds alongside.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reviewbot.service.signature import sign  # noqa: E402

SECRET = "bench-secret"
REPO = "acme/bench"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _payload(pr: int, head: str) -> dict[str, Any]:
    owner, name = REPO.split("/")
    repo = {"id": 1296269, "name": name, "full_name": REPO, "private": False, "owner": {"login": owner}}
    return {
        "action": "synchronize",
        "number": pr,
        "pull_request": {
            "number": pr,
            "state": "open",
            "draft": False,
            "user": {"login": "author"},
            "author_association": "MEMBER",
            "head": {"sha": head, "ref": f"feature-{pr}", "repo": repo},
            "base": {"sha": "b" * 40, "ref": "main", "repo": repo},
        },
        "repository": repo,
        "installation": {"id": 4242},
        "sender": {"login": "author"},
    }


def _request(pr: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(_payload(pr, uuid.uuid4().hex + "0" * 8)).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/bench",
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET.encode(), body),
    }
    return body, headers


def _pg_schema(url: str) -> tuple[str, str]:
    """A database of its own on the server of `url`: (its URL, its name)."""
    import psycopg

    name = f"reviewbot_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}", name


def _drop_pg(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(deliveries: int, concurrency: int, db: str | None, queue: str | None) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="reviewbot-bench-ack-"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWBOT_", "GITHUB_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        HOME=str(tmp),
        REVIEWBOT_STATE_DIR=str(tmp / "state"),
        REVIEWBOT_WEBHOOK_SECRET=SECRET,
        REVIEWBOT_QUEUE_NAME=f"bench_{uuid.uuid4().hex[:8]}",
    )
    pg: tuple[str, str] | None = None
    if db:
        pg = _pg_schema(db)
        env["REVIEWBOT_DB_URL"] = pg[0]
    if queue:
        env["REVIEWBOT_QUEUE_URL"] = queue
    log = (tmp / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "reviewbot.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"reviewbot serve did not start:\n{(tmp / 'serve.log').read_text()}")
            time.sleep(0.1)
        requests = [_request(pr) for pr in range(1, deliveries + 1)]
        latencies: list[float] = []
        statuses: dict[int, int] = {}
        lock = threading.Lock()
        cursor = iter(requests)

        def client() -> None:
            with httpx.Client(timeout=30) as http:
                while True:
                    with lock:
                        item = next(cursor, None)
                    if item is None:
                        return
                    body, headers = item
                    started = time.perf_counter()
                    status = http.post(f"{base}/webhook", content=body, headers=headers).status_code
                    took = time.perf_counter() - started
                    with lock:
                        latencies.append(took)
                        statuses[status] = statuses.get(status, 0) + 1

        cpu_before = _cpu_seconds(server.pid)
        started = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
        cpu = _cpu_seconds(server.pid) - cpu_before
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
        if pg is not None and db:
            _drop_pg(db, pg[1])
        if queue:
            import redis

            client_ = redis.Redis.from_url(queue)
            keys = list(client_.scan_iter(match=f"huey.*{env['REVIEWBOT_QUEUE_NAME']}*"))
            if keys:
                client_.delete(*keys)
    ms = sorted(x * 1000 for x in latencies)
    return {
        "store": "postgresql" if db else "sqlite",
        "queue": "redis" if queue else "sqlite",
        "deliveries": deliveries,
        "concurrency": concurrency,
        "statuses": statuses,
        "p50_ms": round(statistics.median(ms), 1),
        "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 1),
        "max_ms": round(ms[-1], 1),
        "wall_s": round(wall, 2),
        "server_cpu_s": round(cpu, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deliveries", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", help="a PostgreSQL URL (a database of the bench's own is made there)")
    parser.add_argument("--queue", help="a redis:// URL (default: SQLite in a temporary state directory)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    result = run(args.deliveries, args.concurrency, args.db, args.queue)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['store']} + {result['queue']}: {result['deliveries']} deliveries, "
            f"{result['concurrency']} concurrent: p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, "
            f"max {result['max_ms']} ms; {result['wall_s']} s wall, server {result['server_cpu_s']} CPU s; "
            f"answers {result['statuses']}"
        )
    return 0 if set(result["statuses"]) == {202} else 1


if __name__ == "__main__":
    raise SystemExit(main())
