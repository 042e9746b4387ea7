"""bench/accuracy.py: the pure scoring, the manifest checks, the skip of absent mirrors, and one real run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.bench.scripts import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "accuracy.py"


acc = load_script("bench_accuracy", "accuracy.py")

SHA = "a" * 40
PATH = "pkg/derive.py"


def label(rule: str = "unconditional-override", line: int = 10, **kw: object) -> object:
    kw.setdefault("path", PATH)
    return acc.Label(rule=rule, line=line, **kw)


def expect(
    rule: str = "unconditional-override", line: int = 10, severity: str = "P2", **kw: object
) -> object:
    return label(rule, line, severity=severity, **kw)


def finding(
    rule: str = "unconditional-override",
    line: int = 10,
    severity: str = "P2",
    title: str = "a finding",
    field: str | None = None,
    path: str = PATH,
    evidence: list[str] | None = None,
) -> object:
    raw: dict[str, object] = {
        "rule": rule,
        "severity": severity,
        "path": path,
        "line": line,
        "title": title,
        "evidence": evidence or [],
        "extra": {"field": field} if field else {},
    }
    return acc.Finding.from_json(raw)


def case(case_id: str = "c1", verdict: str = "flag", **groups: object) -> object:
    return acc.Case(id=case_id, repo="acme/tiny", commit=SHA, verdict=verdict, **groups)


def rule_of(report: object, rule: str) -> object:
    return next(r for r in report.rules if r.rule == rule)


# ------------------------------------------------------------------------------------------ matching


@pytest.mark.parametrize(("line", "hit"), [(10, True), (13, True), (7, True), (14, False), (6, False)])
def test_line_tolerance_is_three(line: int, hit: bool) -> None:
    assert acc.matches(finding(line=line), label(line=10)) is hit


def test_rule_and_path_must_be_equal() -> None:
    assert not acc.matches(finding(rule="missing-tests"), label())
    assert not acc.matches(finding(path="pkg/other.py"), label())
    assert acc.matches(finding(path="./pkg/derive.py"), label())


def test_field_matches_the_findings_own_field_when_it_has_one() -> None:
    dtype = finding(rule="guard-ignores-coupled-flag", field="dtype", title="`dtype` stops; `head_num` named")
    assert acc.matches(dtype, label("guard-ignores-coupled-flag", field="dtype"))
    # the title names head_num, but the finding is about dtype
    assert not acc.matches(dtype, label("guard-ignores-coupled-flag", field="head_num"))
    dotted = finding(field="rope_config.style")
    assert acc.matches(dotted, label(field="style"))
    assert acc.matches(dotted, label(field="rope_config.style"))


def test_field_matches_the_codes_own_name_for_it_too() -> None:
    raw = {
        "rule": "always-true-guard",
        "severity": "P1",
        "path": PATH,
        "line": 10,
        "title": "`check_server` takes `MOONCAKE_CHECK_SERVER` as a raw environment string",
        "extra": {"field": "MOONCAKE_CHECK_SERVER", "binding": "check_server"},
    }
    f = acc.Finding.from_json(raw)
    assert acc.matches(f, label("always-true-guard", field="check_server"))
    assert acc.matches(f, label("always-true-guard", field="MOONCAKE_CHECK_SERVER"))
    # the binding widens the field by one name, not to the whole text
    assert not acc.matches(f, label("always-true-guard", field="raw"))


def test_field_is_a_whole_word_of_the_text_without_extra_field() -> None:
    f = finding(
        rule="duplicated-predicate",
        title="The predicate `style == No && !use_kvcache` is written twice",
        evidence=["also at pkg/derive.py:40 via need_rope_kv_cache"],
    )
    assert acc.matches(f, label("duplicated-predicate", field="use_kvcache"))
    assert acc.matches(f, label("duplicated-predicate", field="need_rope_kv_cache"))  # from the evidence
    assert not acc.matches(f, label("duplicated-predicate", field="kvcache"))
    assert not acc.matches(f, label("duplicated-predicate", field="use_kv"))


# ------------------------------------------------------------------------------------------ scoring


def test_true_positive_precision_and_recall() -> None:
    c = case(expect=(expect(line=10), expect(line=40)))
    report = acc.score([(c, [finding(line=12)])])
    r = rule_of(report, "unconditional-override")
    assert (r.findings, r.tp, r.fp, r.matched, r.labels) == (1, 1, 0, 1, 2)
    assert r.precision == 1.0 and r.recall == 0.5
    assert [m.label.line for m in report.misses] == [40]


def test_allow_is_neutral() -> None:
    c = case(expect=(expect(),), allow=(label("flag-overloading", line=20),))
    report = acc.score([(c, [finding(), finding("flag-overloading", line=21, severity="P3")])])
    fo = rule_of(report, "flag-overloading")
    assert (fo.findings, fo.tp, fo.fp, fo.allowed) == (1, 0, 0, 1)
    assert fo.precision is None
    assert report.false_positives == []


def test_forbid_and_unlabelled_findings_are_false_positives() -> None:
    c = case(forbid=(label(line=30, field="dtype"),))
    findings = [finding(line=31, field="dtype", title="forbidden one"), finding(line=80, title="stray")]
    report = acc.score([(c, findings)])
    r = rule_of(report, "unconditional-override")
    assert (r.tp, r.fp) == (0, 2)
    assert r.precision == 0.0 and r.recall is None
    assert [s.outcome for s in report.false_positives] == ["fp-forbid", "fp-unlabelled"]


def test_expect_wins_over_forbid_and_allow_on_the_same_line() -> None:
    c = case(expect=(expect(),), allow=(label(),), forbid=(label(),))
    report = acc.score([(c, [finding()])])
    assert rule_of(report, "unconditional-override").tp == 1


def test_duplicates_on_one_label_count_once() -> None:
    c = case(expect=(expect(line=10),))
    findings = [finding(line=13, title="far"), finding(line=10, title="near"), finding(line=11, title="mid")]
    report = acc.score([(c, findings)])
    r = rule_of(report, "unconditional-override")
    assert (r.findings, r.tp, r.fp, r.duplicates, r.matched) == (3, 1, 0, 2, 1)
    assert r.precision == 1.0
    tp = [s for s in report.scored if s.outcome == "tp"]
    assert [s.finding.title for s in tp] == ["near"]  # the nearest finding is the true positive
    assert len(report.duplicates) == 2


def test_a_true_finding_matches_the_further_places_it_names() -> None:
    c = case(
        expect=(
            expect("undefined-name", line=630, field="Store"),
            expect("undefined-name", line=759, field="Store"),
        )
    )
    raw = {
        "rule": "undefined-name",
        "severity": "P1",
        "path": PATH,
        "line": 630,
        "title": "`Store` is unbound",
    }
    named = acc.Finding.from_json({**raw, "extra": {"field": "Store", "also": "637,759"}})
    r = rule_of(acc.score([(c, [named])]), "undefined-name")
    assert (r.findings, r.tp, r.fp, r.matched, r.labels) == (1, 1, 0, 2, 2)  # counted once, both labels met
    # a finding that is not itself right credits nothing; nor does one that does not name the line
    wrong_field = acc.Finding.from_json({**raw, "extra": {"field": "Other", "also": "759"}})
    assert rule_of(acc.score([(c, [wrong_field])]), "undefined-name").matched == 0
    silent = acc.Finding.from_json({**raw, "extra": {"field": "Store"}})
    assert rule_of(acc.score([(c, [silent])]), "undefined-name").matched == 1


def test_each_label_takes_its_own_finding() -> None:
    # two labels two lines apart, two findings: one each, not one label twice
    c = case(expect=(expect(line=10), expect(line=12)))
    report = acc.score([(c, [finding(line=11), finding(line=13)])])
    r = rule_of(report, "unconditional-override")
    assert (r.tp, r.duplicates, r.matched, r.labels) == (2, 0, 2, 2)


def test_unknown_rule_in_labels_is_a_miss() -> None:
    c = case(
        expect=(
            expect(line=10, severity="P1"),
            expect("stale-cache-key", line=50, severity="P1", why="the cache key ignores dtype"),
            expect("other", line=70, severity="P2", kind="race condition"),
            expect("other", line=90, severity="P0", kind="race condition"),
            expect("stale-cache-key", line=99, severity="P3"),
        )
    )
    report = acc.score([(c, [finding(line=10)])], known_rules=["unconditional-override", "missing-tests"])
    stale = rule_of(report, "stale-cache-key")
    assert stale.implemented is False
    assert (stale.findings, stale.matched, stale.labels, stale.recall) == (0, 0, 2, 0.0)
    assert rule_of(report, "unconditional-override").implemented is True
    assert (report.blocking.matched, report.blocking.labels) == (1, 4)
    assert report.blocking.recall == 0.25
    bands = {b.severity: (b.matched, b.labels) for b in report.bands}
    assert bands == {"P0": (0, 1), "P1": (1, 2), "P2": (0, 1), "P3": (0, 1)}
    kinds = {kind: len(ms) for kind, ms in report.misses_by_kind()}
    assert kinds == {"other: race condition": 2, "stale-cache-key": 1}  # the P3 miss is not P0–P2
    text = "\n".join(acc.format_split_text("all", report))
    assert "P0–P2 recall: 1/4 = 0.25 (target ≥ 0.6: NOT met)" in text
    assert "not in reviewbot" in text


def test_other_label_whose_kind_is_a_rule_id_is_scored_as_that_rule() -> None:
    # labelled blind before the rule existed: `other` with the kind spelled as the rule id
    c = case(
        expect=(
            expect("other", line=10, severity="P1", kind="flag-removed-without-alias"),
            expect("other", line=40, severity="P1", kind="flag removed"),  # only resembles it
        )
    )
    found = [finding("flag-removed-without-alias", line=11, severity="P2")]
    report = acc.score([(c, found)], known_rules=["flag-removed-without-alias"])
    r = rule_of(report, "flag-removed-without-alias")
    assert (r.tp, r.fp, r.matched, r.labels) == (1, 0, 1, 1)
    assert [m.label.miss_kind for m in report.misses] == ["other: flag removed"]
    # without knowing reviewbot's rules the label stays `other` and the finding is unlabelled
    blind = acc.score([(c, found)])
    assert rule_of(blind, "flag-removed-without-alias").fp == 1


def test_pass_cases_with_a_blocking_finding_are_counted() -> None:
    quiet = case("quiet", verdict="pass")
    noisy = case("noisy", verdict="pass")
    p3only = case("p3only", verdict="pass")
    report = acc.score(
        [
            (quiet, []),
            (noisy, [finding(severity="P2"), finding(line=50, severity="P1")]),
            (p3only, [finding("flag-overloading", severity="P3")]),
        ]
    )
    assert [(c.case_id, c.blocking_findings) for c in report.pass_cases_flagged] == [("noisy", 2)]


def test_probation_needs_five_findings_under_point_nine() -> None:
    labels = tuple(expect(line=10 + 10 * i) for i in range(4))
    hits = [finding(line=10 + 10 * i) for i in range(4)]
    four = acc.score([(case(expect=labels[:3]), hits[:3] + [finding(line=500)])])
    assert rule_of(four, "unconditional-override").precision == 0.75
    assert not rule_of(four, "unconditional-override").probation
    five = acc.score([(case(expect=labels), [*hits, finding(line=500)])])
    r = rule_of(five, "unconditional-override")
    assert r.precision == 0.8 and r.probation
    assert "probation" in "\n".join(acc.format_split_text("all", five))


def test_undefined_ratios_print_as_a_dash() -> None:
    report = acc.score([(case(allow=(label(),)), [finding()])])
    row = next(r for r in acc.rule_rows(report) if r[0] == "unconditional-override")
    assert row[6] == "—" and row[8] == "—"
    assert acc.ratio(1, 0) == "—" and acc.ratio(1, 4) == "0.25"


# ------------------------------------------------------------------------------------------ manifests


def manifest(**case_fields: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "id": "tiny-1",
        "commit": SHA,
        "verdict": "flag",
        "expect": [{"rule": "missing-tests", "severity": "P1", "path": "a.py", "line": 3, "why": "w"}],
    }
    raw.update(case_fields)
    return {"repo": "acme/tiny", "cases": [{k: v for k, v in raw.items() if v is not None}]}


def test_a_valid_manifest_parses() -> None:
    data = manifest(base="b" * 40, allow=[{"rule": "x", "path": "a.py", "line": 1, "field": "f"}])
    (c,) = acc.parse_manifest(data, "tiny.yaml")
    assert (c.id, c.repo, c.commit, c.base, c.verdict) == ("tiny-1", "acme/tiny", SHA, "b" * 40, "flag")
    assert c.expect[0].severity == "P1" and c.allow[0].field == "f"
    assert c.mirror_name == "acme+tiny"
    (plain,) = acc.parse_manifest(manifest(), "tiny.yaml")
    assert plain.base is None  # reviewed against commit^


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"commit": None}, "case tiny-1: `commit` is missing"),
        ({"commit": "abc123"}, "case tiny-1: `commit` must be a full 40-hex sha"),
        (
            {"expect": [{"rule": "r", "severity": "P5", "path": "a.py", "line": 3}]},
            "case tiny-1: expect[0]: severity 'P5' is not one of P0, P1, P2, P3",
        ),
        (
            {"expect": [{"rule": "r", "path": "a.py", "line": 3}]},
            "case tiny-1: expect[0]: `severity` is missing",
        ),
        ({"verdict": "maybe"}, "case tiny-1: `verdict` must be one of flag, pass"),
        (
            {"forbid": [{"rule": "r", "path": "a.py", "line": 0}]},
            "forbid[0]: `line` must be a positive integer",
        ),
        (
            {"allow": [{"rule": "r", "path": "a.py", "line": 2, "feild": "x"}]},
            "allow[0]: unknown key(s) feild",
        ),
        ({"expcet": []}, "case tiny-1: unknown key(s) expcet"),
    ],
)
def test_a_bad_manifest_names_the_case(fields: dict[str, object], message: str) -> None:
    data = manifest(**fields)  # a None value leaves the key out
    with pytest.raises(acc.ManifestError) as err:
        acc.parse_manifest(data, "tiny.yaml")
    assert "tiny.yaml" in str(err.value)
    assert message in str(err.value)


def test_case_ids_are_unique_over_the_corpus(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(manifest()))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(manifest()))
    with pytest.raises(acc.ManifestError, match=r"case tiny-1: the id is also used in .*a\.yaml"):
        acc.load_corpus(tmp_path)
    with pytest.raises(acc.ManifestError, match="no \\*.yaml manifest"):
        acc.load_corpus(tmp_path / "empty")


# ------------------------------------------------------------------------------------------ running


def test_an_absent_mirror_is_skipped_with_the_fetch_to_run(tmp_path: Path) -> None:
    runner = acc.Runner(tmp_path / "mirrors", tmp_path / "cache", reviewbot=acc.Reviewbot(("false",)))
    run = runner.run(case("tiny-9"))
    assert run.skipped == "skip tiny-9: run fetch github:acme/tiny"
    assert run.findings is None and run.error is None


def test_a_commit_missing_from_the_mirror_is_skipped_too(tmp_path: Path) -> None:
    gitdir = tmp_path / "mirrors" / "acme+tiny" / "repo"
    subprocess.run(["git", "init", "-q", "--bare", str(gitdir)], check=True)
    run = acc.Runner(tmp_path / "mirrors", tmp_path / "cache", reviewbot=acc.Reviewbot(("false",))).run(
        case("tiny-9")
    )
    assert run.skipped == "skip tiny-9: commit aaaaaaaaaaaa is not in the mirror; run fetch github:acme/tiny"


def test_reviewbot_at_a_commit_runs_that_commits_code(tmp_path: Path) -> None:
    rb = acc.reviewbot_at("HEAD", tmp_path)
    exported = tmp_path / f"reviewbot-{acc._here('rev-parse', 'HEAD').stdout.strip()[:12]}"
    assert (exported / "reviewbot" / "cli.py").is_file()
    assert dict(rb.env)["PYTHONPATH"].split(os.pathsep)[0] == str(exported)
    known = acc.known_rule_ids(rb) or {}
    assert known["missing-tests"] == "P1" and known["flag-overloading"] == "P3"  # with declared severities
    assert known["flag-removed-without-alias"] == "P3 (opt-in)"  # off unless a repository enables it
    assert acc.reviewbot_at("HEAD", tmp_path) == rb  # exported once
    with pytest.raises(ValueError, match="not a commit"):
        acc.reviewbot_at("no-such-revision", tmp_path)


def test_a_review_past_its_timeout_is_killed(tmp_path: Path) -> None:
    slow = acc._run_timed(["sleep", "30"], dict(os.environ), tmp_path, timeout=0.3)
    assert slow.timed_out and slow.seconds < 10
    quick = acc._run_timed([sys.executable, "-c", "print('hi')"], dict(os.environ), tmp_path, timeout=30)
    assert (quick.timed_out, quick.returncode, quick.stdout.strip()) == (False, 0, "hi")
    assert quick.cpu_seconds is not None and quick.cpu_seconds > 0


BASE_PY = """\
class Config:
    def __init__(self):
        self.use_cache = True
        self.fast_path = True
        self.mode = "a"


def derive(cfg):
    if cfg.mode == "b":
        cfg.use_cache = False
    return cfg
"""
FLAG_PY = BASE_PY.replace(
    "    return cfg\n",
    "    if cfg.use_cache:\n        cfg.fast_path = False\n    return cfg\n",
)
NOTE_PY = FLAG_PY + "\n\n# a note for readers\n"


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def _commit(work: Path, text: str, message: str) -> str:
    (work / "pkg" / "config.py").write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", message)
    return _git(work, "rev-parse", "HEAD")


def test_end_to_end_on_a_tiny_mirror(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    # the project tests this config code (missing-tests asks nothing where no test mentions it)
    (work / "tests").mkdir()
    (work / "tests" / "test_config.py").write_text("def test_fast_path(cfg):\n    assert cfg.fast_path\n")
    _git(work, "init", "-q", "-b", "main")
    _commit(work, BASE_PY, "base")
    flag = _commit(work, FLAG_PY, "derive fast_path")
    note = _commit(work, NOTE_PY, "a comment")
    mirrors = tmp_path / "mirrors"
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(mirrors / "acme+tiny" / "repo"))

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    path = "pkg/config.py"
    # whether the override rule fires here is not what this test is about
    allow_override = {"rule": "unconditional-override", "path": path, "line": 12}
    (corpus / "tiny.yaml").write_text(
        yaml.safe_dump(
            {
                "repo": "acme/tiny",
                "cases": [
                    {
                        "id": "tiny-flag",
                        "commit": flag,
                        "verdict": "flag",
                        "expect": [
                            # reviewbot reports the guard line (11): within the tolerance; the
                            # default (`use_cache` on) takes the row: P1, one band from P2
                            {
                                "rule": "missing-tests",
                                "severity": "P2",
                                "path": path,
                                "line": 12,
                                "field": "fast_path",
                            },
                            {
                                "rule": "no-such-rule",
                                "severity": "P2",
                                "path": path,
                                "line": 1,
                                "why": "not built",
                            },
                        ],
                        "allow": [allow_override],
                    },
                    {
                        # the same commit labelled the other way: the finding is a false positive here
                        "id": "tiny-forbid",
                        "commit": flag,
                        "verdict": "flag",
                        "allow": [allow_override],
                        "forbid": [{"rule": "missing-tests", "path": path, "line": 11, "field": "fast_path"}],
                    },
                    {"id": "tiny-pass", "commit": note, "verdict": "pass"},
                ],
            }
        )
    )
    (corpus / "absent.yaml").write_text(
        yaml.safe_dump(
            {"repo": "acme/absent", "cases": [{"id": "absent-1", "commit": SHA, "verdict": "pass"}]}
        )
    )
    doc = tmp_path / "accuracy.md"
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--corpus",
            str(corpus),
            "--mirrors",
            str(mirrors),
            "--cache",
            str(tmp_path / "cache"),
            "--at",
            "worktree",  # this work tree's reviewbot, as the other tests
            "--json",
            "--write",
            str(doc),
            "--dump",
            str(tmp_path / "dump"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    # --dump keeps each reviewed case's report, without the timings that differ run to run
    dumped = {p.name: json.loads(p.read_text()) for p in (tmp_path / "dump").iterdir()}
    assert sorted(dumped) == ["tiny-flag.json", "tiny-forbid.json", "tiny-pass.json"]
    assert (
        len(dumped["tiny-flag.json"]["findings"]) == len(dumped["tiny-forbid.json"]["findings"]) == 1
        and dumped["tiny-pass.json"]["findings"] == []
    )
    assert all("timings_ms" not in d["kpi"] and "reviewed_at" not in json.dumps(d) for d in dumped.values())
    assert "skip absent-1: run fetch github:acme/absent" in out.stderr
    result = json.loads(out.stdout)
    rules = {r["rule"]: r for r in result["rules"]}
    mt = rules["missing-tests"]
    assert (mt["findings"], mt["tp"], mt["fp"], mt["matched"], mt["labels"]) == (2, 1, 1, 1, 1)
    assert mt["precision"] == 0.5 and mt["recall"] == 1.0
    nr = rules["no-such-rule"]
    assert (nr["implemented"], nr["matched"], nr["labels"], nr["recall"]) == (False, 0, 1, 0.0)
    assert (result["blocking"]["matched"], result["blocking"]["labels"], result["blocking"]["recall"]) == (
        1,
        2,
        0.5,
    )
    assert list(result["misses_by_kind"]) == ["no-such-rule"]
    assert [(f["case"], f["rule"], f["line"], f["reason"]) for f in result["false_positives"]] == [
        ("tiny-forbid", "missing-tests", 11, "fp-forbid")
    ]
    assert result["pass_cases_flagged"] == []
    runs = {r["case"]: r for r in result["runs"]}
    assert runs["tiny-pass"]["findings"] == 0 and runs["tiny-flag"]["seconds"] > 0
    assert runs["absent-1"]["skipped"] and runs["absent-1"]["findings"] is None

    text = doc.read_text()
    assert "| missing-tests | 2 | 1 | 1 | 0 | 0 | 0.50 | 1/1 | 1.00 |  |" in text
    assert "| no-such-rule | 0 | 0 | 0 | 0 | 0 | — | 0/1 | 0.00 | not in reviewbot |" in text
    # the severity is missing-tests' own (who reaches the row); the line names it before the place
    assert re.search(
        r"- tiny-forbid missing-tests P[0-3] pkg/config.py:11 \(forbidden\) — The new derivation", text
    )
    assert "**P0–P2 recall: 1/2 = 0.50 (target ≥ 0.6: NOT met)**" in text
    assert "- **no-such-rule** (no such rule in reviewbot): 1" in text
    assert "Measured on " in text and "at reviewbot commit `" in text
    assert "- skip absent-1: run fetch github:acme/absent" in text


def test_alternate_mirrors_are_tried_in_order_and_named_in_the_skip(tmp_path: Path) -> None:
    data = {
        "repo": "up/stream",
        "mirrors": ["fork/stream"],
        "cases": [{"id": "s-1", "commit": SHA, "verdict": "pass"}],
    }
    (case,) = acc.parse_manifest(data, "m.yaml")
    assert case.mirror_names == ("up+stream", "fork+stream")
    runner = acc.Runner(tmp_path, tmp_path / "cache", "reviewbot", timeout=5)
    assert runner.gitdir(case) == tmp_path / "up+stream" / "repo"  # neither present: the upstream is named
    assert "fetch github:up/stream or fetch github:fork/stream" in acc.skip_message(case)
    (tmp_path / "fork+stream" / "repo").mkdir(parents=True)
    assert runner.gitdir(case) == tmp_path / "fork+stream" / "repo"
    with pytest.raises(acc.ManifestError, match="`mirrors` must be a list"):
        acc.parse_manifest({**data, "mirrors": "fork/stream"}, "m.yaml")


# ------------------------------------------------------------------------------------------ severity and splits


def test_a_finding_is_true_only_within_one_band_of_the_label() -> None:
    c = case(expect=(expect(severity="P1"),))
    assert [s.outcome for s in acc.score_case(c, [finding(severity="P2")])] == ["tp"]
    # two bands off: at the labelled place, but a false positive, and the label is not recalled
    report = acc.score([(c, [finding(severity="P3")])])
    assert [s.outcome for s in report.scored] == ["fp-severity"]
    assert (report.blocking.matched, report.blocking.labels) == (0, 1)
    assert report.confusion == {"P1": {"P3": 1}}


def test_a_nit_raised_as_blocking_on_an_allow_label_is_a_false_positive() -> None:
    c = case(verdict="pass", allow=(label("stale-comment", severity="P3"),))
    assert [s.outcome for s in acc.score_case(c, [finding("stale-comment", severity="P2")])] == ["allowed"]
    assert [s.outcome for s in acc.score_case(c, [finding("stale-comment", severity="P1")])] == [
        "fp-severity"
    ]


def test_confusion_counts_misses_and_the_nearest_band() -> None:
    c = case(expect=(expect(severity="P0"), expect("missing-tests", line=50, severity="P1")))
    report = acc.score([(c, [finding(severity="P3"), finding(severity="P1")])])
    assert report.confusion == {"P0": {"P1": 1}, "P1": {"missed": 1}}
    assert ["labelled P0", "0", "1", "0", "0", "0"] in acc.confusion_rows(report)


def test_summary_rows_put_test_first_and_count_parse_incomplete() -> None:
    test_case = acc.Case(id="t", repo="acme/tiny", commit=SHA, verdict="pass", split="test", lang="cpp")
    train_case = acc.Case(id="r", repo="acme/tiny", commit=SHA, verdict="flag", expect=(expect(),))
    runs = [
        acc.CaseRun(test_case, [finding(severity="P1")], status="INCOMPLETE", unparsable=("a.cc",)),
        acc.CaseRun(train_case, [finding()], status="LGTM"),
    ]
    rows = acc.summary_rows(runs, None)
    assert [r[:2] for r in rows] == [["test", "all"], ["test", "cpp"], ["train", "all"], ["train", "python"]]
    assert (
        rows[0][7] == "1/1 = 1.00" and rows[0][8] == "1"
    )  # the clean commit was flagged; one parse INCOMPLETE
    assert rows[0][5] == "0/1 = 0.00"  # its P1 blocks a clean commit: a blocking false positive
    assert rows[2][4] == "1.00" and rows[2][5] == "1/1 = 1.00" and rows[2][6] == "1/1 = 1.00"
    assert [r.case.id for r in acc.parse_incomplete(runs)] == ["t"]
    text = acc.format_text(acc.score_runs(runs, None), runs)
    assert text.index("== test split") < text.index("== train split")


def test_rule_standing_needs_three_train_commits_and_test_precision() -> None:
    def train(cid: str) -> object:
        return acc.Case(id=cid, repo="acme/tiny", commit=SHA, verdict="flag", expect=(expect(),))

    held_out = acc.Case(
        id="t1", repo="acme/tiny", commit=SHA, verdict="flag", split="test", expect=(expect(),)
    )
    runs = [acc.CaseRun(train(f"r{i}"), [finding()]) for i in range(3)]
    runs.append(acc.CaseRun(train("r9"), [finding("missing-tests", line=50, severity="P1")]))  # an FP
    # on test: one TP, one FP of the override rule; nothing of the others
    runs.append(acc.CaseRun(held_out, [finding(), finding(line=80)]))
    known = {"unconditional-override": "P2", "missing-tests": "P1", "flag-overloading": "P3"}
    rows = {r[0]: r for r in acc.standing_rows(runs, known)}
    assert rows["unconditional-override"] == [
        "unconditional-override",
        "P2",
        "3",
        "2",
        "0.50",
        "2",
        "0.50",
        "below the bar on test",
    ]
    assert rows["missing-tests"][2:] == ["0", "0", "—", "0", "—", "under 3 train commits"]
    # the same FP lowered to P3 by the rule no longer blocks: the bar holds, the precision column does not
    runs[-1] = acc.CaseRun(held_out, [finding(), finding(line=80, severity="P3")])
    lowered = {r[0]: r for r in acc.standing_rows(runs, known)}["unconditional-override"]
    assert lowered[3:] == ["2", "0.50", "1", "1.00", "holds"]
    assert rows["flag-overloading"][-1] == "P3 (a nit: not held to the bar)"
    opt_in = acc.standing_rows(runs, {**known, "flag-overloading": "P3 (opt-in)"})
    assert {r[0]: r for r in opt_in}["flag-overloading"][-1].startswith("opt-in: off unless")


def test_the_executed_tables_totals_are_quoted_with_their_source(tmp_path: Path) -> None:
    doc = tmp_path / "executed-tables.md"
    assert acc.executed_tables_section(doc) == []  # not generated yet: nothing to quote
    doc.write_text(
        "# Executed truth tables on real commits\n\nGenerated by `python3 bench/executed_tables.py` at "
        "reviewbot abc on 2026-12-06.\n\n## Totals\n\n- commits: 3; executed: 1\n- rows run: 4\n\n## Per commit\n"
    )
    section = acc.executed_tables_section(doc)
    assert section[0] == "## Executed truth tables on real commits"
    assert "generated by `python3 bench/executed_tables.py` at reviewbot abc on 2026-12-06" in section[2]
    assert section[4:6] == ["- commits: 3; executed: 1", "- rows run: 4"]
    assert "## Per commit" not in section


def test_manifests_whose_labels_are_not_committed_are_not_reviewed(tmp_path: Path) -> None:
    # Blind labels are committed before reviewbot first runs on them: the bench holds back a manifest
    # git does not have as it is (new, or edited since the last commit).
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    manifest = (
        "repo: acme/tiny\ncases:\n  - id: {id}\n    commit: "
        + SHA
        + "\n    verdict: pass\n    split: train\n"
    )
    (corpus / "a.yaml").write_text(manifest.format(id="a1"))
    run = ["git", "-C", str(tmp_path)]
    subprocess.run([*run, "init", "-q"], check=True)
    subprocess.run([*run, "add", "corpus/a.yaml"], check=True)
    subprocess.run(
        [*run, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "labels"], check=True
    )
    (corpus / "b.yaml").write_text(manifest.format(id="b1"))  # labelled, not committed
    assert [c.id for c in acc.load_corpus(corpus)] == ["a1"]
    (corpus / "a.yaml").write_text(manifest.format(id="a2"))  # a committed manifest edited
    assert [c.id for c in acc.load_corpus(corpus)] == []
    assert [c.id for c in acc.load_corpus(corpus, allow_uncommitted=True)] == ["a2", "b1"]


def test_test_split_cases_are_not_listed_unless_asked() -> None:
    # whoever tunes rules reads the published page: the test split shows figures, not its cases
    held_out = acc.Case(
        id="held-out-case", repo="acme/tiny", commit=SHA, verdict="flag", split="test", expect=(expect(),)
    )
    tuned = acc.Case(id="tuned-case", repo="acme/tiny", commit=SHA, verdict="flag", expect=(expect(),))
    runs = [
        acc.CaseRun(held_out, [finding(line=80)]),  # a false positive, and the label missed
        acc.CaseRun(tuned, [finding(line=80)]),
    ]
    report = acc.score_runs(runs, None)
    meta = {"date": "2026-12-06", "commit": "abc", "dirty": "", "load": "—", "command": "x"}

    def lists(text: str) -> list[str]:  # the lines naming a case with a finding or a missed label
        return [line for line in text.splitlines() if "-case" in line and "unconditional-override" in line]

    for text in (acc.format_text(report, runs), acc.format_markdown(report, runs, meta)):
        named = lists(text)
        assert named and all("tuned-case" in line for line in named)
        assert "--show-test-cases" in text
    for text in (
        acc.format_text(report, runs, show_test_cases=True),
        acc.format_markdown(report, runs, meta, show_test_cases=True),
    ):
        assert any("held-out-case" in line for line in lists(text))
    hidden = acc.to_json(report, runs, meta)
    assert hidden["test_cases_hidden"] and "held-out-case" not in json.dumps(
        {k: hidden[k] for k in ("misses_by_kind", "false_positives", "pass_cases_flagged", "cases")}
    )
    shown = acc.to_json(report, runs, meta, show_test_cases=True)
    assert "held-out-case" in json.dumps(shown["false_positives"])
