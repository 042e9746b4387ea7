"""Private PostgreSQL and Redis servers that a test may stop and start (outages).

The machine's shared servers on 5432 / 6379 serve other tests and agents, so an outage is staged on
a server of the test's own: a PostgreSQL cluster made by `initdb` in a temporary directory (run as
the `postgres` user when the tests run as root; PostgreSQL refuses to run as root) and a
`redis-server` without persistence (a restart loses every key, as a Redis without AOF/RDB does).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

__all__ = ["PrivatePostgres", "PrivateRedis", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(port: int, up: bool, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while _accepts(port) != up:
        if time.monotonic() > deadline:
            raise AssertionError(f"port {port} still {'closed' if up else 'open'} after {timeout}s")
        time.sleep(0.05)


class PrivatePostgres:
    """A throwaway PostgreSQL cluster on 127.0.0.1:<free port>, trust auth, database `test`."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found and shutil.which("initdb") is None:
            pytest.skip("PostgreSQL's initdb is not installed")
        self.bin = Path(found[-1]).parent if found else Path(str(shutil.which("initdb"))).parent
        self.root = Path(tempfile.mkdtemp(prefix="reviewbot-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        conf = self.data / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                f"port = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.root}'\n"
                "fsync = off\nshared_buffers = 16MB\nmax_connections = 50\n"
            )
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "test")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/test"

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [*self._as, str(self.bin / tool), *args], check=True, capture_output=True, cwd=self.root
        )

    def start(self) -> None:
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", "60", "start")
        _wait(self.port, up=True)

    def stop(self) -> None:
        """An immediate shutdown: sessions are cut, as when the server crashes or is restarted."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        _wait(self.port, up=False)

    def close(self) -> None:
        try:
            if _accepts(self.port):
                self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class PrivateRedis:
    """A redis-server on 127.0.0.1:<free port> that keeps nothing on disk."""

    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait(self.port, up=True)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # SIGKILL: no chance to save anything, as in a crash
            self.proc.wait(timeout=10)
        _wait(self.port, up=False)

    def restart_empty(self) -> None:
        """Redis comes back without its data (no persistence configured)."""
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
