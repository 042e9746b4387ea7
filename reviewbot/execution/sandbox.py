"""Run a repository's test command in a sandbox.

Three paths, best first; `detect_sandbox` picks the first that works on this machine:

- ``bwrap`` (bubblewrap) and ``unshare`` (util-linux): the test sees a read-only system set (/usr,
  /etc, the libraries), the toolchains on its PATH, a private /tmp and /run (no host server's Unix
  socket), and the run directory as the only writable place; own network, pid, mount (and IPC/UTS
  for bwrap) namespaces; credentials and reviewbot's own secrets and state are never bound
  (`hidden_paths`). When reviewbot is root the test runs as an unprivileged uid without capabilities,
  otherwise as the worker's uid, not root, inside a user namespace (`sandbox_argv` has the details).
- ``subprocess``: nothing is confined but the environment, the limits and the time. The network is NOT
  denied and writes outside the run directory are NOT prevented beyond ordinary file permissions;
  processes that leave the process group survive the run.

Only ``bwrap`` and ``unshare`` (`CONFINING_SANDBOXES`) may run code of people other than the user: the
GitHub App allows nothing else. On every path the environment is an allow-list (`sandbox_env`), HOME
and TMPDIR point into the run directory, rlimits (CPU, address space, file size, processes) are set,
and the end of the run (its exit, its timeout, or reviewbot being stopped: `reaper`) kills the process
group. What a report says of the isolation is what `sandbox_probe.verify` saw at run time.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from reviewbot.errors import EnvironmentProblem
from reviewbot.execution import reaper
from reviewbot.execution.sandbox_argv import (
    NOTE_PREFIX,
    PRELUDE_END,
    UNPRIVILEGED,
    bwrap_argv,
    kept_dirs,
    unshare_argv,
    within,
)
from reviewbot.execution.sandbox_env import sandbox_env
from reviewbot.settings import private_paths, sqlite_file

__all__ = [
    "SANDBOXES",
    "CONFINING_SANDBOXES",
    "Limits",
    "RunResult",
    "sandbox_env",
    "hide_from_sandbox",
    "service_paths",
    "hidden_paths",
    "sqlite_file",
    "detect_sandbox",
    "sandbox_argv",
    "run_sandboxed",
]

SANDBOXES = ("bwrap", "unshare", "subprocess")
# The paths that deny the network and confine the file system; the only ones for other people's code.
CONFINING_SANDBOXES = ("bwrap", "unshare")

# Credential files that are masked (bwrap/unshare) when they exist; toolchains under HOME stay visible.
_CREDENTIAL_PATHS = (
    "~/.ssh",
    "~/.aws",
    "~/.docker",
    "~/.kube",
    "~/.gnupg",
    "~/.config/gh",
    "~/.config/gcloud",
    "~/.git-credentials",
    "~/.netrc",
    "~/.pypirc",
    # Inside toolchain prefixes the sandbox keeps (~/.cargo for its bin/): their credential files.
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.gem/credentials",
    "~/.m2/settings.xml",
    "~/.gradle/gradle.properties",
    "~/.config/pip/pip.conf",
    "~/.pip/pip.conf",
    "~/.terraformrc",
    "~/.config/hub",
)

# Applied by a tiny launcher between us and the sandbox: preexec_fn is unsafe with threads, and the
# mutants run in threads. PR_SET_PDEATHSIG (1) with SIGKILL (9): the sandbox dies with the thread that
# started it, even when reviewbot is killed outright (see `reaper`); the parent may already be gone.
_LAUNCHER = (
    "import json,os,resource,sys\n"
    "try:\n"
    "    import ctypes\n"
    "    ctypes.CDLL(None).prctl(1,9,0,0,0)\n"
    "except Exception:\n"
    "    pass\n"
    "if os.getppid()!=int(sys.argv[2]):\n"
    "    os._exit(125)\n"
    "for name,value in json.loads(sys.argv[1]).items():\n"
    "    r=getattr(resource,name)\n"
    "    soft,hard=resource.getrlimit(r)\n"
    "    v=value if hard==resource.RLIM_INFINITY else min(value,hard)\n"
    "    resource.setrlimit(r,(v,v))\n"
    "os.execvp(sys.argv[3],sys.argv[3:])\n"
)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one test run (CPU seconds are per process)."""

    cpu_s: int = 900
    address_space: int = 8 << 30
    file_size: int = 1 << 30
    processes: int = 4096

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_CPU": self.cpu_s,
            "RLIMIT_AS": self.address_space,
            "RLIMIT_FSIZE": self.file_size,
            "RLIMIT_NPROC": self.processes,
        }


@dataclass
class RunResult:
    exit_code: int | None  # None: killed at the timeout
    timed_out: bool
    seconds: float
    output: str  # the last few KiB of stdout+stderr
    sandbox: str
    notes: list[str] = field(default_factory=list)


# Paths this process registered as secret (`hide_from_sandbox`): only ever grows, so a sandbox started
# later can never see what an earlier caller hid.
_REGISTERED: set[Path] = set()


def hide_from_sandbox(paths: Iterable[Path | str | None]) -> None:
    """Hide `paths` (files or directories) from every sandbox this process starts from now on.

    For secrets and state only the caller knows of, e.g. a private key or config file named on the
    command line; the environment's (`service_paths`) are hidden anyway."""
    _REGISTERED.update(Path(p).expanduser() for p in paths if p)


def service_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """reviewbot's own secrets and state as the settings of `env` (default os.environ) place them.

    The App private key, the config file, the state directory (rounds store, queue), the clone cache
    (other repositories), the SQLite files named by the database and queue URLs, and the default
    state and cache directories (`reviewbot.settings.private_paths`, the one reader of the settings)."""
    return private_paths(env)


def hidden_paths(root: Path | None = None) -> list[Path]:
    """The existing paths a sandbox hides: credentials under ~, `service_paths`, registered ones.

    Symlinks are hidden at both ends; paths inside `root` (the run directory) and paths inside
    another hidden directory are left out."""
    candidates = [Path(c).expanduser() for c in _CREDENTIAL_PATHS]
    candidates += service_paths() + sorted(_REGISTERED)
    found: set[Path] = set()
    for p in candidates:
        p = Path(os.path.abspath(p))
        for q in (p, p.resolve()):
            if q.exists() and not (root is not None and within(q, root)):
                found.add(q)
    out: list[Path] = []
    for p in sorted(found, key=lambda q: (len(q.parts), q)):  # parents first
        if not any(within(p, d) for d in out if d.is_dir()):
            out.append(p)
    return out


def _drop() -> tuple[int, int] | None:
    """Who the test runs as when reviewbot is root (never root itself); None when it is not root."""
    if os.geteuid() != 0:
        return None
    return _id("REVIEWBOT_SANDBOX_UID", UNPRIVILEGED[0]), _id("REVIEWBOT_SANDBOX_GID", UNPRIVILEGED[1])


def _id(name: str, default: int) -> int:
    """A user or group id the operator names in `name`: a positive number (0 would run the test as
    root, the very thing dropping privileges is for)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) == 0:
        raise EnvironmentProblem(
            f"{name}={raw}: not a user or group id to run tests as; give a number other than 0"
        )
    return int(raw)


def sandbox_argv(kind: str, command: str, root: Path, workdir: Path) -> list[str]:
    """The argv that runs `command` with `sh -c` in `workdir` inside sandbox `kind`."""
    hidden = hidden_paths(root)
    kept = kept_dirs(os.environ.get("PATH", os.defpath), root, hidden)
    if kind == "bwrap":
        return bwrap_argv(command, root, workdir, kept=kept, hidden=hidden, drop=_drop())
    if kind == "unshare":
        return unshare_argv(command, root, kept, hidden, _drop())
    return ["sh", "-c", command]


def _hand_over(root: Path, owner: tuple[int, int]) -> None:
    """Give the run directory to the unprivileged test user: the only place it may write."""
    os.chown(root, *owner)
    for parent, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            with contextlib.suppress(FileNotFoundError):
                os.chown(os.path.join(parent, name), *owner, follow_symlinks=False)


def _read_output(out: BinaryIO, prelude: bool, limit: int = 4096) -> tuple[str, list[str]]:
    """The last `limit` bytes of the run's output, and the unshare prelude's notes.

    Read from the file reviewbot opened, never by a path: the run directory is the test's, and a
    name there may by now be a link to anything reviewbot can read. The prelude's notes are the lines
    before its end marker (the test's own output comes after it and cannot forge one)."""
    out.seek(0)
    head = out.read(64 << 10).decode("utf-8", "replace")
    notes: dict[str, list[str]] = {}
    start = 0
    if prelude and PRELUDE_END in head:  # only the unshare path has a prelude
        before, _, _ = head.partition(PRELUDE_END)
        start = len(before.encode("utf-8", "replace")) + len(PRELUDE_END) + 1
        for line in before.splitlines():
            if line.startswith(NOTE_PREFIX):
                kind, _, what = line[len(NOTE_PREFIX) :].partition(" ")
                notes.setdefault(kind, []).append(what)
    size = out.seek(0, os.SEEK_END)
    out.seek(max(start, size - limit))
    text = out.read().decode("utf-8", "replace")
    said = {
        "read-only": "could not make read-only: ",
        "private": "could not make private: ",
        "hide": "could not hide: ",
    }
    return text, [said.get(k, f"{k}: ") + ", ".join(v) for k, v in notes.items()]


def run_sandboxed(
    command: str,
    root: Path,
    workdir: Path,
    *,
    timeout: float,
    sandbox: str,
    limits: Limits | None = None,
    env: Mapping[str, str] | None = None,
    allow_env: Iterable[str] = (),
    set_env: Mapping[str, str] | None = None,
) -> RunResult:
    """Run `command` in `workdir` (inside `root`, the only writable place) and wait at most `timeout` s.

    The environment is `env`'s (default os.environ) allow-listed names plus `allow_env` (a repository's
    `[tests] env`), then `set_env` (what reviewbot sets itself): `sandbox_env`."""
    limits = limits or Limits()
    home, tmp = root / "home", root / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    parent_env = os.environ if env is None else env
    child_env = sandbox_env(parent_env, home, tmp, allow=allow_env, set_env=set_env)
    if sandbox == "unshare":
        child_env["REVIEWBOT_WORKDIR"] = str(workdir)  # read and unset by the prelude
    argv = sandbox_argv(sandbox, command, root, workdir)
    drop = _drop()
    if drop is not None and sandbox in CONFINING_SANDBOXES:
        _hand_over(root, drop)
    launcher = [sys.executable, "-I", "-c", _LAUNCHER, json.dumps(limits.rlimits()), str(os.getpid()), *argv]
    started = time.monotonic()
    reaper.check_open()  # reviewbot is stopping: start nothing
    # An unnamed file outside the run directory: nothing the test does can change what is read back.
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            launcher,
            cwd=workdir,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so the timeout can kill all of it
        )
        reaper.register(proc.pid)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # Whatever ended the wait (the command, the timeout, an interrupt or another exception),
            # nothing of the run outlives it: not the command, not what it left in the background.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            reaper.unregister(proc.pid)
        seconds = time.monotonic() - started
        output, notes = _read_output(out, prelude=sandbox == "unshare")
    return RunResult(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        seconds=round(seconds, 3),
        output=output,
        sandbox=sandbox,
        notes=notes,
    )


_DETECTED: dict[tuple[str, ...], str] = {}


def _works(kind: str, probe_root: Path) -> bool:
    if shutil.which(kind) is None:
        return False
    # The probe must show the guarantees, not merely start: no write outside the run directory.
    outside = probe_root.parent / f".{probe_root.name}-outside"
    command = f"touch {shlex.quote(str(outside))} 2>/dev/null && exit 3; exit 0"
    try:
        res = run_sandboxed(command, probe_root, probe_root, timeout=20, sandbox=kind)
    except OSError:
        return False
    finally:
        leaked = outside.exists()
        if leaked:
            outside.unlink()
    return res.exit_code == 0 and not leaked and not res.notes


def detect_sandbox(scratch: Path, candidates: Sequence[str] = SANDBOXES) -> str:
    """The first sandbox kind among `candidates` that works here (probed once per process)."""
    key = tuple(candidates)
    if key in _DETECTED:
        return _DETECTED[key]
    for kind in candidates:
        if kind == "subprocess":
            _DETECTED[key] = kind
            return kind
        probe = scratch / f"probe-{kind}"
        probe.mkdir(parents=True, exist_ok=True)
        try:
            if _works(kind, probe):
                _DETECTED[key] = kind
                return kind
        finally:
            shutil.rmtree(probe, ignore_errors=True)
    _DETECTED[key] = "subprocess"
    return "subprocess"
