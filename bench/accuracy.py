"""Accuracy on the labelled corpus: review each labelled commit and print per-rule precision and recall.

    python3 bench/accuracy.py                              # every case of bench/corpus/*.yaml
    python3 bench/accuracy.py --only rtp-llm --jobs 2      # the cases whose id contains `rtp-llm`
    python3 bench/accuracy.py --write docs/accuracy.md     # also publish the tables (date, commit)
    python3 bench/accuracy.py --json                       # machine output on stdout

The repository keeps only the manifests (bench/corpus/*.yaml: repo, commit, labels) and this script;
no third-party source is committed. Each case is built from the fetched copy of its repository, a bare
git directory at MIRRORS/<owner>+<name>/repo (MIRRORS: `--mirrors`, else $REVIEWBOT_ACCURACY_MIRRORS,
else /work/.mirror). A case whose repository (or commit) is absent is skipped with the fetch to run:
`skip <id>: run fetch github:<owner>/<name>`.

Each case is one `reviewbot run --path GITDIR --base BASE --head COMMIT --no-tests --format json`
process (the CLI, not the package's internals), on the bare directory; when that fails, on a
`git clone --no-checkout --shared` of it under ~/.cache/reviewbot-accuracy/. Its wall time is printed.
The reviews run reviewbot as committed at `--at REV` (default HEAD: that commit's tree is exported once
to ~/.cache/reviewbot-accuracy/reviewbot-<sha>), so the published table names the commit it measured
and edits in progress cannot break a run; `--at worktree` runs the installed reviewbot as it is.

Scoring is a pure function of the labels and the findings (`score`), apart from running the reviews:

- a finding matches a label when the rule ids and paths are equal, |line - label line| <= 3 and, when
  the label names a `field`, the finding names it as a whole word: in `extra.field` when the finding
  has one (so the six coupled-flag findings of one guard, each about its own field, are told apart) or
  in `extra.binding`, the code's own name for that field (`check_server` for the environment variable
  `MOONCAKE_CHECK_SERVER`: a labeller may name either), else anywhere in its title, evidence or extra
  values;
- a label is also matched (for recall) when a true positive names its line as one more place of the
  same problem (`extra.also`: an unbound name used on further lines); that finding counts once;
- each `expect` label counts once: the nearest matching finding is its true positive, further findings
  on it are "duplicates" (neither true nor false positives); a finding that matches an `allow` label is
  neutral; one that matches a `forbid` label, or no label, is a false positive;
- per rule: precision = TP / (TP + FP), recall = matched expect labels / expect labels ("—": undefined).
  A rule under 0.9 precision with at least 5 scored findings (TP + FP) is on probation;
- per severity band, the recall of the expect labels over all rules, including rule ids reviewbot does
  not have yet (those are misses); the P0–P2 recall is held to the 0.6 target; misses are listed by
  kind (the rule id, or the label's `kind` for rule `other`);
- a `pass` case should get no P0–P2 finding: such cases are counted and listed.

Cases that are skipped, or whose review fails, are not scored (they are listed).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import datetime as dt
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "bench" / "corpus"
DEFAULT_MIRRORS = Path("/work/.mirror")
MIRRORS_ENV = "REVIEWBOT_ACCURACY_MIRRORS"
DEFAULT_CACHE = Path.home() / ".cache" / "reviewbot-accuracy"

SEVERITIES = ("P0", "P1", "P2", "P3")
BLOCKING = ("P0", "P1", "P2")  # the bands issue 13's recall target is about
VERDICTS = ("flag", "pass")
SPLITS = ("train", "test")  # test: never looked at to change a rule (a case that was is moved to train)
LANGS = ("cpp", "python")
LINE_TOLERANCE = 3
SEVERITY_BAND = 1  # a finding is true only at the label's severity or one band away
CLEAN_TARGET = 0.10  # at most this share of clean (pass) commits may get a P0–P2 finding
RECALL_TARGET = 0.6
PROBATION_PRECISION = 0.9
PROBATION_MIN_FINDINGS = 5
STANDING_TRAIN_COMMITS = 3  # issue 24: a rule must fire correctly on at least this many real train commits
SLOW_SECONDS = 10.0
TITLE_WIDTH = 100
OTHER_RULE = "other"

_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TOP_KEYS = {"repo", "mirrors", "cases", "notes", "description"}
_CASE_KEYS = {
    "id",
    "commit",
    "base",
    "verdict",
    "summary",
    "expect",
    "allow",
    "forbid",
    "pr",
    "title",
    "notes",
    "url",
    "split",
    "lang",
    "fixed_by",
    "labelled",
}
_LABEL_KEYS = {
    "expect": {"rule", "severity", "path", "line", "why", "field", "kind"},
    "allow": {"rule", "severity", "path", "line", "why", "field", "kind"},
    "forbid": {"rule", "severity", "path", "line", "why", "field", "kind"},
}


# --------------------------------------------------------------------------------------------- manifest


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the case."""


@dataclass(frozen=True)
class Label:
    rule: str
    path: str
    line: int
    why: str = ""
    severity: str | None = None  # required on `expect` labels
    field: str | None = None
    kind: str | None = None

    @property
    def miss_kind(self) -> str:
        """What a miss of this label is listed under: the rule id, or the `kind` of an `other` label."""
        if self.rule == OTHER_RULE:
            return f"{OTHER_RULE}: {self.kind}" if self.kind else OTHER_RULE
        return self.rule


@dataclass(frozen=True)
class Case:
    id: str
    repo: str  # owner/name
    commit: str
    verdict: str
    base: str | None = None  # None: commit^
    summary: str = ""
    expect: tuple[Label, ...] = ()
    allow: tuple[Label, ...] = ()
    forbid: tuple[Label, ...] = ()
    source: str = ""  # the manifest file
    # Other snapshots holding the same commits (forks with the upstream history), tried in order when
    # the upstream's own snapshot is absent (e.g. over the fetch size limit).
    mirrors: tuple[str, ...] = ()
    split: str = "train"
    lang: str = "python"
    fixed_by: str | None = None  # the later fix or revert commit that proves the labelled problem
    labelled: str = ""  # who labelled the case and when (blind labels: before reviewbot ran on it)

    @property
    def mirror_name(self) -> str:
        return self.repo.replace("/", "+")

    @property
    def mirror_names(self) -> tuple[str, ...]:
        return (self.mirror_name, *(m.replace("/", "+") for m in self.mirrors))


def _label(raw: Any, where: str, group: str) -> Label:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: a label must be a mapping, got {type(raw).__name__}")
    unknown = set(raw) - _LABEL_KEYS[group]
    if unknown:
        raise ManifestError(
            f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} "
            f"(allowed: {', '.join(sorted(_LABEL_KEYS[group]))})"
        )
    for key in ("rule", "path"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ManifestError(f"{where}: `{key}` is missing or not a string")
    line = raw.get("line")
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise ManifestError(f"{where}: `line` must be a positive integer, got {line!r}")
    severity = raw.get("severity")
    if severity is None and group == "expect":
        raise ManifestError(f"{where}: `severity` is missing (one of {', '.join(SEVERITIES)})")
    if severity is not None and severity not in SEVERITIES:
        raise ManifestError(f"{where}: severity {severity!r} is not one of {', '.join(SEVERITIES)}")
    for key in ("why", "field", "kind"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ManifestError(f"{where}: `{key}` must be a string, got {raw[key]!r}")
    return Label(
        rule=raw["rule"].strip(),
        path=_norm_path(raw["path"]),
        line=line,
        why=(raw.get("why") or "").strip(),
        severity=severity,
        field=(raw.get("field") or "").strip() or None,
        kind=(raw.get("kind") or "").strip() or None,
    )


def parse_manifest(data: Any, source: str = "<manifest>") -> list[Case]:
    """The cases of one manifest's parsed YAML; raises ManifestError naming the file and the case."""
    if not isinstance(data, dict):
        raise ManifestError(f"{source}: the manifest must be a mapping with `repo` and `cases`")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ManifestError(f"{source}: unknown top-level key(s) {', '.join(sorted(map(str, unknown)))}")
    repo = data.get("repo")
    if not isinstance(repo, str) or not _REPO.match(repo):
        raise ManifestError(f"{source}: `repo` must be owner/name, got {repo!r}")
    alternates = data.get("mirrors") or []
    if not isinstance(alternates, list) or not all(isinstance(m, str) and _REPO.match(m) for m in alternates):
        raise ManifestError(f"{source}: `mirrors` must be a list of owner/name, got {alternates!r}")
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list):
        raise ManifestError(f"{source}: `cases` must be a list")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_cases):
        if not isinstance(raw, dict):
            raise ManifestError(f"{source}: case #{index + 1}: must be a mapping")
        case_id = raw.get("id")
        if not isinstance(case_id, str) or not case_id.strip():
            raise ManifestError(f"{source}: case #{index + 1}: `id` is missing")
        where = f"{source}: case {case_id}"
        if case_id in seen:
            raise ManifestError(f"{where}: the id is used twice")
        seen.add(case_id)
        unknown = set(raw) - _CASE_KEYS
        if unknown:
            raise ManifestError(
                f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} "
                f"(allowed: {', '.join(sorted(_CASE_KEYS))})"
            )
        commit = raw.get("commit")
        if commit is None:
            raise ManifestError(f"{where}: `commit` is missing")
        if not isinstance(commit, str) or not _SHA.match(commit):
            raise ManifestError(f"{where}: `commit` must be a full 40-hex sha, got {commit!r}")
        base = raw.get("base")
        if base is not None and (not isinstance(base, str) or not _SHA.match(base)):
            raise ManifestError(f"{where}: `base` must be a full 40-hex sha, got {base!r}")
        verdict = raw.get("verdict")
        if verdict not in VERDICTS:
            raise ManifestError(f"{where}: `verdict` must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        groups: dict[str, tuple[Label, ...]] = {}
        for group in ("expect", "allow", "forbid"):
            items = raw.get(group) or []
            if not isinstance(items, list):
                raise ManifestError(f"{where}: `{group}` must be a list")
            groups[group] = tuple(
                _label(item, f"{where}: {group}[{i}]", group) for i, item in enumerate(items)
            )
        split = raw.get("split", "train")
        if split not in SPLITS:
            raise ManifestError(f"{where}: `split` must be one of {', '.join(SPLITS)}, got {split!r}")
        lang = raw.get("lang", "python")
        if lang not in LANGS:
            raise ManifestError(f"{where}: `lang` must be one of {', '.join(LANGS)}, got {lang!r}")
        fixed_by = raw.get("fixed_by")
        if fixed_by is not None and (not isinstance(fixed_by, str) or not _SHA.match(fixed_by)):
            raise ManifestError(f"{where}: `fixed_by` must be a full 40-hex sha, got {fixed_by!r}")
        summary = raw.get("summary") or ""
        cases.append(
            Case(
                id=case_id,
                repo=repo,
                commit=commit,
                base=base,
                verdict=verdict,
                summary=str(summary).strip(),
                source=source,
                mirrors=tuple(alternates),
                split=split,
                lang=lang,
                fixed_by=fixed_by,
                labelled=str(raw.get("labelled") or "").strip(),
                **groups,
            )
        )
    return cases


def uncommitted(files: Sequence[Path]) -> list[Path]:
    """The manifests git does not hold as they are: untracked, or changed since the last commit. Blind
    labels are committed before reviewbot first runs on them, so the bench reviews no case whose
    labels are not committed yet (outside a git work tree nothing can be told: none is held back)."""
    if not files:
        return []
    top = files[0].parent
    probe = subprocess.run(
        [
            "git",
            "-C",
            str(top),
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return []
    root = subprocess.run(
        ["git", "-C", str(top), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
    ).stdout.strip()
    # `-z`: NUL-separated entries, paths as they are (no quoting); a rename's entry is followed by its
    # old path, which is not a manifest of the work tree any more and matches nothing below.
    dirty = {(Path(root) / entry[3:]).resolve() for entry in probe.stdout.split("\0") if len(entry) > 3}
    return [f for f in files if f.resolve() in dirty]


def load_corpus(corpus: Path, allow_uncommitted: bool = False) -> list[Case]:
    """Every case of CORPUS/*.yaml (sorted by file), ids unique over the corpus."""
    files = sorted([*corpus.glob("*.yaml"), *corpus.glob("*.yml")])
    if not files:
        raise ManifestError(f"{corpus}: no *.yaml manifest")
    held = [] if allow_uncommitted else uncommitted(files)
    for path in held:
        print(
            f"skip {path.name}: its labels are not committed (commit them before the first run, or "
            "--allow-uncommitted to check that it loads)",
            file=sys.stderr,
        )
    files = [f for f in files if f not in held]
    cases: list[Case] = []
    where: dict[str, str] = {}
    for path in files:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ManifestError(f"{path}: not valid YAML: {exc}") from exc
        for case in parse_manifest(data, str(path)):
            if case.id in where:
                raise ManifestError(f"{path}: case {case.id}: the id is also used in {where[case.id]}")
            where[case.id] = str(path)
            cases.append(case)
    return cases


# --------------------------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    path: str
    line: int
    title: str = ""
    text: str = ""  # title, evidence and extra values: where a label's field is looked for
    field: str | None = None  # extra.field, when the finding names its field there
    binding: str | None = None  # extra.binding: the code's own name for that field (an env var's variable)
    # extra.also: further lines of the same path the finding names as the same problem
    also: tuple[int, ...] = ()

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Finding:
        extra = raw.get("extra") or {}
        evidence = raw.get("evidence") or []
        if isinstance(evidence, str):
            evidence = [evidence]
        title = str(raw.get("title") or "")
        parts = [title, *map(str, evidence)]
        if isinstance(extra, dict):
            parts += [str(v) for v in extra.values()]
        own = extra.get("field") if isinstance(extra, dict) else None
        return cls(
            rule=str(raw.get("rule") or ""),
            severity=str(raw.get("severity") or ""),
            path=_norm_path(str(raw.get("path") or "")),
            line=int(raw.get("line") or 0),
            title=title,
            text="\n".join(parts),
            field=str(own) if own else None,
            binding=str(extra["binding"]) if isinstance(extra, dict) and extra.get("binding") else None,
            also=_lines(extra.get("also") if isinstance(extra, dict) else None),
        )


def _lines(raw: object) -> tuple[int, ...]:
    """`"637,759"` -> (637, 759); anything else -> ()."""
    if not isinstance(raw, str):
        return ()
    return tuple(int(x) for x in raw.split(",") if x.strip().isdigit())


def _norm_path(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def band_ok(finding: Finding, label: Label) -> bool:
    """The finding's severity is the label's or one band away (a label without a severity takes any)."""
    if label.severity is None or finding.severity not in SEVERITIES:
        return label.severity is None
    return abs(SEVERITIES.index(finding.severity) - SEVERITIES.index(label.severity)) <= SEVERITY_BAND


def matches(finding: Finding, label: Label, tolerance: int = LINE_TOLERANCE, band: bool = True) -> bool:
    """Same rule, same path, line within the tolerance, the label's field named, and (with `band`) a
    severity within one band of the label's: a finding at the wrong severity is not the labelled one."""
    if band and not band_ok(finding, label):
        return False
    return _located(finding, label, tolerance)


def _located(finding: Finding, label: Label, tolerance: int) -> bool:
    if finding.rule != label.rule or finding.path != label.path:
        return False
    if abs(finding.line - label.line) > tolerance:
        return False
    if label.field is None:
        return True
    if finding.field is not None:
        names = [n for n in (finding.field, finding.binding) if n]
        return any(_mentions(n, label.field) or _mentions(label.field, n) for n in names)
    return _mentions(finding.text, label.field)


# --------------------------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Scored:
    """One finding with what it counted as: tp, duplicate, allowed, fp-severity (on a label, at a
    severity more than one band from it), fp-forbid or fp-unlabelled."""

    case_id: str
    finding: Finding
    outcome: str
    label: Label | None = None


@dataclass(frozen=True)
class Miss:
    case_id: str
    label: Label
    implemented: bool | None  # does reviewbot have the label's rule id (None: unknown)


@dataclass
class RuleScore:
    rule: str
    implemented: bool | None = None
    findings: int = 0
    tp: int = 0
    fp: int = 0
    duplicates: int = 0
    allowed: int = 0
    labels: int = 0  # expect labels of this rule
    matched: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.matched / self.labels if self.labels else None

    @property
    def probation(self) -> bool:
        p = self.precision
        return p is not None and p < PROBATION_PRECISION and self.tp + self.fp >= PROBATION_MIN_FINDINGS


@dataclass
class BandScore:
    severity: str
    labels: int = 0
    matched: int = 0

    @property
    def recall(self) -> float | None:
        return self.matched / self.labels if self.labels else None


@dataclass
class CaseScore:
    case_id: str
    verdict: str
    findings: int = 0
    tp: int = 0
    fp: int = 0
    duplicates: int = 0
    allowed: int = 0
    labels: int = 0
    matched: int = 0
    blocking_findings: int = 0  # findings at P0–P2


@dataclass
class Report:
    rules: list[RuleScore]
    bands: list[BandScore]
    blocking: BandScore  # P0–P2 together
    cases: list[CaseScore]
    scored: list[Scored]
    misses: list[Miss]
    # Severity confusion: for each expect label, its band against the band of the nearest finding at
    # its place (same rule, path, line, field; any severity), or "missed" when there is none.
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    labels: list[Label] = field(default_factory=list)  # the expect labels scored

    @property
    def false_positives(self) -> list[Scored]:
        return [s for s in self.scored if s.outcome.startswith("fp")]

    @property
    def duplicates(self) -> list[Scored]:
        return [s for s in self.scored if s.outcome == "duplicate"]

    @property
    def pass_cases_flagged(self) -> list[CaseScore]:
        return [c for c in self.cases if c.verdict == "pass" and c.blocking_findings]

    def misses_by_kind(self, bands: Sequence[str] = BLOCKING) -> list[tuple[str, list[Miss]]]:
        groups: dict[str, list[Miss]] = {}
        for miss in self.misses:
            if miss.label.severity in bands:
                groups.setdefault(miss.label.miss_kind, []).append(miss)
        return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def score_case(case: Case, findings: Sequence[Finding], tolerance: int = LINE_TOLERANCE) -> list[Scored]:
    """What each finding of one case counts as. Each expect label takes its nearest matching finding."""
    pairs = sorted(
        (abs(f.line - lab.line), fi, li)
        for fi, f in enumerate(findings)
        for li, lab in enumerate(case.expect)
        if matches(f, lab, tolerance)
    )
    taken_f: dict[int, int] = {}
    taken_l: set[int] = set()
    for _, fi, li in pairs:
        if fi not in taken_f and li not in taken_l:
            taken_f[fi] = li
            taken_l.add(li)
    out: list[Scored] = []
    for fi, f in enumerate(findings):
        if fi in taken_f:
            out.append(Scored(case.id, f, "tp", case.expect[taken_f[fi]]))
            continue
        on_expect = next((lab for lab in case.expect if matches(f, lab, tolerance)), None)
        if on_expect is not None:
            out.append(Scored(case.id, f, "duplicate", on_expect))
            continue
        allowed = next((lab for lab in case.allow if matches(f, lab, tolerance)), None)
        if allowed is not None:
            out.append(Scored(case.id, f, "allowed", allowed))
            continue
        misjudged = next(
            (lab for lab in (*case.expect, *case.allow) if matches(f, lab, tolerance, band=False)), None
        )
        if misjudged is not None:
            out.append(Scored(case.id, f, "fp-severity", misjudged))
            continue
        forbidden = next((lab for lab in case.forbid if matches(f, lab, tolerance, band=False)), None)
        if forbidden is not None:
            out.append(Scored(case.id, f, "fp-forbid", forbidden))
        else:
            out.append(Scored(case.id, f, "fp-unlabelled"))
    return out


def resolve_kinds(case: Case, known: set[str]) -> Case:
    """The case with each `other` label whose `kind` is the id of a rule reviewbot now has scored as
    that rule: a blind labeller writes `rule: other, kind: flag-removed-without-alias` when no rule of
    that id exists yet; once one does, its findings there are the labelled ones (same path, line,
    field and severity band as for any label). Kinds that only resemble a rule id are left alone."""

    def one(lab: Label) -> Label:
        if lab.rule == OTHER_RULE and lab.kind in known:
            return replace(lab, rule=lab.kind)
        return lab

    return replace(
        case,
        expect=tuple(map(one, case.expect)),
        allow=tuple(map(one, case.allow)),
        forbid=tuple(map(one, case.forbid)),
    )


def score(
    results: Iterable[tuple[Case, Sequence[Finding]]],
    known_rules: Iterable[str] | None = None,
    tolerance: int = LINE_TOLERANCE,
) -> Report:
    """The per-rule, per-band and per-case figures of reviewed cases: a pure function of labels and findings.

    `known_rules` are reviewbot's rule ids (to mark labels of rules it does not have); None: not known.
    """
    known = set(known_rules) if known_rules is not None else None
    if known is not None:
        results = [(resolve_kinds(case, known), findings) for case, findings in results]
    rules: dict[str, RuleScore] = {}

    def rule(rule_id: str) -> RuleScore:
        if rule_id not in rules:
            rules[rule_id] = RuleScore(rule_id, None if known is None else rule_id in known)
        return rules[rule_id]

    bands = {s: BandScore(s) for s in SEVERITIES}
    blocking = BandScore("P0–P2")
    cases: list[CaseScore] = []
    scored: list[Scored] = []
    misses: list[Miss] = []
    confusion: dict[str, dict[str, int]] = {}
    pairs = list(results)
    for case, findings in pairs:
        cs = CaseScore(case.id, case.verdict, findings=len(findings), labels=len(case.expect))
        outcomes = score_case(case, findings, tolerance)
        scored.extend(outcomes)
        hit: set[int] = set()
        for s in outcomes:
            r = rule(s.finding.rule)
            r.findings += 1
            if s.finding.severity in BLOCKING:
                cs.blocking_findings += 1
            if s.outcome == "tp":
                r.tp += 1
                cs.tp += 1
                assert s.label is not None
                hit.add(id(s.label))
            elif s.outcome == "duplicate":
                r.duplicates += 1
                cs.duplicates += 1
            elif s.outcome == "allowed":
                r.allowed += 1
                cs.allowed += 1
            else:
                r.fp += 1
                cs.fp += 1
        hit |= {id(lab) for lab in case.expect if _named_by_a_true_finding(lab, outcomes, tolerance)}
        for lab in (*case.allow, *case.forbid):
            rule(lab.rule)
        for lab in case.expect:
            located = [f for f in findings if matches(f, lab, tolerance, band=False)]
            row = confusion.setdefault(lab.severity or "P3", {})
            got = (
                min((f.severity for f in located), key=lambda sev: _band_distance(sev, lab.severity))
                if located
                else "missed"
            )
            row[got] = row.get(got, 0) + 1
            r = rule(lab.rule)
            r.labels += 1
            band = bands[lab.severity or "P3"]
            band.labels += 1
            if lab.severity in BLOCKING:
                blocking.labels += 1
            if id(lab) in hit:
                r.matched += 1
                band.matched += 1
                cs.matched += 1
                if lab.severity in BLOCKING:
                    blocking.matched += 1
            else:
                misses.append(Miss(case.id, lab, r.implemented))
        cases.append(cs)
    return Report(
        rules=sorted(rules.values(), key=lambda r: r.rule),
        bands=[bands[s] for s in SEVERITIES],
        blocking=blocking,
        cases=cases,
        scored=scored,
        misses=misses,
        confusion=confusion,
        labels=[lab for case, _ in pairs for lab in case.expect],
    )


def _named_by_a_true_finding(lab: Label, outcomes: Sequence[Scored], tolerance: int) -> bool:
    """A true positive names the label's line as one more place of the same problem (`extra.also`:
    `MooncakeStore` unbound at 630, also used at 637 and 759): the report points the maintainer there,
    so the label is matched; the finding still counts once for precision."""
    return any(
        s.outcome == "tp" and matches(replace(s.finding, line=line), lab, tolerance)
        for s in outcomes
        for line in s.finding.also
    )


def _band_distance(severity: str, label: str | None) -> int:
    if severity not in SEVERITIES or label not in SEVERITIES:
        return len(SEVERITIES)
    return abs(SEVERITIES.index(severity) - SEVERITIES.index(label))


# --------------------------------------------------------------------------------------------- running


@dataclass
class CaseRun:
    """The outcome of reviewing one case: findings, or why it was skipped or failed."""

    case: Case
    findings: list[Finding] | None = None
    seconds: float = 0.0
    cpu_seconds: float | None = None
    skipped: str | None = None  # the skip message
    error: str | None = None
    base: str = ""
    via: str = ""  # the git directory reviewed
    status: str = ""  # the review's status (LGTM, BLOCKING, INCOMPLETE)
    unparsable: tuple[str, ...] = ()  # paths of the review's unparsable-code notes
    timings_ms: dict[str, float] = field(default_factory=dict)


def skip_message(case: Case, reason: str = "") -> str:
    fetches = " or ".join(f"fetch github:{r}" for r in (case.repo, *case.mirrors))
    return f"skip {case.id}: {reason}run {fetches}"


def _git(gitdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True, check=check
    )


# `python -c` puts the current directory first on sys.path: drop it, so PYTHONPATH decides which reviewbot
_CLI = "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; from reviewbot.cli import main; sys.exit(main())"
WORKTREE = "worktree"


@dataclass(frozen=True)
class Reviewbot:
    """How to start reviewbot: the command, environment to add, and the commit it is (for the report)."""

    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    commit: str = ""
    dirty: bool = False  # the installed work tree, with uncommitted changes under reviewbot/

    def environ(self, **more: str) -> dict[str, str]:
        return {**os.environ, **dict(self.env), **more}


def _here(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def installed_reviewbot() -> Reviewbot:
    """The `reviewbot` on PATH (this work tree, when installed editable), as it is now."""
    exe = shutil.which("reviewbot")
    command = (exe,) if exe else (sys.executable, "-c", _CLI)
    head = _here("rev-parse", "--short", "HEAD")
    dirty = _here("status", "--porcelain", "--", "reviewbot")
    return Reviewbot(
        command,
        commit=head.stdout.strip() if head.returncode == 0 else "unknown",
        dirty=bool(dirty.stdout.strip()),
    )


def byte_compile(package: Path) -> None:
    """Compile the package's modules to .pyc, as `pip install` does: without them every reviewbot process
    compiles its ~120 modules from source first (0.13 s on this machine), and a machine that sets
    PYTHONDONTWRITEBYTECODE (as these do) never keeps the result."""
    compileall.compile_dir(str(package), quiet=1, workers=1)


def reviewbot_at(rev: str, cache: Path) -> Reviewbot:
    """reviewbot as committed at REV of this repository: the commit's tree exported once under CACHE and
    put first on PYTHONPATH, so edits in progress in the work tree cannot change or break a measurement."""
    full = _here("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if full.returncode != 0:
        raise ValueError(f"--at {rev}: not a commit of {ROOT}")
    sha = full.stdout.strip()
    short = _here("rev-parse", "--short", sha).stdout.strip() or sha[:9]
    target = cache / f"reviewbot-{sha[:12]}"
    if not (target / "reviewbot" / "cli.py").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        # the whole tree: reviewbot/data links to ../../checklists, templates and examples
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True)
        if archive.returncode != 0:
            raise ValueError(f"--at {rev}: git archive failed: {archive.stderr.decode(errors='replace')}")
        staging = Path(tempfile.mkdtemp(prefix=".export-", dir=cache))
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(staging, filter="data")
            else:  # pragma: no cover - Pythons without extraction filters
                tar.extractall(staging)
        byte_compile(staging / "reviewbot")
        try:
            staging.rename(target)
        except OSError:  # another run exported it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    path = os.pathsep.join(p for p in (str(target), os.environ.get("PYTHONPATH", "")) if p)
    return Reviewbot((sys.executable, "-c", _CLI), (("PYTHONPATH", path),), commit=short)


def _tail(text: str, lines: int = 3, width: int = 400) -> str:
    """The last lines of a failed process's output (the exception), on one line."""
    kept = [ln.strip() for ln in text.strip().splitlines() if ln.strip()][-lines:]
    one = " | ".join(kept)
    return one if len(one) <= width else "…" + one[-width:]


def known_rule_ids(reviewbot: Reviewbot) -> dict[str, str] | None:
    """reviewbot's rule ids with their declared severities (`reviewbot rules`), or None when they cannot
    be listed."""
    try:
        out = subprocess.run(
            [*reviewbot.command, "rules"],
            capture_output=True,
            text=True,
            timeout=120,
            env=reviewbot.environ(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    rules: dict[str, str] = {}
    for line in out.stdout.splitlines():
        words = line.split()
        if len(words) >= 2 and not line.startswith(" ") and re.match(r"^[a-z0-9][a-z0-9-]*$", words[0]):
            declared = words[1] if words[1] in SEVERITIES else ""
            # An opt-in rule does not run unless a repository enables it: none of the corpus does.
            rules[words[0]] = f"{declared} {OPT_IN_MARK}" if declared and "(opt-in" in line else declared
    return rules or None


def _drop_key(doc: Any, key: str) -> None:
    if isinstance(doc, dict):
        doc.pop(key, None)
        for value in doc.values():
            _drop_key(value, key)
    elif isinstance(doc, list):
        for value in doc:
            _drop_key(value, key)


class Runner:
    """Reviews cases with the `reviewbot` CLI, one process per case, from the fetched mirrors."""

    def __init__(
        self,
        mirrors: Path,
        cache: Path = DEFAULT_CACHE,
        reviewbot: Reviewbot | None = None,
        timeout: float = 600.0,
        dump: Path | None = None,
    ) -> None:
        self.mirrors = mirrors
        self.dump = dump
        self.cache = cache
        self.reviewbot = reviewbot or installed_reviewbot()
        self.timeout = timeout
        self._clone_lock = threading.Lock()
        self._use_clone: set[str] = set()  # repositories whose bare mirror failed where a clone did not
        self._bare_ok: set[str] = set()  # repositories reviewed from their bare mirror at least once

    def gitdir(self, case: Case) -> Path:
        """The first snapshot of the case's repository (or of an alternate that holds its commits)."""
        dirs = [self.mirrors / name / "repo" for name in case.mirror_names]
        return next((d for d in dirs if d.is_dir()), dirs[0])

    def run(self, case: Case) -> CaseRun:
        gitdir = self.gitdir(case)
        if not gitdir.is_dir():
            return CaseRun(case, skipped=skip_message(case))
        if _git(gitdir, "cat-file", "-e", f"{case.commit}^{{commit}}", check=False).returncode != 0:
            return CaseRun(
                case, skipped=skip_message(case, f"commit {case.commit[:12]} is not in the mirror; ")
            )
        base = case.base
        if base is None:
            parent = _git(
                gitdir, "rev-parse", "--verify", "--quiet", f"{case.commit}^{{commit}}^", check=False
            )
            if parent.returncode != 0:
                return CaseRun(case, error=f"{case.commit[:12]} has no parent in the mirror; give `base`")
            base = parent.stdout.strip()
        if case.repo in self._use_clone:
            return self._review(case, self._clone(case, gitdir), base)
        run = self._review(case, gitdir, base)
        if run.error is None:
            self._bare_ok.add(case.repo)
            return run
        if case.repo in self._bare_ok or run.error.startswith("timed out"):  # the mirror is not the problem
            return run
        # The bare mirror did not do: review a shared clone of it instead.
        try:
            clone = self._clone(case, gitdir)
        except subprocess.CalledProcessError as exc:
            run.error = f"{run.error}; cloning the mirror failed too: {_tail(exc.stderr)}"
            return run
        retry = self._review(case, clone, base)
        if retry.error is None:
            self._use_clone.add(case.repo)
            return retry
        run.error = f"{run.error}; on a clone too" + ("" if retry.error == run.error else f": {retry.error}")
        return run

    def _dump(self, case: Case, report: dict[str, Any]) -> None:
        # Timings and the review's wall-clock time differ run to run; everything else in a report must be the
        # same for the same code, so two dumps `diff -r` clean unless the review changed (a refactor's
        # before/after proof).
        kpi = report.get("kpi")
        if isinstance(kpi, dict):
            kpi.pop("timings_ms", None)
        _drop_key(report, "reviewed_at")
        assert self.dump is not None
        self.dump.mkdir(parents=True, exist_ok=True)
        text = json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False)
        (self.dump / f"{case.id}.json").write_text(text + "\n", encoding="utf-8")

    def _clone(self, case: Case, gitdir: Path) -> Path:
        target = self.cache / case.mirror_name
        with self._clone_lock:
            if not (target / ".git").is_dir():
                target.parent.mkdir(parents=True, exist_ok=True)
                subprocess.run(
                    ["git", "clone", "--quiet", "--no-checkout", "--shared", str(gitdir), str(target)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
        return target

    def _review(self, case: Case, gitdir: Path, base: str) -> CaseRun:
        with tempfile.TemporaryDirectory(prefix="reviewbot-accuracy-") as tmp:
            # Cold reviews: a fresh facts cache per case (the wall times compare with earlier runs).
            env = self.reviewbot.environ(
                REVIEWBOT_STATE_DIR=str(Path(tmp) / "state"), REVIEWBOT_CACHE_DIR=str(Path(tmp) / "cache")
            )
            argv = [
                *self.reviewbot.command,
                "run",
                "--path",
                str(gitdir),
                "--base",
                base,
                "--head",
                case.commit,
                "--no-tests",
                "--format",
                "json",
            ]
            out = _run_timed(argv, env, Path(tmp), self.timeout)
        if out.timed_out:
            return CaseRun(
                case,
                base=base,
                via=str(gitdir),
                seconds=out.seconds,
                error=f"timed out after {self.timeout:.0f} s",
            )
        seconds = out.seconds
        if out.returncode != 0:
            tail = _tail(out.stderr or out.stdout)
            return CaseRun(
                case, base=base, via=str(gitdir), seconds=seconds, error=f"exit {out.returncode}: {tail}"
            )
        try:
            report = json.loads(out.stdout)
            findings = [Finding.from_json(f) for f in report["findings"]]
        except (ValueError, KeyError, TypeError) as exc:
            return CaseRun(case, base=base, via=str(gitdir), seconds=seconds, error=f"unreadable JSON: {exc}")
        timings = ((report.get("kpi") or {}).get("timings_ms")) or {}
        if self.dump is not None:
            self._dump(case, report)
        unparsable = tuple(
            str(n.get("path") or "")
            for n in report.get("notes") or []
            if isinstance(n, dict) and n.get("reason") == "unparsable-code"
        )
        return CaseRun(
            case,
            findings,
            status=str(report.get("status") or ""),
            unparsable=unparsable,
            seconds=seconds,
            cpu_seconds=out.cpu_seconds,
            base=base,
            via=str(gitdir),
            timings_ms=dict(timings),
        )


@dataclass
class _Timed:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    cpu_seconds: float | None  # user + system of the process and the children it waited for
    timed_out: bool = False


def _run_timed(argv: Sequence[str], env: dict[str, str], cwd: Path, timeout: float) -> _Timed:
    """Run a process; its wall time and, where os.wait4 exists, its CPU time (workers included)."""
    start = time.monotonic()
    if not hasattr(os, "wait4"):  # pragma: no cover - not POSIX
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
        except subprocess.TimeoutExpired:
            return _Timed(-1, "", "", time.monotonic() - start, None, timed_out=True)
        return _Timed(done.returncode, done.stdout, done.stderr, time.monotonic() - start, None)
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True
    )
    streams: dict[str, bytes] = {}

    def drain(name: str, stream: Any) -> None:
        streams[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=("out", proc.stdout)),
        threading.Thread(target=drain, args=("err", proc.stderr)),
    ]
    for reader in readers:
        reader.start()
    killed = threading.Event()

    def kill() -> None:  # the review and its parse workers (its own process group)
        killed.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    for reader in readers:
        reader.join()
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    return _Timed(
        proc.returncode,
        streams.get("out", b"").decode(errors="replace"),
        streams.get("err", b"").decode(errors="replace"),
        time.monotonic() - start,
        usage.ru_utime + usage.ru_stime,
        timed_out=killed.is_set(),
    )


def run_all(
    cases: Sequence[Case], runner: Runner, jobs: int = 1, progress: Callable[[CaseRun], None] | None = None
) -> list[CaseRun]:
    """Every case reviewed (in the corpus order), `jobs` at a time; `progress` sees each as it ends."""

    def one(case: Case) -> CaseRun:
        result = runner.run(case)
        if progress is not None:
            progress(result)
        return result

    if jobs <= 1:
        return [one(c) for c in cases]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, cases))


# --------------------------------------------------------------------------------------------- output


def ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "—"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _cut(text: str, width: int = TITLE_WIDTH) -> str:
    one = " ".join(text.split())
    if len(one) <= width:
        return one
    cut = one[: width - 1] + "…"
    return cut + "`" if cut.count("`") % 2 else cut  # keep inline code closed


def _rule_note(r: RuleScore) -> str:
    notes = []
    if r.implemented is False:
        notes.append("not in reviewbot")
    if r.probation:
        notes.append("probation")
    return ", ".join(notes)


def rule_rows(report: Report) -> list[list[str]]:
    rows = []
    for r in report.rules:
        rows.append(
            [
                r.rule,
                str(r.findings),
                str(r.tp),
                str(r.fp),
                str(r.duplicates),
                str(r.allowed),
                _fmt(r.precision),
                f"{r.matched}/{r.labels}",
                _fmt(r.recall),
                _rule_note(r),
            ]
        )
    return rows


SPLIT_NOTE = (
    "Two splits. **test**: cases labelled blind (labels committed before reviewbot first ran on them) and "
    "never looked at to change a rule; a test case whose findings motivated a rule change moves to train "
    "and its manifest entry says so. These are the accuracy figures. **train**: the cases the rules were "
    "tuned on (the first 38, and blind cases used for tuning); their figures are training figures, not "
    "accuracy."
)


RULE_HEADER = ["rule", "findings", "TP", "FP", "dup", "allowed", "precision", "matched", "recall", "note"]


def _text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _band_rows(report: Report) -> list[list[str]]:
    rows = [[b.severity, str(b.labels), str(b.matched), _fmt(b.recall)] for b in report.bands]
    b = report.blocking
    rows.append([b.severity, str(b.labels), str(b.matched), _fmt(b.recall)])
    return rows


def _target_line(report: Report) -> str:
    recall = report.blocking.recall
    if recall is None:
        return f"P0–P2 recall: — (no P0–P2 label scored; target ≥ {RECALL_TARGET})"
    verdict = "met" if recall >= RECALL_TARGET else "NOT met"
    return (
        f"P0–P2 recall: {report.blocking.matched}/{report.blocking.labels} = {recall:.2f} "
        f"(target ≥ {RECALL_TARGET}: {verdict})"
    )


def _miss_line(m: Miss) -> str:
    lab = m.label
    field_note = f" field `{lab.field}`" if lab.field else ""
    return f"{m.case_id} {lab.severity} {lab.path}:{lab.line}{field_note} — {_cut(lab.why or '(no why)')}"


def _fp_line(s: Scored) -> str:
    f = s.finding
    why = "forbidden" if s.outcome == "fp-forbid" else "unlabelled"
    return f"{s.case_id} {f.rule} {f.severity} {f.path}:{f.line} ({why}) — {_cut(f.title)}"


def _pass_lines(report: Report) -> list[tuple[str, list[str]]]:
    """Each pass case with a P0–P2 finding, and those findings (rule severity path:line, outcome)."""
    out = []
    for c in report.pass_cases_flagged:
        found = [
            f"{s.finding.rule} {s.finding.severity} {s.finding.path}:{s.finding.line} ({s.outcome})"
            for s in report.scored
            if s.case_id == c.case_id and s.finding.severity in BLOCKING
        ]
        out.append((f"{c.case_id}: {c.blocking_findings} finding(s) at P0–P2", found))
    return out


def _timing_rows(runs: Sequence[CaseRun]) -> list[list[str]]:
    done = sorted((r for r in runs if r.findings is not None), key=lambda r: -r.seconds)
    rows = []
    for r in done:
        index = r.timings_ms.get("index")
        rows.append(
            [
                r.case.id,
                f"{r.seconds:.1f}",
                "—" if r.cpu_seconds is None else f"{r.cpu_seconds:.1f}",
                "—" if index is None else f"{index / 1000:.1f}",
                str(len(r.findings or [])),
                "slow" if r.seconds > SLOW_SECONDS else "",
            ]
        )
    return rows


TIMING_HEADER = ["case", "wall s", "CPU s", "index s", "findings", ""]


def _not_run(runs: Sequence[CaseRun]) -> tuple[list[CaseRun], list[CaseRun]]:
    return [r for r in runs if r.skipped], [r for r in runs if r.error]


def overall_precision(report: Report) -> float | None:
    tp = sum(r.tp for r in report.rules)
    fp = sum(r.fp for r in report.rules)
    return tp / (tp + fp) if tp + fp else None


def blocking_precision(report: Report) -> tuple[int, int]:
    """(true, scored) P0–P2 findings: the precision of what blocks a merge. Duplicates and findings on
    `allow` labels are neither, as in `overall_precision`."""
    tp = sum(1 for s in report.scored if s.finding.severity in BLOCKING and s.outcome == "tp")
    fp = sum(1 for s in report.scored if s.finding.severity in BLOCKING and s.outcome.startswith("fp"))
    return tp, tp + fp


def clean_share(report: Report) -> tuple[int, int]:
    """(clean commits with a P0–P2 finding, clean commits)."""
    return len(report.pass_cases_flagged), sum(c.verdict == "pass" for c in report.cases)


def split_of(runs: Sequence[CaseRun], split: str, lang: str | None = None) -> list[CaseRun]:
    return [r for r in runs if r.case.split == split and (lang is None or r.case.lang == lang)]


def score_runs(runs: Sequence[CaseRun], known: Iterable[str] | None) -> Report:
    return score([(r.case, r.findings) for r in runs if r.findings is not None], known)


def parse_incomplete(runs: Sequence[CaseRun]) -> list[CaseRun]:
    """Reviews that said INCOMPLETE with an unparsable-code note (a parse error on a changed line)."""
    return [r for r in runs if r.status == "INCOMPLETE" and r.unparsable]


SUMMARY_HEADER = [
    "split",
    "lang",
    "cases",
    "findings",
    "precision (±1 band)",
    "P0–P2 precision",
    "P0–P2 recall",
    "clean commits with P0–P2",
    "INCOMPLETE by parse error",
]


def summary_rows(runs: Sequence[CaseRun], known: Iterable[str] | None) -> list[list[str]]:
    rows = []
    known = list(known) if known is not None else None
    for split in SPLITS[::-1]:  # test first: the figure that counts
        for lang in (None, *LANGS):
            part = [r for r in split_of(runs, split, lang) if r.findings is not None]
            if not part:
                continue
            rep = score_runs(part, known)
            flagged, clean = clean_share(rep)
            b = rep.blocking
            held, blocking = blocking_precision(rep)
            rows.append(
                [
                    split,
                    lang or "all",
                    str(len(part)),
                    str(sum(len(r.findings or []) for r in part)),
                    _fmt(overall_precision(rep)),
                    f"{held}/{blocking} = {ratio(held, blocking)}",
                    f"{b.matched}/{b.labels} = {_fmt(b.recall)}",
                    f"{flagged}/{clean} = {ratio(flagged, clean)}",
                    str(len(parse_incomplete(part))),
                ]
            )
    return rows


def confusion_rows(report: Report) -> list[list[str]]:
    cols = [*SEVERITIES, "missed"]
    return [
        [f"labelled {sev}", *(str(report.confusion.get(sev, {}).get(c, 0)) for c in cols)]
        for sev in SEVERITIES
        if sev in report.confusion
    ]


CONFUSION_HEADER = ["", "reported P0", "reported P1", "reported P2", "reported P3", "missed"]


def kind_rows(report: Report) -> list[list[str]]:
    """Recall of the P0–P2 labels by kind (the rule id, or the `kind` of an `other` label)."""
    kinds: dict[str, list[int]] = {}
    miss_ids = {id(m.label) for m in report.misses}
    for lab in report.labels:
        if lab.severity not in BLOCKING:
            continue
        row = kinds.setdefault(lab.miss_kind, [0, 0])
        row[1] += 1
        if id(lab) not in miss_ids:
            row[0] += 1
    return [
        [kind, f"{m}/{n}", ratio(m, n)]
        for kind, (m, n) in sorted(kinds.items(), key=lambda kv: (-kv[1][1], kv[0]))
    ]


HIDDEN_CASES = (
    "per-case lists are not printed for the test split: a test case read is a test case tuned on "
    "(`--show-test-cases` prints them; a case read that way moves to train)"
)


def format_split_text(name: str, report: Report, cases_listed: bool = True) -> list[str]:
    out = [f"== {name} split", _text_table(RULE_HEADER, rule_rows(report)), ""]
    out += [
        _text_table(["band", "labels", "matched", "recall"], _band_rows(report)),
        _target_line(report),
        "",
    ]
    out += [_text_table(CONFUSION_HEADER, confusion_rows(report)), ""]
    out += [_text_table(["kind (P0–P2)", "matched", "recall"], kind_rows(report)), ""]
    if not cases_listed:
        flagged, clean = clean_share(report)
        out.append(f"false positives: {len(report.false_positives)}")
        out.append(f"pass cases with a P0–P2 finding: {flagged}/{clean}")
        return [*out, HIDDEN_CASES]
    out.append("misses (P0–P2) by kind:")
    for kind, misses in report.misses_by_kind():
        out.append(f"  {kind}: {len(misses)}")
        out += [f"    {_miss_line(m)}" for m in misses]
    out.append(f"false positives: {len(report.false_positives)}")
    out += [f"  {_fp_line(s)}" for s in report.false_positives]
    flagged, clean = clean_share(report)
    out.append(f"pass cases with a P0–P2 finding: {flagged}/{clean}")
    for head, found in _pass_lines(report):
        out += [f"  {head}", *(f"    {f}" for f in found)]
    return out


def format_text(
    report: Report,
    runs: Sequence[CaseRun],
    known: Iterable[str] | None = None,
    show_test_cases: bool = False,
) -> str:
    skipped, failed = _not_run(runs)
    scored = len(runs) - len(skipped) - len(failed)
    out = [f"cases: {len(runs)} ({scored} scored, {len(skipped)} skipped, {len(failed)} failed)", ""]
    out += [_text_table(SUMMARY_HEADER, summary_rows(runs, known)), ""]
    for split in SPLITS[::-1]:
        part = split_of(runs, split)
        if part:
            listed = show_test_cases or split != "test"
            out += [*format_split_text(split, score_runs(part, known), listed), ""]
    for r in parse_incomplete(runs):
        out.append(f"INCOMPLETE by parse error {r.case.id}: {', '.join(r.unparsable)}")
    out += ["", _text_table(TIMING_HEADER, _timing_rows(runs))]
    for r in failed:
        out.append(f"FAILED {r.case.id}: {r.error}")
    return "\n".join(out)


def _md_split(name: str, report: Report, cases_listed: bool = True) -> list[str]:
    out = [
        f"## {name.capitalize()} split",
        "",
        "### Per rule",
        "",
        _md_table(RULE_HEADER, rule_rows(report)),
        "",
        "### Recall by severity",
        "",
        _md_table(["band", "labels", "matched", "recall"], _band_rows(report)),
        "",
        f"**{_target_line(report)}** — over all rules, labels of rule ids reviewbot does not have count "
        "as misses.",
        "",
        "### Severity confusion",
        "",
        "Each expected label's band against the band of the nearest finding at its place (same rule, "
        "path, line and field, any severity).",
        "",
        _md_table(CONFUSION_HEADER, confusion_rows(report)),
        "",
        "### P0–P2 recall by kind",
        "",
        _md_table(["kind", "matched", "recall"], kind_rows(report)),
        "",
    ]
    if not cases_listed:
        flagged, clean = clean_share(report)
        out += [
            f"False positives: {len(report.false_positives)}. Clean commits with a P0–P2 finding: "
            f"{flagged} of {clean}.",
            "",
            f"The test split's {HIDDEN_CASES}.",
        ]
        return [*out, ""]
    out += ["### Misses (P0–P2) by kind", ""]
    kinds = report.misses_by_kind()
    if not kinds:
        out.append("None.")
    for kind, misses in kinds:
        implemented = misses[0].implemented
        note = (
            " (no such rule in reviewbot)" if implemented is False and not kind.startswith(OTHER_RULE) else ""
        )
        out.append(f"- **{kind}**{note}: {len(misses)}")
        out += [f"  - {_miss_line(m)}" for m in misses]
    out += ["", f"### False positives ({len(report.false_positives)})", ""]
    if not report.false_positives:
        out.append("None.")
    out += [f"- {_fp_line(s)}" for s in report.false_positives]
    flagged, clean = clean_share(report)
    out += ["", f"### Clean commits with a P0–P2 finding ({flagged} of {clean})", ""]
    if not flagged:
        out.append("None.")
    for head, found in _pass_lines(report):
        out += [f"- {head}", *(f"  - {f}" for f in found)]
    return [*out, ""]


STANDING_HEADER = [
    "rule",
    "declared",
    "train commits where it fires correctly",
    "test findings",
    "test precision",
    "test P0–P2 findings",
    "test P0–P2 precision",
    "standing",
]


def standing_rows(runs: Sequence[CaseRun], known: dict[str, str]) -> list[list[str]]:
    """Each rule's standing by the rules of issues #23/#24: it fires correctly (TP) on at least
    STANDING_TRAIN_COMMITS train commits, and on the test split the precision of its P0–P2 findings
    (the ones that block a merge) is at least PROBATION_PRECISION; a rule declared P3 is a nit and
    does not gate a merge. A rule that lowers a finding it cannot back to P3 keeps that finding out of
    the bar (it no longer blocks), but not out of the `test precision` column, which counts them all."""
    train = score_runs(split_of(runs, "train"), known)
    test = score_runs(split_of(runs, "test"), known)
    fired: dict[str, set[str]] = {}
    for s in train.scored:
        if s.outcome == "tp":
            fired.setdefault(s.finding.rule, set()).add(s.case_id)
    blocking: dict[str, list[int]] = {}  # rule -> [tp, fp] of its P0–P2 test findings
    for s in test.scored:
        if s.finding.severity in BLOCKING and (s.outcome == "tp" or s.outcome.startswith("fp")):
            blocking.setdefault(s.finding.rule, [0, 0])[0 if s.outcome == "tp" else 1] += 1
    by_rule = {r.rule: r for r in test.rules}
    rows = []
    for rule_id in sorted(known):
        commits = len(fired.get(rule_id, ()))
        r = by_rule.get(rule_id)
        scored = (r.tp + r.fp) if r else 0
        tp, fp = blocking.get(rule_id, [0, 0])
        held = tp / (tp + fp) if tp + fp else None
        rows.append(
            [
                rule_id,
                known[rule_id] or "—",
                str(commits),
                str(scored),
                _fmt(r.precision if r else None),
                str(tp + fp),
                _fmt(held),
                _standing(known[rule_id], commits, held),
            ]
        )
    return rows


OPT_IN_MARK = "(opt-in)"


def _standing(declared: str, commits: int, held: float | None) -> str:
    if declared.endswith(OPT_IN_MARK):
        return "opt-in: off unless a repository enables it (not run on the corpus)"
    if declared == "P3":
        return "P3 (a nit: not held to the bar)"
    if commits < STANDING_TRAIN_COMMITS:
        return f"under {STANDING_TRAIN_COMMITS} train commits"
    if held is None:
        return "no P0–P2 test finding yet: unproven"
    return "holds" if held >= PROBATION_PRECISION else "below the bar on test"


EXECUTED_TABLES_DOC = ROOT / "docs" / "executed-tables.md"


def executed_tables_section(doc: Path) -> list[str]:
    """The totals of the executed truth tables on real commits, as `bench/executed_tables.py` last wrote
    them (that bench reviews with the test stage, which this one does not), with where they come from."""
    if not doc.is_file():
        return []
    lines = doc.read_text(encoding="utf-8").splitlines()
    generated = next((line for line in lines if line.startswith("Generated by")), "")
    try:
        start = lines.index("## Totals") + 1
    except ValueError:
        return []
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    totals = [line for line in lines[start:end] if line.strip()]
    return [
        "## Executed truth tables on real commits",
        "",
        f"From [{doc.name}]({doc.name}) ({generated.split(';')[0].rstrip('.').replace('Generated', 'generated', 1)}):",
        "",
        *totals,
        "",
    ]


def format_markdown(
    report: Report,
    runs: Sequence[CaseRun],
    meta: dict[str, str],
    known: Iterable[str] | None = None,
    show_test_cases: bool = False,
) -> str:
    skipped, failed = _not_run(runs)
    scored = len(runs) - len(skipped) - len(failed)
    repos: dict[str, int] = {}
    for r in runs:
        repos[r.case.repo] = repos.get(r.case.repo, 0) + 1
    out = [
        "# Accuracy on the labelled corpus",
        "",
        "<!-- Generated by `python3 bench/accuracy.py --write docs/accuracy.md`; do not edit by hand. -->",
        "",
        f"Measured on {meta['date']} at reviewbot commit `{meta['commit']}`{meta.get('dirty', '')}, "
        f"`--no-tests` reviews, by `{meta['command']}`.",
        "",
        f"Corpus: {len(runs)} cases ({scored} scored, {len(skipped)} skipped, {len(failed)} failed) from "
        + ", ".join(f"{repo} ({n})" for repo, n in sorted(repos.items()))
        + ". The repository keeps only the manifests (`bench/corpus/*.yaml`); each case is reviewed from "
        "the fetched copy of its repository.",
        "",
        SPLIT_NOTE,
        "",
        _md_table(SUMMARY_HEADER, summary_rows(runs, known)),
        "",
        "A finding matches a label when the rule ids and paths are equal, the lines are at most "
        f"{LINE_TOLERANCE} apart, when the label names a field the finding names it (its `extra.field` "
        f"or `extra.binding`, else its text), and its severity is the label's or {SEVERITY_BAND} band away. Each expected "
        "label counts once (further findings on it are duplicates, neither TP nor FP); a label is matched too when a true "
        "positive names its line as one more place of the same problem (`extra.also`); findings on `allow` "
        "labels are neutral; a finding at a labelled place but more than one band off, or on a `forbid` "
        "label, or on no label, is a false positive. Precision = TP / (TP + FP); recall = matched / "
        f"expected labels. Probation: precision under {PROBATION_PRECISION} with at least "
        f"{PROBATION_MIN_FINDINGS} scored findings. Clean commits: at most {CLEAN_TARGET:.0%} may get a "
        "P0–P2 finding.",
        "",
    ]
    if isinstance(known, dict):
        out += [
            "## Rule standing",
            "",
            f"A rule stands when it fires correctly on at least {STANDING_TRAIN_COMMITS} train commits and "
            f"the test-split precision of its P0–P2 findings (those that block a merge) is at least "
            f"{PROBATION_PRECISION}; a rule declared P3 is a nit and is not held to that bar. `declared` is "
            "the rule's own severity (`reviewbot rules`); a finding may be raised or lowered from it by what "
            "the rule sees, and a finding a rule lowers to P3 no longer blocks: it leaves the bar but stays "
            "in `test precision`, which counts every finding.",
            "",
            _md_table(STANDING_HEADER, standing_rows(runs, known)),
            "",
        ]
    for split in SPLITS[::-1]:
        part = split_of(runs, split)
        if part:
            out += _md_split(split, score_runs(part, known), show_test_cases or split != "test")
    out += executed_tables_section(EXECUTED_TABLES_DOC)
    broken = parse_incomplete(runs)
    out += ["## INCOMPLETE because of a parse error", ""]
    out += [f"- {r.case.id}: {', '.join(r.unparsable)}" for r in broken] or ["None."]
    out += [
        "",
        "## Time per case",
        "",
        f"Wall seconds of each `reviewbot run` process (cold, `--no-tests`), slowest first; "
        f"over {SLOW_SECONDS:.0f} s is marked slow. CPU s is the process's user + system time with its "
        "workers (the figure to compare on a busy machine); index s is reviewbot's own `index` stage. "
        f"Load average when the run started: {meta.get('load', '—')}.",
        "",
        _md_table(TIMING_HEADER, _timing_rows(runs)),
    ]
    if skipped or failed:
        out += ["", "## Not scored", ""]
        out += [f"- {r.skipped}" for r in skipped]
        out += [f"- failed {r.case.id}: {_cut(r.error or '', 300)}" for r in failed]
    return "\n".join(out) + "\n"


def to_json(
    report: Report, runs: Sequence[CaseRun], meta: dict[str, str], show_test_cases: bool = False
) -> dict[str, Any]:
    """The figures; the per-case lists (misses, false positives, flagged clean commits, case scores)
    leave the test split's cases out unless `show_test_cases`, as the printout and the page do."""
    hidden = set() if show_test_cases else {r.case.id for r in runs if r.case.split == "test"}

    def rule_json(r: RuleScore) -> dict[str, Any]:
        return {**asdict(r), "precision": r.precision, "recall": r.recall, "probation": r.probation}

    return {
        "test_cases_hidden": bool(hidden),
        "meta": meta,
        "rules": [rule_json(r) for r in report.rules],
        "bands": [{**asdict(b), "recall": b.recall} for b in report.bands],
        "blocking": {**asdict(report.blocking), "recall": report.blocking.recall, "target": RECALL_TARGET},
        "misses_by_kind": {
            kind: shown
            for kind, misses in report.misses_by_kind(SEVERITIES)
            if (shown := [{"case": m.case_id, **asdict(m.label)} for m in misses if m.case_id not in hidden])
        },
        "false_positives": [
            {
                "case": s.case_id,
                "rule": s.finding.rule,
                "severity": s.finding.severity,
                "path": s.finding.path,
                "line": s.finding.line,
                "reason": s.outcome,
                "title": _cut(s.finding.title),
            }
            for s in report.false_positives
            if s.case_id not in hidden
        ],
        "pass_cases_flagged": [c.case_id for c in report.pass_cases_flagged if c.case_id not in hidden],
        "cases": [asdict(c) for c in report.cases if c.case_id not in hidden],
        "runs": [
            {
                "case": r.case.id,
                "seconds": round(r.seconds, 2),
                "cpu_seconds": None if r.cpu_seconds is None else round(r.cpu_seconds, 2),
                "skipped": r.skipped,
                "error": r.error,
                "base": r.base,
                "via": r.via,
                "findings": None if r.findings is None else len(r.findings),
                "split": r.case.split,
                "lang": r.case.lang,
                "status": r.status,
                "unparsable": list(r.unparsable),
                "timings_ms": r.timings_ms,
            }
            for r in runs
        ],
    }


def measured_at(reviewbot: Reviewbot) -> dict[str, str]:
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"
    except OSError:  # pragma: no cover
        load = "—"
    return {
        "load": load,
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
        "commit": reviewbot.commit or "unknown",
        "dirty": " (with uncommitted changes under reviewbot/)" if reviewbot.dirty else "",
    }


# --------------------------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of *.yaml manifests")
    parser.add_argument(
        "--allow-uncommitted",
        action="store_true",
        help="also review cases of manifests git does not hold as they are (by default they are skipped: "
        "blind labels are committed before the first run)",
    )
    parser.add_argument("--only", help="only the cases whose id contains this")
    parser.add_argument(
        "--split",
        choices=SPLITS,
        help="only the cases of this split (tune rules with --split train: test cases are never looked at)",
    )
    parser.add_argument("--lang", choices=LANGS, help="only the cases of this language")
    parser.add_argument("--write", type=Path, help="write the markdown report here (e.g. docs/accuracy.md)")
    parser.add_argument("--jobs", type=int, default=1, help="reviews at a time (default 1)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=Path(os.environ.get(MIRRORS_ENV) or DEFAULT_MIRRORS),
        help=f"where fetched repositories are, as <owner>+<name>/repo (default ${MIRRORS_ENV} or {DEFAULT_MIRRORS})",
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where fallback clones go")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per review")
    parser.add_argument(
        "--dump",
        type=Path,
        help="write each case's JSON report (timings removed) here as <id>.json, to diff two revisions' reviews",
    )
    parser.add_argument(
        "--at",
        default="HEAD",
        help=f"review with reviewbot as committed at this revision of this repository (default HEAD), "
        f"or `{WORKTREE}`: the installed reviewbot, uncommitted edits included",
    )
    parser.add_argument(
        "--show-test-cases",
        action="store_true",
        help="also list the test split's misses and false positives case by case (a test case read this "
        "way is no longer blind: move it to train)",
    )
    args = parser.parse_args(argv)

    log_stream = sys.stderr if args.json else sys.stdout

    def log(msg: str) -> None:
        print(msg, file=log_stream, flush=True)

    try:
        cases = load_corpus(args.corpus, args.allow_uncommitted)
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.split:
        cases = [c for c in cases if c.split == args.split]
    if args.lang:
        cases = [c for c in cases if c.lang == args.lang]
    if args.only:
        cases = [c for c in cases if args.only in c.id]
        if not cases:
            print(f"error: no case id contains {args.only!r}", file=sys.stderr)
            return 2

    try:
        reviewbot = installed_reviewbot() if args.at == WORKTREE else reviewbot_at(args.at, args.cache)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    runner = Runner(args.mirrors, args.cache, reviewbot, timeout=args.timeout, dump=args.dump)
    meta = measured_at(reviewbot)  # before the run: the load average it started under
    lock = threading.Lock()

    def progress(r: CaseRun) -> None:
        with lock:
            if r.skipped:
                log(r.skipped)
            elif r.error:
                log(f"FAILED {r.case.id} ({r.seconds:.1f} s): {r.error}")
            else:
                cpu = "" if r.cpu_seconds is None else f" ({r.cpu_seconds:.1f} s CPU)"
                log(f"{r.case.id}: {r.seconds:.1f} s{cpu}, {len(r.findings or [])} findings")

    runs = run_all(cases, runner, max(1, args.jobs), progress)
    known = known_rule_ids(reviewbot)
    if known is None:
        log("note: `reviewbot rules` failed: rules reviewbot lacks are not marked")
    report = score([(r.case, r.findings) for r in runs if r.findings is not None], known)

    command = "python3 bench/accuracy.py" + (f" --only {args.only}" if args.only else "")
    command += f" --split {args.split}" if args.split else ""
    command += f" --lang {args.lang}" if args.lang else ""
    if args.corpus.resolve() != DEFAULT_CORPUS.resolve():
        command += f" --corpus {args.corpus}"
    if args.jobs > 1:
        command += f" --jobs {args.jobs}"
    if args.at != "HEAD":
        command += f" --at {args.at}"
    meta["command"] = command + (f" --write {args.write}" if args.write else "")

    if args.json:
        print(json.dumps(to_json(report, runs, meta, args.show_test_cases), indent=2, ensure_ascii=False))
    else:
        log("")
        log(format_text(report, runs, known, args.show_test_cases))
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(
            format_markdown(report, runs, meta, known, args.show_test_cases), encoding="utf-8"
        )
        log(f"wrote {args.write}")
    return 1 if any(r.error for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
