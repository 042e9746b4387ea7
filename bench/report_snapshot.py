"""Every report the bundled example gives, as files, at one git revision: `diff -r` two of them.

    python3 bench/report_snapshot.py --at HEAD^ --out /tmp/before
    python3 bench/report_snapshot.py --at HEAD --out /tmp/after
    diff -r /tmp/before /tmp/after     # empty: the change kept every report byte for byte

The revision is exported (`git archive`) into a temporary directory and run from there
(PYTHONPATH first, so the editable install of the working tree is not used); `--overlay F ...`
copies files of the working tree on top of it, to check a change before committing it.

What is written, in en and zh:
- `example/`: `reviewbot example --round 1|2` in markdown, text, github, json and sarif;
- `rounds/`: the example as PR #1361 of acme/rtp-llm recorded in a SQLite store, round 1 then round 2
  (round 2 continues round 1: fixed and still-open findings), in the same formats, then
  `reviewbot rounds` (table, json, markdown of each round, the HTML page);
- `github/`: the GitHub round against the tests' fake GitHub (tests/fakegithub), round 1 dry run,
  then round 1 and round 2 posted: every write and GraphQL request the fake saw (method, path,
  body) and the round's outcome (status, API counts, markdown, JSON).

Normalised, because they differ from run to run whatever the code does (and nothing else is):
- the temporary directories (example clones, databases) -> `<WORK>` / `<EXAMPLE>`, the fake's
  port -> `<PORT>`; a state marker whose payload holds one of these is shown decoded;
- wall-clock readings: timestamps `YYYY-MM-DD HH:MM[:SS] UTC` and ISO times -> `<TIME>`; stage
  timings (`timings_ms`), test-run durations (`seconds`, `head_seconds`, `... s` / `... ms` in
  text) -> `<DUR>`;
- how many processes the test sandbox's probe saw (it races the test run's own) -> `<N>`.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

MAIN = Path(__file__).resolve().parent.parent
PR = 1361
REPO = "acme/rtp-llm"
LANGS = ("en", "zh")
FORMATS = ("markdown", "text", "github", "json", "sarif")
SUFFIX = {"markdown": "md", "text": "txt", "github": "github.txt", "json": "json", "sarif": "sarif.json"}


# ---------------------------------------------------------------------------------------------
# Normalisation


_TIME = [
    re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d| UTC)?"),
]
_DUR = [
    re.compile(r'("(?:seconds|head_seconds|base_seconds|duration_s|elapsed_s)": )[0-9.]+'),
    re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s|秒|毫秒)\b"),
]


def _timings(text: str) -> str:
    """`"timings_ms": {...}` with its values (not its keys) replaced."""

    def values(m: re.Match[str]) -> str:
        return re.sub(r":\s*[0-9.]+", ": <DUR>", m.group(0))

    return re.sub(r'"timings_ms": \{[^}]*\}', values, text)


_MARKER = re.compile(r"reviewbot:state v(\d+) ([A-Za-z0-9_-]+)\.([0-9a-f]{16})")
_TEMP = re.compile(r"/tmp/reviewbot-example-[A-Za-z0-9_]+")  # `reviewbot example`'s own temporary clone
_PORT = re.compile(r"127\.0\.0\.1:\d+")
_PROCS = re.compile(r"\(\d+ processes visible\)")  # the sandbox probe races the test run's processes


def _plain(text: str, work: Path) -> str:
    text = text.replace(str(work.resolve()), "<WORK>").replace(str(work), "<WORK>")
    text = _TEMP.sub("<EXAMPLE>", text)
    text = _PORT.sub("127.0.0.1:<PORT>", text)
    text = _PROCS.sub("(<N> processes visible)", text)
    text = _timings(text)
    for rx in _TIME:
        text = rx.sub("<TIME>", text)
    text = _DUR[0].sub(r"\1<DUR>", text)
    return _DUR[1].sub("<DUR>", text)


def _marker(m: re.Match[str], work: Path) -> str:
    """The hidden state marker as it is, unless its payload holds something normalised (a temporary
    path, the clock): then the payload decoded and normalised (its checksum goes with it)."""
    payload = m.group(2)
    raw = zlib.decompress(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).decode("utf-8")
    plain = _plain(raw, work)
    return m.group(0) if plain == raw else f"reviewbot:state v{m.group(1)} DECODED {plain}"


def normalise(text: str, work: Path) -> str:
    text = _MARKER.sub(lambda m: _marker(m, work), text)
    return _plain(text, work)


# ---------------------------------------------------------------------------------------------
# The driver: runs inside the exported tree (python3 report_snapshot.py --drive TREE OUT)


def _cli(tree: Path, work: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1", "REVIEWBOT_STATE_DIR": str(work / "state")}
    env.pop("REVIEWBOT_CONFIG", None)
    code = "import sys; from reviewbot import cli; sys.exit(cli.main(sys.argv[1:]))"
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=work, env=env, capture_output=True, text=True, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


def _report_args(out: Path, stem: str) -> list[str]:
    args = ["--format", "markdown", "-o", str(out / f"{stem}.md")]
    for fmt in FORMATS[1:]:
        args += ["--also", f"{fmt}={out / f'{stem}.{SUFFIX[fmt]}'}"]
    return args


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def drive_cli(tree: Path, out: Path, work: Path) -> None:
    from reviewbot.example import build_example

    common = ["--no-cache"]
    for lang in LANGS:
        for rnd in (1, 2):
            stem = f"r{rnd}.{lang}"
            (out / "example").mkdir(parents=True, exist_ok=True)
            rc, _, err = _cli(
                tree, work, "example", "--round", str(rnd), "--lang", lang, *common,
                *_report_args(out / "example", stem),
            )  # fmt: skip
            _write(out / "example" / f"{stem}.exit", f"{rc}\n")

        ex = build_example(work / f"repo-{lang}")
        subprocess.run(
            ["git", "remote", "add", "origin", f"git@github.com:{REPO}.git"], cwd=ex.path, check=True
        )
        db = f"sqlite:///{work / f'rounds-{lang}.sqlite3'}"
        rounds = out / "rounds"
        rounds.mkdir(parents=True, exist_ok=True)
        for rnd, head in ((1, ex.round1), (2, ex.round2)):
            stem = f"r{rnd}.{lang}"
            rc, _, err = _cli(
                tree, work, "run", "--path", str(ex.path), "--base", ex.base, "--head", head,
                "--pr", str(PR), "--db", db, "--lang", lang, *common, *_report_args(rounds, stem),
            )  # fmt: skip
            _write(rounds / f"{stem}.exit", f"{rc}\n{err if rc else ''}")
        hist = ["rounds", "--pr", str(PR), "--repo", REPO, "--db", db]
        for name, extra in {
            "history.table": [],
            "history.json": ["--format", "json"],
            "round1.md": ["--round", "1"],
            "round2.md": ["--round", "2"],
            "round2.json": ["--round", "2", "--format", "json"],
        }.items():
            rc, stdout, err = _cli(tree, work, *hist, *extra)
            _write(rounds / f"{name}.{lang}.txt", f"exit {rc}\n{stdout}{err if rc else ''}")
        html = rounds / f"history.{lang}.html"
        rc, _, err = _cli(tree, work, *hist, "--html", str(html), "--lang", lang)
        if rc:
            _write(html, f"exit {rc}\n{err}")


def _records(fake: Any) -> list[dict[str, Any]]:
    return [
        {"method": r.method, "path": r.path, "query": r.query, "operation": r.operation, "body": r.body}
        for r in fake.log
        if r.write or r.operation.startswith("graphql")
    ]


def _outcome(outcome: Any) -> dict[str, Any]:
    return {
        "status": outcome.status,
        "reason": outcome.reason,
        "round": outcome.round_index,
        "code_source": outcome.code_source,
        "recorded": outcome.recorded,
        "api": outcome.api,
        "markdown": outcome.markdown,
        "json": outcome.json,
    }


def drive_github(tree: Path, out: Path, work: Path) -> None:
    """The GitHub round (dry run, then posted rounds 1 and 2) against the fake."""
    sys.path.insert(0, str(tree))  # the tree's tests package (the fake GitHub)
    from datetime import datetime, timezone

    from reviewbot.github import run_pr_round
    from reviewbot.github.dryrun import plan_text
    from reviewbot.github.settings import GitHubSettings
    from tests.fakegithub import FakeGitHub, example_remote

    for lang in LANGS:
        with FakeGitHub(allow_pat_check_runs=True) as fake:
            remote = example_remote(work / f"remote-{lang}")
            token = fake.add_user("reviewbot-dev")
            fake.add_user("junna2016")
            fake.add_repo(REPO, remote.bare)
            fake.add_pull(REPO, PR, user="junna2016", head_sha=remote.round1, base_sha=remote.base,
                          title="feat: skip the fused rope/KV-cache kernel for embedding models")  # fmt: skip
            settings = GitHubSettings(
                api_url=fake.api_url,
                token=token,
                cache_dir=work / f"cache-{lang}",
                db_url=f"sqlite:///{work / f'gh-{lang}.sqlite3'}",
                seconds_between_requests=0.0,
                seconds_between_writes=0.0,
                backoff_base=0.01,
                backoff_max=0.05,
                timeout=5.0,
                run_tests=False,
                lang=lang,
                now=lambda: datetime(2026, 9, 1, 4, 0, tzinfo=timezone.utc),
            )
            gh = out / "github"
            dry = run_pr_round(settings, REPO, PR, post=False)
            _write(gh / f"dry.{lang}.txt", plan_text(dry.plan) if dry.plan is not None else dry.reason)
            _write(gh / f"dry.{lang}.outcome.json", json.dumps(_outcome(dry), indent=1, ensure_ascii=False))
            for rnd, head in ((1, remote.round1), (2, remote.round2)):
                fake.set_head(REPO, PR, head)
                fake.clear_log()
                done = run_pr_round(settings, REPO, PR, post=True)
                stem = f"r{rnd}.{lang}"
                _write(gh / f"{stem}.outcome.json", json.dumps(_outcome(done), indent=1, ensure_ascii=False))
                _write(gh / f"{stem}.requests.json", json.dumps(_records(fake), indent=1, ensure_ascii=False))


def drive(tree: Path, out: Path) -> None:
    import reviewbot

    here = Path(reviewbot.__file__).resolve()
    if tree.resolve() not in here.parents:
        raise SystemExit(f"reviewbot imported from {here}, not from the exported tree {tree}")
    work = Path(tempfile.mkdtemp(prefix="snapwork-"))
    raw = Path(tempfile.mkdtemp(prefix="snapraw-"))
    try:
        drive_cli(tree, raw, work)
        drive_github(tree, raw, work)
        for path in sorted(p for p in raw.rglob("*") if p.is_file()):
            target = out / path.relative_to(raw)
            _write(target, normalise(path.read_text(encoding="utf-8"), work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(raw, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The command: export the revision, run the driver in it


def export(rev: str, dest: Path, overlay: list[str]) -> None:
    archive = subprocess.run(["git", "-C", str(MAIN), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    for name in overlay:
        src = MAIN / name
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.exists():
            shutil.copy2(src, target)
        elif target.exists():
            target.unlink()  # deleted in the working tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", default="HEAD", help="the git revision of the repository (default HEAD)")
    parser.add_argument("--out", help="the folder to write the reports to (replaced)")
    parser.add_argument(
        "--overlay", nargs="*", default=[], help="working-tree files copied over the revision"
    )
    parser.add_argument("--drive", nargs=2, metavar=("TREE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        drive(Path(args.drive[0]), Path(args.drive[1]))
        return 0
    if not args.out:
        parser.error("--out DIR is required")
    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    tree = Path(tempfile.mkdtemp(prefix="snaptree-"))
    try:
        export(args.at, tree, args.overlay)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        # This script drives both revisions (the tree's own copy may differ): only reviewbot varies.
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--drive", str(tree), str(out)],
            cwd=tree,
            env=env,
            check=False,
        )
        return proc.returncode
    finally:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
