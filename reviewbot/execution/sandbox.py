"""Run a repository's test command in a sandbox.

Three paths, best first; `detect_sandbox` picks the first that works on this machine:

- ``bwrap`` (bubblewrap): own network namespace (no network at all, not even the host's loopback), the
  whole file system read-only except the run directory, a private /dev and /proc, own pid namespace
  (everything dies with the sandbox). Credentials and reviewbot's own secrets and state are hidden
  (`hidden_paths`).
- ``unshare`` (util-linux, an unprivileged user namespace): own network namespace, every mount remounted
  read-only except the run directory (mounts that refuse are listed in `RunResult.notes`), own pid
  namespace, the same paths hidden. /proc and /dev stay as they are.
- ``subprocess``: nothing is confined but the environment, the limits and the time. The network is NOT
  denied and writes outside the run directory are NOT prevented beyond ordinary file permissions;
  processes that leave the process group survive the run.

Only ``bwrap`` and ``unshare`` (`CONFINING_SANDBOXES`) may run code of people other than the user: the
GitHub App allows nothing else. On every path: the environment is scrubbed (`scrub_env`), HOME and TMPDIR point into the run directory,
rlimits (CPU, address space, file size, processes) are set, and the end of the run (its exit, its timeout,
or reviewbot being stopped: `reaper`) kills the process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewbot.execution import reaper
from reviewbot.settings import private_paths, sqlite_file

__all__ = [
    "SANDBOXES",
    "CONFINING_SANDBOXES",
    "ISOLATION",
    "Limits",
    "RunResult",
    "scrub_env",
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

# What each path guarantees, said in the report next to the results.
ISOLATION: dict[str, dict[str, str]] = {
    "bwrap": {
        "network": "denied (own network namespace)",
        "filesystem": "read-only except the run directory; credentials and reviewbot's key, config, "
        "state and clone cache hidden",
        "environment": "scrubbed",
        "processes": "own pid namespace, killed with the sandbox",
    },
    "unshare": {
        "network": "denied (own network namespace)",
        "filesystem": "read-only except the run directory (/proc and /dev not confined); credentials "
        "and reviewbot's key, config, state and clone cache hidden",
        "environment": "scrubbed",
        "processes": "own pid namespace, killed with the sandbox",
    },
    "subprocess": {
        "network": "NOT denied (no namespace available)",
        "filesystem": "NOT confined beyond file permissions",
        "environment": "scrubbed",
        "processes": "process group killed when the run ends, times out or is interrupted; "
        "processes that leave the group survive",
    },
}

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
)

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|(^|_)KEY($|_)|APIKEY|AUTH|COOKIE|SESSION"
    r"|^REVIEWBOT_|^GITHUB_|^GH_|^AWS_|^AZURE_|^GOOGLE_|^DATABASE_URL$|^REDIS_URL$|^SSH_",
    re.IGNORECASE,
)
_URL_WITH_PASSWORD = re.compile(r"://[^/@\s:]+:[^/@\s]+@")

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


def scrub_env(env: Mapping[str, str], home: Path, tmp: Path) -> dict[str, str]:
    """The parent environment without credentials; HOME and TMPDIR inside the run directory."""
    out = {k: v for k, v in env.items() if not _SECRET_NAME.search(k) and not _URL_WITH_PASSWORD.search(v)}
    out.update({"HOME": str(home), "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp)})
    out.setdefault("PATH", os.defpath)
    return out


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


def _within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


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
            if q.exists() and not (root is not None and _within(q, root)):
                found.add(q)
    out: list[Path] = []
    for p in sorted(found, key=lambda q: (len(q.parts), q)):  # parents first
        if not any(_within(p, d) for d in out if d.is_dir()):
            out.append(p)
    return out


def _mountinfo() -> list[tuple[str, str]]:
    """(mount point, per-mount options) of this process's mounts."""
    out = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        parts = line.split(" ")
        if len(parts) > 5:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4])
            out.append((point, parts[5]))
    return out


_KEEP_FLAGS = {"nosuid", "nodev", "noexec", "relatime", "noatime", "strictatime", "nodiratime"}


def _unshare_prelude(root: Path) -> str:
    """Shell run inside the new namespaces: keep `root` writable, every other mount read-only."""
    lines = [f"mount --bind {shlex.quote(str(root))} {shlex.quote(str(root))} || exit 97"]
    failures = shlex.quote(str(root / ".sandbox-mount-failures"))
    for point, opts in _mountinfo():
        if point == "/proc" or point.startswith(("/proc/", "/dev/pts")) or point == "/dev":
            continue
        if point == str(root) or point.startswith(str(root) + "/"):
            continue
        keep = ",".join(o for o in opts.split(",") if o in _KEEP_FLAGS)
        flags = "remount,bind,ro" + (f",{keep}" if keep else "")
        q = shlex.quote(point)
        lines.append(f"mount -o {flags} {q} 2>/dev/null || echo {q} >> {failures}")
    hide_failures = shlex.quote(str(root / ".sandbox-hide-failures"))
    for secret in hidden_paths(root):
        q = shlex.quote(str(secret))
        if _within(root, secret):  # a tmpfs here would hide the run directory too
            lines.append(f"echo {q} >> {hide_failures}")
            continue
        how = f"mount -t tmpfs -o ro,size=0 none {q}" if secret.is_dir() else f"mount --bind /dev/null {q}"
        lines.append(f"{how} 2>/dev/null || echo {q} >> {hide_failures}")
    lines.append('cd "$REVIEWBOT_WORKDIR" || exit 97')
    lines.append('unset REVIEWBOT_WORKDIR; exec sh -c "$1"')
    return "\n".join(lines)


def sandbox_argv(kind: str, command: str, root: Path, workdir: Path) -> list[str]:
    """The argv that runs `command` with `sh -c` in `workdir` inside sandbox `kind`."""
    if kind == "bwrap":
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        secrets = hidden_paths(root)
        for secret in secrets:
            hide = ["--tmpfs", str(secret)] if secret.is_dir() else ["--ro-bind", "/dev/null", str(secret)]
            argv += hide
        # After the hiding, so that the run directory stays visible even inside a hidden directory.
        argv += ["--bind", str(root), str(root)]
        for secret in secrets:
            # bwrap's tmpfs is writable; read-only keeps "writable: the run directory only" true.
            if secret.is_dir() and not _within(root, secret):
                argv += ["--remount-ro", str(secret)]
        argv += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        argv += ["--die-with-parent", "--new-session", "--chdir", str(workdir)]
        return [*argv, "sh", "-c", command]
    if kind == "unshare":
        ns = [
            "--user",
            "--map-root-user",
            "--net",
            "--mount",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
        ]
        return ["unshare", *ns, "sh", "-c", _unshare_prelude(root), "sandbox", command]
    return ["sh", "-c", command]


def _tail(path: Path, limit: int = 4096) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_sandboxed(
    command: str,
    root: Path,
    workdir: Path,
    *,
    timeout: float,
    sandbox: str,
    limits: Limits | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Run `command` in `workdir` (inside `root`, the only writable place) and wait at most `timeout` s."""
    limits = limits or Limits()
    home, tmp = root / "home", root / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    child_env = scrub_env(os.environ if env is None else env, home, tmp)
    if sandbox == "unshare":
        child_env["REVIEWBOT_WORKDIR"] = str(workdir)  # read and unset by the prelude
    argv = sandbox_argv(sandbox, command, root, workdir)
    launcher = [sys.executable, "-I", "-c", _LAUNCHER, json.dumps(limits.rlimits()), str(os.getpid()), *argv]
    log = root / f"output-{time.monotonic_ns()}.log"
    started = time.monotonic()
    reaper.check_open()  # reviewbot is stopping: start nothing
    with log.open("wb") as out:
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
    notes = []
    failures = root / ".sandbox-mount-failures"
    if failures.exists():
        notes.append("could not make read-only: " + ", ".join(failures.read_text().split()))
    hide_failures = root / ".sandbox-hide-failures"
    if hide_failures.exists():
        notes.append("could not hide: " + ", ".join(hide_failures.read_text().split()))
    return RunResult(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        seconds=round(seconds, 3),
        output=_tail(log),
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
