"""parse.parse_many: the same facts, in order, whether files are parsed in a pool or in-process."""

from __future__ import annotations

from reviewbot.lang.build import NameSet
from reviewbot.lang.parse import MIN_PARALLEL, parse_file, parse_many, parse_workers

CPP = (
    "void D{i}::run(Cfg& c) {{\n    if (c.mode == Mode::Fast && !c.off) {{ c.need_cache_{i} = false; }}\n}}\n"
)
PY = "class M{i}:\n    def f(self, cfg):\n        if cfg.need_cache_{i}:\n            self.put(cfg.x)\n"


def _jobs(focus: object = None) -> list:
    jobs = []
    for i in range(MIN_PARALLEL + 4):
        path, text = (f"src/d{i}.cc", CPP.format(i=i)) if i % 2 else (f"pkg/m{i}.py", PY.format(i=i))
        jobs.append((path, text, focus))
    return jobs + [("README.md", "not code", None)]


def test_pool_and_in_process_give_equal_facts_in_order() -> None:
    focus = NameSet({"need_cache_3", "mode"}).mentions
    jobs = _jobs(focus)
    assert parse_workers(len(jobs), 2) == 2
    pooled = parse_many(jobs, workers=2)
    assert pooled == [parse_file(*job) for job in jobs]
    assert pooled[-1] is None and [f.path for f in pooled[:3] if f is not None] == [
        "pkg/m0.py",
        "src/d1.cc",
        "pkg/m2.py",
    ]
    assert [a.field for a in pooled[3].assignments] == ["need_cache_3"]  # type: ignore[union-attr]


def test_a_focus_that_does_not_pickle_falls_back_to_in_process() -> None:
    jobs = _jobs(lambda text: "need_cache_1" in text)
    assert parse_many(jobs, workers=2) == parse_many(jobs, workers=1)


def test_few_files_are_parsed_in_process() -> None:
    assert parse_workers(MIN_PARALLEL - 1, 8) == 1 and parse_workers(1000, 1) == 1
    assert parse_workers(4 * MIN_PARALLEL, 4) == 4
