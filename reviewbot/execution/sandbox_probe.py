"""What the sandbox holds, seen from inside at run time: the report's isolation lines.

    verify("bwrap", scratch, limits)  # {"user": "uid 65534, not root ...", "network": ..., ...}

A sandbox's promise is only as good as the host it runs on (a kernel without user namespaces, a
container that refuses a mount, a server that keeps its socket somewhere new), so the report does not
repeat what the code intends: once per process and sandbox kind a probe runs inside the sandbox and
tries what a hostile test would. Its findings, checked from outside too (who owns the file it wrote,
whether its write outside landed), are the lines the report shows; a line that starts with `NOT` is a
guarantee that did not hold.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import tempfile
from pathlib import Path

from reviewbot.execution.sandbox import Limits, hidden_paths, run_sandboxed
from reviewbot.execution.sandbox_env import ALLOWED

__all__ = ["host_unix_sockets", "verify"]

_MAX_SOCKETS = 64
_SET_BY_US = {"HOME", "TMPDIR", "TMP", "TEMP", "PWD", "OLDPWD", "SHLVL", "_"}
_CACHE: dict[tuple[str, tuple[Path, ...]], dict[str, str]] = {}


def host_unix_sockets(limit: int = _MAX_SOCKETS) -> list[str]:
    """Paths of the Unix sockets bound on this host (its network namespace), as /proc/net/unix lists."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return []
    paths = sorted(
        {line.split()[-1] for line in lines if len(line.split()) >= 8 and line.split()[-1][0] == "/"}
    )
    return paths[:limit]


def _script(port: int, sockets: list[str], outside: list[Path], read_shadow: bool, hidden: list[Path]) -> str:
    q = shlex.quote
    lines = [
        'echo "uid=$(id -u)"',
        "sed -n 's/^CapEff:[[:space:]]*/caps=/p' /proc/self/status",
        "echo probe > owned",
        # env, not /proc/self/environ: a process that changed its uid may not read its own.
        "env | grep -E '^[A-Za-z_][A-Za-z0-9_]*=' | cut -d= -f1 | sed 's/^/env=/'",
        f"grep -qi ':{port:04X} ' /proc/net/tcp /proc/net/tcp6 2>/dev/null && echo tcp=seen",
        "echo \"procs=$(ls /proc | grep -c '^[0-9]')\"",
        # Whether a write landed is checked from outside: a private /tmp or /var takes writes that vanish.
        *(f"touch {q(str(p))} 2>/dev/null" for p in outside),
        "grep -E '^Max (processes|address space)' /proc/self/limits | tr -s ' ' | sed 's/^/limit=/'",
    ]
    for path in sockets:
        lines.append(f"[ -e {q(path)} ] && echo sock={q(path)}")
    if read_shadow:
        lines.append("cat /etc/shadow >/dev/null 2>&1 && echo shadow=read")
    for secret in hidden:  # masked is fine (an empty directory, /dev/null); content is not
        h = q(str(secret))
        lines.append(f'[ -d {h} ] && [ -n "$(ls -A {h} 2>/dev/null)" ] && echo seen={h}')
        lines.append(f"[ -f {h} ] && [ -s {h} ] && echo seen={h}")
    lines.append("exit 0")
    return "\n".join(lines)


def _limit(line: str) -> str:
    """`Max processes 4096 4096 processes` -> `processes <= 4096` (the soft limit, the one that acts)."""
    words = line.split()
    what = " ".join(words[1:-3])
    soft = words[-3]
    if soft.isdigit() and words[-1] == "bytes":
        soft = f"{int(soft) / (1 << 30):g} GiB"
    return f"{what} <= {soft}"


def _lines(
    kind: str,
    out: dict[str, list[str]],
    owner: int | None,
    landed: list[Path],
    n_sockets: int,
    n_checked: int,
    n_hidden: int,
) -> dict[str, str]:
    result: dict[str, str] = {}
    result["user"] = _user_line(out, owner)
    result["network"] = (
        "NOT denied: the host's loopback is visible"
        if "tcp" in out
        else "denied (own network namespace: the host's loopback listener was not visible)"
    )
    seen = out.get("sock", [])
    tried = f" (the first {n_checked} tried)" if n_checked < n_sockets else ""
    result["sockets"] = (
        f"NOT hidden: {len(seen)} of the host's Unix sockets reachable ({', '.join(seen[:3])})"
        if seen
        else f"none of the host's {n_sockets} Unix socket path(s) reachable{tried}"
    )
    result["filesystem"] = _filesystem_line(out, landed, n_hidden)
    result["environment"] = _environment_line(out)
    limits = ", ".join(_limit(line) for line in out.get("limit", []))
    binding = (
        "rlimits bind (not root)" if owner not in (0, None) else "NOT binding: root ignores RLIMIT_NPROC"
    )
    result["limits"] = f"{limits or 'rlimits not visible'}; {binding}; cgroup limits not used"
    procs = out.get("procs", ["?"])[0]
    result["processes"] = (
        f"own pid namespace ({procs} processes visible), killed with the sandbox"
        if kind != "subprocess"
        else "NOT isolated: process group killed when the run ends; processes that leave it survive"
    )
    return result


def _user_line(out: dict[str, list[str]], owner: int | None) -> str:
    """Whether the test ran unprivileged: not root, /etc/shadow unreadable, no capabilities."""
    uid = out.get("uid", ["?"])[0]
    if owner == 0 or uid == "0" and owner is None:
        return "NOT unprivileged: the test ran as root"
    if "shadow" in out:
        return f"NOT unprivileged: uid {owner} read /etc/shadow"
    if out.get("caps", ["?"])[0].strip("0"):
        return f"NOT without privileges: uid {owner} held capabilities {out.get('caps', ['?'])[0]}"
    how = "" if os.geteuid() == 0 else "; the worker's own uid, in a user namespace"
    return f"uid {owner} on the host, {uid} inside, not root, no capabilities{how}"


def _filesystem_line(out: dict[str, list[str]], landed: list[Path], n_hidden: int) -> str:
    """Whether writes outside the run directory reached the host and secrets could be read."""
    shown = out.get("seen", [])
    if landed or shown:
        wrote = f"wrote {', '.join(str(p) for p in landed)} on the host" if landed else ""
        saw = f"read {', '.join(shown[:3])}" if shown else ""
        return "NOT confined: " + "; ".join(x for x in (wrote, saw) if x)
    return (
        "writes outside the run directory did not reach the host (/etc, /usr, /var, its temp "
        f"directory); {n_hidden} secret or state path(s) of reviewbot empty or absent"
    )


def _environment_line(out: dict[str, list[str]]) -> str:
    """The environment variables the test saw (beyond those we set), and which were asked for."""
    names = sorted(set(out.get("env", [])) - _SET_BY_US)
    extra = [n for n in names if n not in ALLOWED and not n.startswith("LC_")]
    line = f"allow-list: {', '.join(names) or 'nothing'} (+ HOME, TMPDIR in the run directory)"
    if extra:
        line += f"; asked for by reviewbot or the repository: {', '.join(extra)}"
    return line


def verify(kind: str, scratch: Path | None = None, limits: Limits | None = None) -> dict[str, str]:
    """Run the probe in sandbox `kind` (once per process and set of hidden paths) and say what held."""
    key = (kind, tuple(hidden_paths()))
    if key in _CACHE:
        return dict(_CACHE[key])
    scratch = scratch or Path(tempfile.gettempdir())
    scratch.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="probe-", dir=scratch))
    name = f".reviewbot-probe-{os.getpid()}-{kind}"
    outside = [Path(d) / name for d in ("/etc", "/usr", "/var", tempfile.gettempdir(), scratch)]
    every = host_unix_sockets(limit=1 << 20)
    sockets = every[:_MAX_SOCKETS]
    hidden = hidden_paths(root)
    srv = socket.socket()
    try:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        script = _script(srv.getsockname()[1], sockets, outside, os.geteuid() == 0, hidden)
        res = run_sandboxed(script, root, root, timeout=30, sandbox=kind, limits=limits)
    finally:
        srv.close()
    out: dict[str, list[str]] = {}
    for line in res.output.splitlines():
        name, sep, value = line.partition("=")
        if sep:
            out.setdefault(name, []).append(value)
    owner = None
    with contextlib.suppress(OSError):
        owner = (root / "owned").stat().st_uid
    landed = [p for p in outside if p.exists()]
    for p in landed:
        with contextlib.suppress(OSError):
            p.unlink()
    shutil.rmtree(root, ignore_errors=True)
    result = _lines(kind, out, owner, landed, len(every), len(sockets), len(hidden))
    if res.exit_code != 0:
        result["probe"] = f"NOT verified: the probe exited {res.exit_code}"
    _CACHE[key] = result
    return dict(result)
