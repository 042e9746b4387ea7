"""The command lines of the two confining sandboxes: what the test process sees and who it runs as.

Both show the test a read-only **system set** (`SYSTEM_SET`: /usr, /etc, the libraries), the
toolchains its command finds on PATH (`kept_dirs`: a venv under /tmp, pyenv under /root), and the run
directory as the only writable place; nothing else of the host's: bwrap builds a new root of just
those, unshare lays an empty private file system over every other top-level directory (/tmp, /run,
/var, /home, /root, /srv, ...). So no Unix socket of a host server is reachable unless it lives inside
the system set, and the network namespace takes abstract sockets and loopback away.

Who runs the test: when reviewbot is root, the test drops to `UNPRIVILEGED` (uid/gid 65534 by default)
with no capabilities and no-new-privs (`setpriv`), so file permissions, /etc/shadow's included, and
RLIMIT_NPROC bind. Otherwise it runs as the worker's own uid in a user namespace; in the `unshare` path
a nested user namespace takes away the capabilities the set-up used, so the test cannot unmount what
hides a secret.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "NOTE_PREFIX",
    "PRELUDE_END",
    "SYSTEM_SET",
    "UNPRIVILEGED",
    "bwrap_argv",
    "drop_argv",
    "kept_dirs",
    "unshare_argv",
    "within",
]

SYSTEM_SET = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# nobody/nogroup on Debian and most images; REVIEWBOT_SANDBOX_UID / _GID name another.
UNPRIVILEGED = (65534, 65534)


def within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _toolchain_root(entry: Path, homes: set[Path]) -> Path:
    """The prefix a PATH entry belongs to: `/opt/venv` for `/opt/venv/bin`, pyenv's root for its shims
    (they run `<root>/versions/...`); the entry itself when its parent is a home or the root."""
    parent = entry.parent
    if entry.name in ("bin", "sbin", "shims") and parent not in homes and len(parent.parts) > 1:
        return parent
    return entry


def kept_dirs(path_env: str, root: Path, hidden: Iterable[Path], prefixes: Sequence[str] = ()) -> list[Path]:
    """Toolchain directories outside the system set that the test command needs: PATH's and Python's.

    Each PATH entry outside `SYSTEM_SET` gives its prefix (`.../bin` -> `...`); reviewbot's own Python
    prefixes too (a test suite calls `sys.executable`). Nothing inside the run directory (it is bound
    anyway) or inside a hidden directory, and never a whole home directory."""
    homes = {Path("/root"), Path("/home"), Path(os.path.expanduser("~")), Path("/")}
    hidden = [Path(h) for h in hidden]
    tops: set[Path] = set()
    for raw in path_env.split(os.pathsep):
        if raw.startswith("/"):
            for p in {Path(raw), Path(raw).resolve()}:
                tops.add(_toolchain_root(p, homes))
    tops.update(Path(p).resolve() for p in (*prefixes, sys.prefix, sys.base_prefix, sys.exec_prefix) if p)
    found = set()
    for top in tops:
        if not top.is_dir() or top in homes or any(within(top, Path(s)) for s in SYSTEM_SET):
            continue
        # A prefix inside a hidden directory stays out; a secret inside a prefix is masked where the
        # prefix is mounted (bwrap_argv, unshare_prelude), so ~/.cargo keeps its bin/ and not its token.
        if within(top, root) or within(root, top) or any(within(top, h) for h in hidden):
            continue
        found.add(top)
    out: list[Path] = []
    for p in sorted(found, key=lambda q: (len(q.parts), q)):
        if not any(within(p, q) for q in out):
            out.append(p)
    return out


def drop_argv(uid: int, gid: int) -> list[str]:
    """Become `uid`/`gid` with no capabilities left, none to regain (no-new-privs, empty bounding set)."""
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def _bound(path: Path, binds: Iterable[Path]) -> bool:
    return any(within(path, b) for b in binds)


def bwrap_argv(
    command: str,
    root: Path,
    workdir: Path,
    *,
    kept: Sequence[Path],
    hidden: Sequence[Path],
    drop: tuple[int, int] | None,
) -> list[str]:
    """bubblewrap: a new root holding the system set, `kept`, private /tmp and /run, and `root`."""
    argv = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if drop is None:
        argv.append("--unshare-user")  # unprivileged: the user namespace is how bwrap mounts at all
    else:
        # bwrap started by root keeps every capability; keep only what setpriv needs to drop them all.
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        argv += ["--cap-add", "CAP_SETPCAP"]
    binds: list[Path] = []
    for top in SYSTEM_SET:
        p = Path(top)
        if p.is_symlink():
            argv += ["--symlink", os.readlink(p), top]
        elif p.is_dir():
            argv += ["--ro-bind", top, top]
            binds.append(p)
    argv += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    argv += ["--perms", "1777", "--tmpfs", "/var/tmp"]
    argv += ["--symlink", "../run", "/var/run"]
    made: set[Path] = {Path("/tmp"), Path("/run"), Path("/var/tmp")}
    for d, how in [*((k, "--ro-bind") for k in kept), (root, "--bind")]:
        # bwrap makes missing parents with the source's mode: /root or a mkdtemp directory would stay
        # 0700, closed to the test user.
        for parent in reversed(d.parents):
            if parent != Path("/") and parent not in made and not _bound(parent, binds):
                argv += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        argv += [how, str(d), str(d)]
        binds.append(d)
    for secret in hidden:
        if not _bound(secret, binds) or within(root, secret):
            continue
        if secret.is_dir():
            argv += ["--tmpfs", str(secret), "--remount-ro", str(secret)]
        else:
            argv += ["--ro-bind", "/dev/null", str(secret)]
    argv += ["--die-with-parent", "--new-session"]
    if drop is None:
        return [*argv, "--chdir", str(workdir), "sh", "-c", command]
    # Root without capabilities may not enter a directory the test user owns: change to it as that user.
    enter = 'cd "$1" || exit 97; exec sh -c "$2"'
    return [*argv, *drop_argv(*drop), "sh", "-c", enter, "sandbox", str(workdir), command]


_KEEP_FLAGS = {"nosuid", "nodev", "noexec", "relatime", "noatime", "strictatime", "nodiratime"}


def _mountinfo() -> list[tuple[str, str]]:
    """(mount point, per-mount options) of this process's mounts."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split(" ")
        if len(parts) > 5:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[4])
            out.append((point, parts[5]))
    return out


def _stage_dir() -> str:
    """An existing directory to mount a staging tmpfs on (covered for the set-up, then uncovered)."""
    for d in ("/mnt", "/media", "/srv", "/boot"):
        if Path(d).is_dir() and not Path(d).is_symlink():
            return d
    return "/mnt"


# The prelude's own notes go to the output before this line; the test's output comes after it, so a
# test cannot forge a note (reviewbot reads notes only before the first marker).
PRELUDE_END = "reviewbot-sandbox: prelude done"
NOTE_PREFIX = "reviewbot-sandbox: "


def _covers(stage: str) -> list[str]:
    """Every top-level directory outside the system set (where a host server may keep a socket or a
    checkout of another pull request may lie), and /dev/shm: each gets an empty private file system."""
    out = []
    for entry in sorted(Path("/").iterdir()):
        top = str(entry)
        if entry.is_symlink() or not entry.is_dir() or top in SYSTEM_SET or top == stage:
            continue
        if top in ("/proc", "/dev", "/sys"):
            continue
        out.append(top)
    return [*out, "/dev/shm"] if Path("/dev/shm").is_dir() else out


def unshare_prelude(root: Path, kept: Sequence[Path], hidden: Sequence[Path], uid: int, gid: int) -> str:
    """Shell run as the namespace's root: the view of `bwrap_argv` built on the host's mounts, then
    the privileges go.

    Everything is remounted read-only; every top-level directory outside the system set (/tmp, /run,
    /var, /home, /root, /srv, ...) gets an empty private file system; the run directory and `kept`,
    bound into a staging tmpfs first, are moved back in place. What fails is said on the output
    before `PRELUDE_END` (read by `run_sandboxed`)."""
    q = shlex.quote
    stage = _stage_dir()

    def note(kind: str, what: str) -> str:
        return f"echo {q(NOTE_PREFIX + kind + ' ' + what)} >&2"

    lines = ["set -u", f"mount -t tmpfs -o mode=700 none {stage} || exit 97"]
    keep = [root, *kept]
    for i, d in enumerate(keep):
        lines.append(f"mkdir {stage}/{i} && mount --rbind {q(str(d))} {stage}/{i} || exit 97")
    for point, opts in _mountinfo():  # everything read-only before the private file systems go on top
        if point in ("/proc", "/dev") or point.startswith(("/proc/", "/dev/")) or point == stage:
            continue
        if point.startswith(f"{stage}/"):
            continue
        flags = ",".join(["remount,bind,ro", *(o for o in opts.split(",") if o in _KEEP_FLAGS)])
        lines.append(f"mount -o {flags} {q(point)} 2>/dev/null || {note('read-only', point)}")
    covers = _covers(stage)
    for c in covers:
        mode = "1777" if c in ("/tmp", "/dev/shm") else "755"
        lines.append(f"mount -t tmpfs -o mode={mode},size=64m none {q(c)} || {note('private', c)}")
    if "/var" in covers:  # what programs expect under /var: a temp directory and the /run link
        lines.append("mkdir -m 1777 /var/tmp; ln -s ../run /var/run")
    for entry in sorted(Path("/").iterdir()):  # top-level files (a container's info file)
        if entry.is_file() and not entry.is_symlink():
            lines.append(
                f"mount --bind /dev/null {q(str(entry))} 2>/dev/null || {note('private', str(entry))}"
            )
    for i, d in reversed(list(enumerate(keep))):
        lines.append(f"mkdir -p {q(str(d))} 2>/dev/null; mount --move {stage}/{i} {q(str(d))} || exit 97")
    lines.append(f"umount -l {stage} && mount -t tmpfs -o ro,size=0 none {stage} || {note('private', stage)}")
    for secret in hidden:
        if any(within(secret, Path(c)) for c in covers) and not any(within(secret, d) for d in keep):
            continue  # gone with a private file system
        if within(root, secret):  # a tmpfs here would hide the run directory too
            lines.append(note("hide", str(secret)))
            continue
        if secret.is_dir():
            how = f"mount -t tmpfs -o ro,size=0 none {q(str(secret))}"
        else:
            how = f"mount --bind /dev/null {q(str(secret))}"
        lines.append(f"{how} 2>/dev/null || {note('hide', str(secret))}")
    lines.append(f"echo {q(PRELUDE_END)} >&2")
    lines.append('cd "$REVIEWBOT_WORKDIR" || exit 97')
    if os.geteuid() == 0:
        become = drop_argv(uid, gid)
    else:
        # A nested user namespace: the test is not root and holds no capability over the mounts above.
        become = ["unshare", "--user", f"--map-user={uid}", f"--map-group={gid}", "--"]
    # Not exec: this shell is the pid namespace's first process and keeps unshare's parent-death
    # signal, which a change of credentials would clear; when it dies the kernel ends the namespace.
    lines.append("unset REVIEWBOT_WORKDIR; " + shlex.join(become) + ' sh -c "$1"; exit $?')
    return "\n".join(lines)


def unshare_argv(
    command: str, root: Path, kept: Sequence[Path], hidden: Sequence[Path], drop: tuple[int, int] | None
) -> list[str]:
    """util-linux unshare: new mount, pid and network namespaces (and a user namespace unless root)."""
    ns = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"]
    if drop is None:
        ns = ["--user", "--map-root-user", *ns]
        uid, gid = os.getuid(), os.getgid()
    else:
        uid, gid = drop
    return ["unshare", *ns, "sh", "-c", unshare_prelude(root, kept, hidden, uid, gid), "sandbox", command]
