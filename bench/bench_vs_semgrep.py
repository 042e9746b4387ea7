"""Benchmark: reviewbot against semgrep on one change, alternately, and the issue's targets.

    python3 bench/bench_review.py --vs-semgrep                      # the bundled example
    python3 bench/bench_review.py --vs-semgrep --repo /work/.mirror/alibaba+rtp-llm/repo \\
        --base 88fcfacd6^ --head 88fcfacd6                          # a real checkout or bare git dir
    python3 bench/bench_vs_semgrep.py ...                           # the same, without bench_review

Each round runs, in this order and each as its own process: reviewbot cold (an empty
REVIEWBOT_CACHE_DIR of its own), reviewbot warm (a cache directory primed by one untimed run; only when
`reviewbot run --help` offers `--no-cache`, else "n/a"), semgrep with one pattern rule on the changed
files, and semgrep with the same rule over the whole tree. `--runs` rounds (5) follow one untimed
warm-up round (the OS page cache is warm for every tool); the medians are printed with the ratios and
the issue's targets (PASS/MISS).

reviewbot is `reviewbot run --path REPO --base BASE --head HEAD --no-tests --format json`, as committed at
`--at REV` (default HEAD, exported once under ~/.cache/reviewbot-bench/, so edits in progress in the work
tree cannot change a measurement; `--at worktree` runs this work tree). semgrep reads files, not git:
it scans a temporary work tree of HEAD made from the git directory (blobs absent from a partial mirror are
skipped and counted). semgrep runs offline: a local rule file, `--metrics=off`, `--disable-version-check`;
it is installed with pip into its own venv (~/.cache/reviewbot-bench/semgrep-venv, or
$REVIEWBOT_BENCH_SEMGREP_VENV) when missing, and the semgrep columns are skipped with one line when that
fails. The rule is `$X.<name>` on a member the change assigns (else one it reads, else its longest
identifier), languages C++ and Python (reviewbot's); `--pattern` overrides it. semgrep's own default
ignores apply (it skips test/ and tests/ directories, as a user running it would see).

Figures per run: wall seconds; CPU seconds (user + system of the process and the children it waited for);
peak RSS of the process tree (the largest sum of VmRSS over the process and its descendants, sampled
every 10 ms from /proc: pages shared after fork count once per process, so it overstates a pool) and of
the largest single process (ru_maxrss).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _p in (str(ROOT), str(BENCH)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from accuracy import _CLI, WORKTREE, byte_compile, reviewbot_at  # noqa: E402

CACHE = Path.home() / ".cache" / "reviewbot-bench"
SEMGREP_VENV_ENV = "REVIEWBOT_BENCH_SEMGREP_VENV"
LANGUAGES = ("cpp", "python")  # the languages reviewbot reads
SAMPLE_SECONDS = 0.01
MIB = 1024 * 1024

# The targets (issue 14), on a seed-sized PR of the real 7.6k-file tree.
WARM_VS_SINGLE = 0.5  # warm cache <= 0.5 x semgrep's one-rule time on the changed files
COLD_VS_TREE = 1.0  # cold <= 1 x semgrep's one-rule time over the whole tree
RSS_LIMIT_MIB = 128.0

REVIEWBOT_COLD = "reviewbot cold"
REVIEWBOT_WARM = "reviewbot warm"
SEMGREP_FILES = "semgrep changed files"
SEMGREP_TREE = "semgrep whole tree"

_EXT_LANG = {".py": "python", ".pyi": "python"}
_EXT_LANG.update(dict.fromkeys((".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl"), "cpp"))
# fmt: off
_CPP_KEYWORDS = {
    "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr", "continue",
    "default", "delete", "double", "else", "enum", "explicit", "extern", "false", "final", "float",
    "for", "if", "inline", "int", "long", "namespace", "new", "nullptr", "override", "private",
    "protected", "public", "return", "self", "short", "signed", "size_t", "static", "struct", "switch",
    "template", "this", "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "while",
}
# fmt: on
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(_CPP_KEYWORDS)
_ASSIGNED_MEMBER = re.compile(r"(?:\.|->)([A-Za-z_]\w*)\s*(?:[-+*/|&^]?=)(?!=)")
_READ_MEMBER = re.compile(r"(?:\.|->)([A-Za-z_]\w*)\b(?!\s*\()")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


# --- pure parts: the rule, medians, verdicts ------------------------------------------------------


def added_code_lines(diff: str) -> list[str]:
    """The added lines of a unified diff, comment-only lines left out."""
    out = []
    for line in diff.splitlines():
        if not line.startswith("+") or line.startswith("+++"):
            continue
        code = line[1:].strip()
        if code and not code.startswith(("//", "#", "/*", "*")):
            out.append(code)
    return out


def pick_identifier(lines: Sequence[str]) -> tuple[str, str, bool] | None:
    """(name, why, is_member) for the rule: a member the change assigns, else one it reads, else its
    longest identifier that is not a keyword; None when the lines have no identifier."""
    for regex, why in (
        (_ASSIGNED_MEMBER, "a member the change assigns"),
        (_READ_MEMBER, "a member it reads"),
    ):
        for line in lines:
            for name in regex.findall(line):
                if name not in _KEYWORDS and len(name) > 2:
                    return name, why, True
    names = [n for line in lines for n in _IDENT.findall(line) if n not in _KEYWORDS and not n.isdigit()]
    if not names:
        return None
    return max(names, key=len), "the change's longest identifier", False


def rule_yaml(pattern: str, languages: Sequence[str] = LANGUAGES) -> str:
    """One semgrep rule (a local file: no registry)."""
    return (
        "rules:\n"
        "  - id: reviewbot-bench\n"
        f"    pattern: {json.dumps(pattern)}\n"
        "    message: reviewbot bench\n"
        f"    languages: [{', '.join(languages)}]\n"
        "    severity: INFO\n"
    )


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    tree_rss_mib: float  # largest sampled sum of VmRSS over the process tree
    max_rss_mib: float  # largest single process (ru_maxrss)


@dataclass
class Case:
    name: str
    runs: list[Run] = field(default_factory=list)
    skipped: str = ""  # why there are no runs
    note: str = ""  # printed once: findings, files scanned

    def median(self, attr: str) -> float | None:
        values = [getattr(r, attr) for r in self.runs]
        return statistics.median(values) if values else None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def verdict(value: float | None, limit: float) -> str:
    """PASS when value <= limit, MISS above it, n/a without a value."""
    if value is None:
        return "n/a"
    return "PASS" if value <= limit else "MISS"


Target = tuple[str, float | None, str, str]  # (target, measured value, unit, verdict)


def targets(cases: dict[str, Case]) -> list[Target]:
    """(target, measured value, unit, verdict) for the issue's three targets."""
    cold, warm = cases[REVIEWBOT_COLD], cases[REVIEWBOT_WARM]
    single, tree = cases[SEMGREP_FILES], cases[SEMGREP_TREE]
    warm_ratio = ratio(warm.median("wall_s"), single.median("wall_s"))
    cold_ratio = ratio(cold.median("wall_s"), tree.median("wall_s"))
    rss = [m for m in (cold.median("tree_rss_mib"), warm.median("tree_rss_mib")) if m is not None]
    peak = max(rss) if rss else None
    return [
        (
            f"warm <= {WARM_VS_SINGLE}x semgrep changed files",
            warm_ratio,
            "x",
            verdict(warm_ratio, WARM_VS_SINGLE),
        ),
        (f"cold <= {COLD_VS_TREE}x semgrep whole tree", cold_ratio, "x", verdict(cold_ratio, COLD_VS_TREE)),
        (f"peak RSS <= {RSS_LIMIT_MIB:.0f} MiB (process tree)", peak, " MiB", verdict(peak, RSS_LIMIT_MIB)),
    ]


# --- measuring ------------------------------------------------------------------------------------


def tree_rss_kb(pid: int) -> int:
    """Sum of VmRSS over `pid` and its descendants (Linux /proc)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


@dataclass
class Done:
    run: Run
    returncode: int
    stdout: str
    stderr: str


def measure(argv: Sequence[str], env: dict[str, str], cwd: Path) -> Done:
    """Run one process to its end: wall, CPU (os.wait4, waited-for children included), peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while True:
                peak[0] = max(peak[0], tree_rss_kb(proc.pid))
                if done.wait(SAMPLE_SECONDS):
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    run = Run(wall, usage.ru_utime + usage.ru_stime, peak[0] / 1024, usage.ru_maxrss / 1024)
    return Done(run, proc.returncode, stdout, stderr)


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def machine() -> str:
    """nproc, CPU model, RAM, Python: what the figures ran on."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        model = next(
            (ln.split(":", 1)[1].strip() for ln in cpuinfo.splitlines() if ln.startswith("model name")), "?"
        )
        meminfo = Path("/proc/meminfo").read_text().split()
        ram = f"{int(meminfo[meminfo.index('MemTotal:') + 1]) / MIB:.1f} GiB"
    except (OSError, ValueError, IndexError):
        model, ram = "?", "?"
    return f"{os.cpu_count()} CPUs ({model}), {ram} RAM, Python {sys.version.split()[0]}"


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join([ln.strip() for ln in text.strip().splitlines() if ln.strip()][-lines:])[-400:]


# --- the change and the semgrep side --------------------------------------------------------------


def git(gitdir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {_tail(out.stderr)}")
    return out.stdout


def git_dir(repo: Path) -> Path:
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--absolute-git-dir"], capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"--repo {repo}: not a git repository")
    return Path(out.stdout.strip())


def commit(gitdir: Path, rev: str) -> str:
    return git(gitdir, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()


def materialize(gitdir: Path, rev: str, dest: Path) -> tuple[int, list[str]]:
    """Write REV's files under DEST (a temporary index, no work tree needed); returns (files written,
    paths whose blobs are absent from the git directory, which are skipped)."""
    blobs = []
    for entry in git(gitdir, "ls-tree", "-r", "-z", rev).split("\0"):  # "<mode> <type> <object>\t<path>"
        if entry:
            meta, path = entry.split("\t", 1)
            _, kind, obj = meta.split()
            if kind == "blob":
                blobs.append((obj, path))
    check = subprocess.run(
        ["git", "--git-dir", str(gitdir), "cat-file", "--batch-check"],
        input="".join(f"{obj}\n" for obj, _ in blobs),
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    missing = [path for (_, path), line in zip(blobs, check, strict=True) if line.endswith(" missing")]
    dest.mkdir(parents=True, exist_ok=True)
    index = dest.parent / f".{dest.name}.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index), "GIT_WORK_TREE": str(dest)}
    git(gitdir, "read-tree", rev, env=env)
    if missing:
        git(gitdir, "rm", "--cached", "--quiet", "--", *(f":(literal){p}" for p in missing), env=env)
    git(gitdir, "checkout-index", "--all", "--force", env=env)
    index.unlink(missing_ok=True)
    return len(blobs) - len(missing), missing


def semgrep_binary(explicit: str | None) -> tuple[Path | None, str]:
    """(semgrep, how it was found) or (None, why it is skipped); installs it into its venv when missing."""
    if explicit:
        path = Path(explicit)
        return (path, "given") if path.is_file() else (None, f"--semgrep {explicit}: no such file")
    venv = Path(os.environ.get(SEMGREP_VENV_ENV) or CACHE / "semgrep-venv")
    exe = venv / "bin" / "semgrep"
    if exe.is_file():
        return exe, f"venv {venv}"
    print(f"(installing semgrep with pip into {venv}; about a minute, once)", flush=True)
    try:
        if not (venv / "bin" / "python").is_file():
            subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, text=True
            )
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "semgrep",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as exc:
        return None, f"pip could not install semgrep into {venv}: {_tail(exc.stderr or exc.stdout, 1)}"
    return (exe, f"venv {venv} (installed now)") if exe.is_file() else (None, f"no {exe} after pip install")


def semgrep_version(exe: Path) -> str:
    out = subprocess.run([str(exe), "--version", "--disable-version-check"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def semgrep_env() -> dict[str, str]:
    return {**os.environ, "SEMGREP_SEND_METRICS": "off", "SEMGREP_ENABLE_VERSION_CHECK": "0"}


def semgrep_argv(exe: Path, rule: Path, targets: Sequence[str]) -> list[str]:
    return [str(exe), "scan", "--config", str(rule), "--metrics=off", "--disable-version-check"] + [
        "--json",
        "--quiet",
        "--",
        *targets,
    ]


def semgrep_note(stdout: str) -> str:
    try:
        data = json.loads(stdout)
        return f"{len(data['results'])} matches in {len(data['paths']['scanned'])} files scanned"
    except (ValueError, KeyError, TypeError):
        return "output not JSON"


# --- reviewbot side -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reviewbot:
    command: tuple[str, ...]
    env: dict[str, str]
    commit: str
    python: str = ""  # which interpreter runs it, and how it was found (see reviewbot_python)

    def environ(self, **more: str) -> dict[str, str]:
        return {**os.environ, **self.env, **more}


def reviewbot_python() -> tuple[str, str]:
    """(interpreter, how it was found) for reviewbot's runs: a venv of its own with reviewbot's
    dependencies, as a user's `pip install reviewbot` leaves one and as semgrep runs from its venv.
    The interpreter this bench runs under may carry site-packages of its own whose start-up every
    process pays (here: an editable install's finder and a CA bundle's .pth, 40 ms of `python -c pass`
    against 10 ms in a venv). The commit under test still comes first on PYTHONPATH. One venv per
    set of dependencies (pyproject.toml's), made once; on failure this interpreter, said so."""
    deps = re.search(r"(?ms)^dependencies = \[(.*?)^\]", (ROOT / "pyproject.toml").read_text())
    key = hashlib.sha256((deps.group(1) if deps else "").encode()).hexdigest()[:12]
    venv = CACHE / f"reviewbot-venv-{key}"
    python = venv / "bin" / "python"
    if (venv / ".complete").is_file():
        return str(python), f"venv {venv}"
    print(f"(installing reviewbot's dependencies with pip into {venv}; about a minute, once)", flush=True)
    try:
        if not python.is_file():
            subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, text=True
            )
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(ROOT)]
        subprocess.run(pip, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        why = _tail(exc.stderr or exc.stdout, 1)
        return sys.executable, f"this interpreter (pip could not make {venv}: {why})"
    (venv / ".complete").write_text("")
    return str(python), f"venv {venv} (made now)"


def reviewbot(at: str) -> Reviewbot:
    python, how = reviewbot_python()
    found = _reviewbot(at)
    return Reviewbot((python, *found.command[1:]), found.env, found.commit, how)


def _reviewbot(at: str) -> Reviewbot:
    if at == WORKTREE:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        byte_compile(ROOT / "reviewbot")
        return Reviewbot(
            (sys.executable, "-c", _CLI), {"PYTHONPATH": path}, head.stdout.strip() + "+worktree"
        )
    try:
        found = reviewbot_at(at, CACHE)
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    return Reviewbot(found.command, dict(found.env), found.commit)


def has_no_cache(rb: Reviewbot) -> bool:
    out = subprocess.run([*rb.command, "run", "--help"], capture_output=True, text=True, env=rb.environ())
    if out.returncode != 0:
        raise SystemExit(f"reviewbot run --help failed: {_tail(out.stderr)}")
    return "--no-cache" in out.stdout


def review_note(stdout: str) -> str:
    try:
        report = json.loads(stdout)
        kpi = report.get("kpi") or {}
        stages = ", ".join(f"{k} {v:.0f}" for k, v in (kpi.get("timings_ms") or {}).items())
        return f"status {report['status']}, {len(report['findings'])} findings; stages ms: {stages}"
    except (ValueError, KeyError, TypeError, AttributeError):
        return "output not JSON"


# --- the run --------------------------------------------------------------------------------------


@dataclass
class Setup:
    label: str
    path: Path  # what reviewbot is given
    gitdir: Path
    base: str
    head: str
    changed: list[str]
    pattern: str
    why: str


def _setup(args: argparse.Namespace, tmp: Path) -> Setup:
    if args.repo is None:
        from reviewbot.example import build_example

        ex = build_example(tmp / "example")
        path, base, head, label = ex.path, ex.base, ex.round1, "the bundled example (round 1)"
    else:
        path, label = Path(args.repo).resolve(), str(args.repo)
        head = args.head or "HEAD"
        base = args.base or f"{head}^"
    gitdir = git_dir(path)
    base, head = commit(gitdir, base), commit(gitdir, head)
    changed = [
        p for p in git(gitdir, "diff", "--name-only", "-z", "--diff-filter=d", base, head).split("\0") if p
    ]
    if not changed:
        raise SystemExit(f"no file of {head[:12]} changed against {base[:12]} (deletions aside)")
    if args.pattern:
        return Setup(label, path, gitdir, base, head, changed, args.pattern, "given with --pattern")
    code = [p for p in changed if Path(p).suffix in _EXT_LANG] or changed
    lines = added_code_lines(git(gitdir, "diff", "-U0", "--no-color", base, head, "--", *code))
    picked = pick_identifier(lines)
    if picked is None:
        raise SystemExit("the change adds no identifier to search for: give --pattern")
    name, why, member = picked
    return Setup(label, path, gitdir, base, head, changed, f"$X.{name}" if member else name, why)


Step = tuple[Case, Callable[[], Done]]


def _reviewbot_steps(rb: Reviewbot, setup: Setup, tmp: Path, cases: dict[str, Case]) -> list[Step]:
    """Cold: an empty cache directory per run. Warm (only with --no-cache in `run --help`): one directory
    primed by an untimed run before the first timed one."""
    argv = [*rb.command, "run", "--path", str(setup.path), "--base", setup.base, "--head", setup.head]
    argv += ["--no-tests", "--format", "json"]

    def review_in(cache_dir: Path) -> Done:
        state = tempfile.mkdtemp(prefix="state-", dir=tmp)
        done = measure(argv, rb.environ(REVIEWBOT_CACHE_DIR=str(cache_dir), REVIEWBOT_STATE_DIR=state), tmp)
        if done.returncode != 0:
            raise SystemExit(f"reviewbot exited {done.returncode}: {_tail(done.stderr)}")
        return done

    steps: list[Step] = [
        (cases[REVIEWBOT_COLD], lambda: review_in(Path(tempfile.mkdtemp(prefix="cold-cache-", dir=tmp))))
    ]
    if has_no_cache(rb):
        warm_dir = tmp / "warm-cache"
        review_in(warm_dir)  # priming
        steps.append((cases[REVIEWBOT_WARM], lambda: review_in(warm_dir)))
    else:
        cases[REVIEWBOT_WARM].skipped = "`reviewbot run --help` has no --no-cache (no facts cache yet)"
    return steps


def _semgrep_steps(
    args: argparse.Namespace, setup: Setup, tmp: Path, cases: dict[str, Case]
) -> tuple[list[Step], str]:
    """semgrep on the changed files and over the whole tree of a work tree of HEAD; (steps, version)."""
    exe, how = semgrep_binary(args.semgrep)
    if exe is None:
        print(f"semgrep  skipped: {how}")
        cases[SEMGREP_FILES].skipped = cases[SEMGREP_TREE].skipped = "semgrep not available"
        return [], "n/a"
    version = semgrep_version(exe)
    tree = tmp / "tree"
    start = time.perf_counter()
    files, missing = materialize(setup.gitdir, setup.head, tree)
    absent = f", {len(missing)} blob(s) absent from the git directory skipped" if missing else ""
    took = time.perf_counter() - start
    print(f"semgrep  {version} ({how}); work tree of {files} files in {took:.1f} s{absent}")
    rule = tmp / "rule.yaml"
    rule.write_text(rule_yaml(setup.pattern))
    print(f"rule     pattern {setup.pattern} ({setup.why}), languages {', '.join(LANGUAGES)}")
    env = semgrep_env()

    def scan(targets: Sequence[str]) -> Callable[[], Done]:
        argv = semgrep_argv(exe, rule, targets)
        return lambda: measure(argv, env, tree)

    return [(cases[SEMGREP_FILES], scan(setup.changed)), (cases[SEMGREP_TREE], scan(["."]))], version


def _warm_up(steps: list[Step]) -> list[Step]:
    """One untimed run of each step (the page cache warm for every tool), its note printed; the steps
    that did not fail."""
    for case, step in steps:
        done = step()
        if done.returncode != 0:
            case.skipped = f"exited {done.returncode}: {_tail(done.stderr)}"
            print(f"{case.name:<24} {case.skipped}")
            continue
        is_review = case.name.startswith("reviewbot")
        case.note = review_note(done.stdout) if is_review else semgrep_note(done.stdout)
        print(f"{case.name:<24} {case.note}")
    return [(case, step) for case, step in steps if not case.skipped]


def _print_table(cases: dict[str, Case], runs: int) -> None:
    print(f"\nmedians over {runs} runs         wall s  (min-max)        CPU s  tree RSS MiB  max proc MiB")
    for case in cases.values():
        if not case.runs:
            print(f"  {case.name:<24} n/a: {case.skipped}")
            continue
        walls = [r.wall_s for r in case.runs]
        print(
            f"  {case.name:<24} {case.median('wall_s'):7.2f}  ({min(walls):5.2f}-{max(walls):5.2f})"
            f"  {case.median('cpu_s'):10.2f}  {case.median('tree_rss_mib'):12.1f}"
            f"  {case.median('max_rss_mib'):12.1f}"
        )


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}{unit}" if unit == "x" else f"{value:.1f}{unit}"


def _print_results(cases: dict[str, Case], runs: int, example: bool) -> list[Target]:
    _print_table(cases, runs)
    print(f"(load average at the end {loadavg()})")
    print("\nratios reviewbot / semgrep        median wall   median CPU")
    for who in (REVIEWBOT_COLD, REVIEWBOT_WARM):
        for other in (SEMGREP_FILES, SEMGREP_TREE):
            wall = ratio(cases[who].median("wall_s"), cases[other].median("wall_s"))
            cpu = ratio(cases[who].median("cpu_s"), cases[other].median("cpu_s"))
            print(f"  {who[10:]:<5} / {other:<22} {_fmt(wall, 'x'):>11}  {_fmt(cpu, 'x'):>11}")
    print("\ntargets (issue 14" + (", defined for the real 7.6k-file tree" if example else "") + ")")
    verdicts = targets(cases)
    for name, value, unit, mark in verdicts:
        print(f"  {mark:<5} {name:<44} measured {_fmt(value, unit)}")
    return verdicts


def run(args: argparse.Namespace) -> int:
    """The benchmark for parsed arguments (see add_arguments); 0, or SystemExit with a message."""
    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    rb = reviewbot(args.at)
    cases = {n: Case(n) for n in (REVIEWBOT_COLD, REVIEWBOT_WARM, SEMGREP_FILES, SEMGREP_TREE)}
    with tempfile.TemporaryDirectory(prefix="reviewbot-vs-semgrep-") as tmp_name:
        tmp = Path(tmp_name)
        setup = _setup(args, tmp)
        shown = ", ".join(setup.changed[:5]) + (" ..." if len(setup.changed) > 5 else "")
        print(f"== reviewbot {rb.commit} vs semgrep on {setup.label}")
        print(f"machine  {machine()}; load average {loadavg()}")
        print(f"python   reviewbot runs in {rb.python}")
        print(f"change   {setup.base[:12]}..{setup.head[:12]}: {len(setup.changed)} changed file(s): {shown}")
        steps = _reviewbot_steps(rb, setup, tmp, cases)
        semgrep_steps, version = _semgrep_steps(args, setup, tmp, cases)
        steps = _warm_up(steps + semgrep_steps)
        for i in range(args.runs):  # alternately: one run of each per round
            for case, step in steps:
                case.runs.append(step().run)
            walls = ", ".join(f"{c.name} {c.runs[-1].wall_s:.2f} s" for c, _ in steps)
            print(f"(round {i + 1}/{args.runs}: {walls})", flush=True)
    verdicts = _print_results(cases, args.runs, example=args.repo is None)
    if args.json:
        _write_json(Path(args.json), setup, rb, version, cases, verdicts, args.runs)
    return 0


def _write_json(
    path: Path,
    setup: Setup,
    rb: Reviewbot,
    version: str,
    cases: dict[str, Case],
    verdicts: list[Target],
    runs: int,
) -> None:
    data = {
        "repo": setup.label,
        "base": setup.base,
        "head": setup.head,
        "changed": setup.changed,
        "pattern": setup.pattern,
        "reviewbot": rb.commit,
        "reviewbot_python": rb.python,
        "semgrep": version,
        "runs": runs,
        "machine": machine(),
        "loadavg_end": loadavg(),
        "cases": {
            c.name: {
                "skipped": c.skipped,
                "note": c.note,
                "median": {a: c.median(a) for a in ("wall_s", "cpu_s", "tree_rss_mib", "max_rss_mib")},
                "runs": [vars(r) for r in c.runs],
            }
            for c in cases.values()
        },
        "targets": [{"target": n, "value": v, "verdict": m} for n, v, _, m in verdicts],
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"(written {path})")


def add_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--repo", help="a checkout or bare git directory (default: the bundled example)")
    parser.add_argument("--base", help="base revision (default: HEAD's parent)")
    parser.add_argument("--head", help="head revision (default: HEAD)")
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--pattern", help="the semgrep pattern (default: $X.<a member the change assigns>)")
    parser.add_argument("--semgrep", help="a semgrep executable to use instead of the bench's venv")
    parser.add_argument(
        "--at",
        default="HEAD",
        help=f"reviewbot as committed at REV (default HEAD), or `{WORKTREE}`: this work tree as it is",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
