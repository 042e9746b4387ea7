"""A precision probe on unlabelled config commits (a dev scan), apart from the labelled corpus.

    python3 bench/devscan.py sample --seed 7 --per-repo 14 --out /tmp/wild   # manifests, no labels
    python3 bench/accuracy.py --corpus /tmp/wild --allow-uncommitted --dump /tmp/wild-dump --jobs 2
    python3 bench/devscan.py score /tmp/wild-dump                             # against bench/devscan/*.yaml

`sample` picks, per corpus repository, commits that touch its config-derivation files and that no corpus
case uses, at random (the seed) among the last 600 such commits of the fetched snapshot, and writes one
manifest per repository with no labels (`verdict: pass`, so bench/accuracy.py reviews them and counts
every finding as unlabelled). `score` reads the JSON reports bench/accuracy.py dumped and the judgments
of bench/devscan/*.yaml, and prints, per rule, how many P0–P2 findings a maintainer judged right.

What this is and is not: the judgments are written *after* the review ran, one per P0–P2 finding (right,
or wrong and why), so this measures precision only (nothing says what was missed), and a sample whose
findings motivated a rule change is a training sample (its file says so). Accuracy is the labelled
corpus's test split (bench/accuracy.py, docs/accuracy.md). What the scan adds is volume: findings on many
ordinary commits, where the shapes that are wrong every time (a framework's check macros renamed, a
pydantic validator rewritten) show up long before a labelled corpus has them.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import DEFAULT_CORPUS, DEFAULT_MIRRORS, load_corpus  # noqa: E402

JUDGED = Path(__file__).resolve().parent / "devscan"
BLOCKING_OR_P2 = ("P0", "P1", "P2")

# repository -> (snapshot holding it, config-derivation paths, language of most of them)
REPOS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "sgl-project/sglang": (
        "duihuhu/sglang", ("python/sglang/srt/server_args.py", "python/sglang/srt/configs"), "python"),
    "vllm-project/vllm": (
        "local-inference-lab/vllm",
        ("vllm/config", "vllm/config.py", "vllm/engine/arg_utils.py", "vllm/envs.py"), "python"),
    "NVIDIA/Megatron-LM": (
        "NVIDIA/Megatron-LM",
        ("megatron/training/arguments.py", "megatron/core/transformer/transformer_config.py",
         "megatron/core/model_parallel_config.py"), "python"),
    "microsoft/DeepSpeed": (
        "microsoft/DeepSpeed",
        ("deepspeed/runtime/config.py", "deepspeed/runtime/zero/config.py", "deepspeed/inference/config.py"),
        "python"),
    "ggml-org/llama.cpp": (
        "ggerganov/llama.cpp",
        ("common/arg.cpp", "common/common.cpp", "src/llama-model.cpp", "src/llama-context.cpp"), "cpp"),
    "ikawrakow/ik_llama.cpp": ("ikawrakow/ik_llama.cpp", ("common/common.cpp", "src/llama.cpp"), "cpp"),
    "pytorch/torchtitan": (
        "pytorch/torchtitan",
        ("torchtitan/config", "torchtitan/config_manager.py", "torchtitan/config/job_config.py"), "python"),
    "mlc-ai/mlc-llm": (
        "mlc-ai/mlc-llm",
        ("python/mlc_llm/interface", "python/mlc_llm/serve/config.py", "cpp/serve/config.cc"), "python"),
    "huggingface/text-generation-inference": (
        "huggingface/text-generation-inference",
        ("server/text_generation_server/models/__init__.py", "server/text_generation_server/utils"), "python"),
}  # fmt: skip


def _commits(gitdir: Path, paths: Sequence[str]) -> list[tuple[str, str]]:
    """(commit, its only parent) of the last 600 non-merge commits touching `paths`, newest first."""
    out = subprocess.run(
        ["git", f"--git-dir={gitdir}", "log", "--no-merges", "--format=%H %P", "-n", "600", "HEAD", "--", *paths],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    rows = [line.split() for line in out.splitlines()]
    return [(r[0], r[1]) for r in rows if len(r) == 2]


def sample(seed: int, per_repo: int, out: Path, mirrors: Path, exclude: set[str]) -> int:
    """Write one unlabelled manifest per repository under `out`; the number of cases written."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for repo, (snapshot, paths, lang) in REPOS.items():
        gitdir = mirrors / snapshot.replace("/", "+") / "repo"
        if not gitdir.is_dir():
            print(f"skip {repo}: run fetch github:{snapshot}", file=sys.stderr)
            continue
        rows = [(c, p) for c, p in _commits(gitdir, paths) if c not in exclude]
        picked = rng.sample(rows, min(per_repo, len(rows)))
        name = repo.split("/")[1]
        cases = [
            {"id": f"scan{seed}-{name}-{c[:9]}", "commit": c, "base": p, "verdict": "pass", "split": "train",
             "lang": lang, "labelled": f"unlabelled dev-scan sample (seed {seed})"}
            for c, p in picked
        ]  # fmt: skip
        doc: dict[str, object] = {"repo": repo, "cases": cases}
        if snapshot != repo:
            doc["mirrors"] = [snapshot]
        (out / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        written += len(cases)
    return written


@dataclass(frozen=True)
class Judgment:
    commit: str  # the reviewed commit (40 hex)
    rule: str
    path: str
    line: int
    severity: str  # judged at this severity: the same finding at another one is judged again
    right: bool
    why: str


Key = tuple[str, str, str, int, str]  # commit, rule, path, line, severity


def load_judgments(folder: Path) -> dict[Key, Judgment]:
    """The judgments of every bench/devscan/*.yaml, by (commit, rule, path, line, severity)."""
    found: dict[Key, Judgment] = {}
    for file in sorted(folder.glob("*.yaml")):
        for raw in (yaml.safe_load(file.read_text()) or {}).get("judged") or []:
            j = Judgment(str(raw["commit"]), str(raw["rule"]), str(raw["path"]), int(raw["line"]),
                         str(raw["severity"]), bool(raw["right"]), str(raw.get("why") or ""))  # fmt: skip
            found[(j.commit, j.rule, j.path, j.line, j.severity)] = j
    return found


@dataclass(frozen=True)
class Scored:
    rule: str
    right: int
    wrong: int
    unjudged: int

    @property
    def precision(self) -> str:
        judged = self.right + self.wrong
        return f"{self.right}/{judged} = {self.right / judged:.2f}" if judged else "—"


def score(dump: Path, judged: dict[Key, Judgment]) -> tuple[list[Scored], list[str]]:
    """Per rule, the P0–P2 findings of the dumped reports judged right / wrong / not yet; and the
    unjudged findings, one line each (what to judge next)."""
    right: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    unjudged: Counter[str] = Counter()
    todo: list[str] = []
    for report in sorted(dump.glob("*.json")):
        doc = json.loads(report.read_text())
        commit = str(doc.get("head_sha") or "")
        for f in doc.get("findings") or []:
            if f.get("severity") not in BLOCKING_OR_P2:
                continue
            key = (commit, str(f["rule"]), str(f["path"]), int(f["line"]), str(f["severity"]))
            j = judged.get(key)
            if j is None:
                unjudged[key[1]] += 1
                todo.append(
                    f"{report.stem} {commit[:10]} {f['severity']} {key[1]} {key[2]}:{key[3]} {f['title']}"
                )
            elif j.right:
                right[key[1]] += 1
            else:
                wrong[key[1]] += 1
    rules = sorted(set(right) | set(wrong) | set(unjudged))
    return [Scored(r, right[r], wrong[r], unjudged[r]) for r in rules], todo


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample", help="write unlabelled manifests of config commits no corpus case uses")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--per-repo", type=int, default=14)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    s.add_argument("--exclude", type=Path, action="append", default=[],
                   help="a folder of manifests whose commits to leave out too (an earlier sample)")  # fmt: skip
    c = sub.add_parser("score", help="per rule, P0–P2 findings of a dump judged right / wrong")
    c.add_argument("dump", type=Path)
    c.add_argument("--judged", type=Path, default=JUDGED)
    c.add_argument("--todo", action="store_true", help="also list the findings not judged yet")
    args = parser.parse_args(argv)
    if args.command == "sample":
        exclude = {case.commit for case in load_corpus(DEFAULT_CORPUS, allow_uncommitted=True)}
        # a commit judged in an earlier sample is never drawn again, even when a newer snapshot of its
        # repository shifts the window a seed draws from (the earlier sample's folder is then not enough)
        exclude |= {j.commit for j in load_judgments(JUDGED).values()}
        for folder in args.exclude:
            exclude |= {case.commit for case in load_corpus(folder, allow_uncommitted=True)}
        print(f"{sample(args.seed, args.per_repo, args.out, args.mirrors, exclude)} cases in {args.out}")
        return 0
    if not args.dump.is_dir():
        print(
            f"error: {args.dump} is not a folder of dumped reports (bench/accuracy.py --dump)",
            file=sys.stderr,
        )
        return 2
    rows, todo = score(args.dump, load_judgments(args.judged))
    print("| rule | P0–P2 findings | right | wrong | not judged | precision |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r.rule} | {r.right + r.wrong + r.unjudged} | {r.right} | {r.wrong} | {r.unjudged} | {r.precision} |"
        )
    total = Scored(
        "all", sum(r.right for r in rows), sum(r.wrong for r in rows), sum(r.unjudged for r in rows)
    )
    print(f"| all | {total.right + total.wrong + total.unjudged} | {total.right} | {total.wrong} | "
          f"{total.unjudged} | {total.precision} |")  # fmt: skip
    if args.todo:
        print("\n".join(["", "not judged yet:", *todo]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
