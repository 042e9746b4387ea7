"""Run a repository's test command in a sandbox.

Three paths, best first; `detect_sandbox` picks the first that works on this machine:

- ``bwrap`` (bubblewrap): own network namespace (no network at all, not even the host's loopback), the
  whole file system read-only except the run directory, a private /dev and /proc, own pid namespace
  (everything dies with the sandbox).
- ``unshare`` (util-linux, an unprivileged user namespace): own network namespace, every mount remounted
  read-only except the run directory (mounts that refuse are listed in `RunResult.notes`), own pid
  namespace. /proc and /dev stay as they are.
- ``subprocess``: nothing is confined but the environment, the limits and the time. The network is NOT
  denied and writes outside the run directory are NOT prevented beyond ordinary file permissions;
  processes that leave the process group survive the timeout.

On every path: the environment is scrubbed (`scrub_env`), HOME and TMPDIR point into the run directory,
rlimits (CPU, address space, file size, processes) are set, and the timeout kills the process group.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SANDBOXES",
    "ISOLATION",
    "Limits",
    "RunResult",
    "scrub_env",
    "detect_sandbox",
    "sandbox_argv",
    "run_sandboxed",
]

SANDBOXES = ("bwrap", "unshare", "subprocess")

# What each path guarantees, said in the report next to the results.
ISOLATION: dict[str, dict[str, str]] = {
    "bwrap": {
        "network": "denied (own network namespace)",
        "filesystem": "read-only except the run directory",
        "environment": "scrubbed",
        "processes": "own pid namespace, killed with the sandbox",
    },
    "unshare": {
        "network": "denied (own network namespace)",
        "filesystem": "read-only except the run directory (/proc and /dev not confined)",
        "environment": "scrubbed",
        "processes": "own pid namespace, killed with the sandbox",
    },
    "subprocess": {
        "network": "NOT denied (no namespace available)",
        "filesystem": "NOT confined beyond file permissions",
        "environment": "scrubbed",
        "processes": "process group killed at the timeout; detached processes survive",
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
# mutants run in threads.
_LAUNCHER = (
    "import json,os,resource,sys\n"
    "for name,value in json.loads(sys.argv[1]).items():\n"
    "    r=getattr(resource,name)\n"
    "    soft,hard=resource.getrlimit(r)\n"
    "    v=value if hard==resource.RLIM_INFINITY else min(value,hard)\n"
    "    resource.setrlimit(r,(v,v))\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n"
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


def _existing_credentials() -> list[Path]:
    return [p for p in (Path(c).expanduser() for c in _CREDENTIAL_PATHS) if p.exists()]


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
    for cred in _existing_credentials():
        q = shlex.quote(str(cred))
        how = f"mount -t tmpfs -o ro,size=0 none {q}" if cred.is_dir() else f"mount --bind /dev/null {q}"
        lines.append(f"{how} 2>/dev/null || echo {q} >> {failures}")
    lines.append('cd "$REVIEWBOT_WORKDIR" || exit 97')
    lines.append('unset REVIEWBOT_WORKDIR; exec sh -c "$1"')
    return "\n".join(lines)


def sandbox_argv(kind: str, command: str, root: Path, workdir: Path) -> list[str]:
    """The argv that runs `command` with `sh -c` in `workdir` inside sandbox `kind`."""
    if kind == "bwrap":
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for cred in _existing_credentials():
            argv += ["--tmpfs", str(cred)] if cred.is_dir() else ["--ro-bind", "/dev/null", str(cred)]
        argv += ["--bind", str(root), str(root)]
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
    launcher = [sys.executable, "-I", "-c", _LAUNCHER, json.dumps(limits.rlimits()), *argv]
    log = root / f"output-{time.monotonic_ns()}.log"
    started = time.monotonic()
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
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    seconds = time.monotonic() - started
    notes = []
    failures = root / ".sandbox-mount-failures"
    if failures.exists():
        notes.append("could not make read-only: " + ", ".join(failures.read_text().split()))
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
