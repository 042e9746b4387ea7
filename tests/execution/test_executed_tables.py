"""Truth tables executed against the real code (issue 25): real git repositories, the real sandbox, pytest.

Each case is a pull request on a small Python package reviewed end to end: the pipeline builds the
table, the test stage's sandbox runs the generated pytest on the head and on the base, and the JSON
report carries each row's executed value beside the predicted one.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path
from typing import Any

from reviewbot.change.diff import load_change
from reviewbot.execution.execute import ExecSettings, executor
from reviewbot.model.review import Review
from reviewbot.report.render import render_json
from reviewbot.review.pipeline import ReviewSettings, review_change
from tests.execution.probe import toml
from tests.gitrepo import Repo

SETTINGS = ExecSettings(time_budget_s=240, max_workers=2)

ENUM = """from dataclasses import dataclass
from enum import Enum


class Mode(Enum):
    FAST = 1
    SLOW = 2
    OFF = 3


"""
BASE = (
    ENUM
    + """@dataclass
class Config:
    mode: Mode = Mode.FAST
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        if self.mode == Mode.SLOW:
            self.use_rope = False
"""
)
HEAD = BASE.replace("if self.mode == Mode.SLOW:", "if self.mode == Mode.SLOW or not self.cache:")


def _review(
    tmp_path: Path,
    base_text: str,
    head_text: str,
    path: str = "pkg/config.py",
    others: dict[str, str | bytes | None] | None = None,
) -> tuple[Review, dict[str, Any]]:
    repo = Repo(tmp_path / "repo")
    # The repository's own test command only has to run: the tables come with the test stage.
    files: dict[str, str | bytes | None] = {
        ".reviewbot.toml": toml(f"{sys.executable} -c pass", timeout=120),
        "pkg/__init__.py": "",
        **(others or {}),
    }
    base = repo.commit({**files, path: base_text}, "base")
    repo.checkout("pr", create=True)
    head = repo.commit({path: head_text}, "head")
    settings = ReviewSettings(execute=executor(repo.path, SETTINGS))
    review = review_change(load_change(repo.path, base, head), settings)
    return review, render_json(review)


def _only_table(doc: dict[str, Any]) -> dict[str, Any]:
    tables: list[dict[str, Any]] = doc["executed_tables"]
    assert len(tables) == 1, tables
    return tables[0]


def test_a_dataclass_derivation_runs_as_the_table_says_and_the_changed_row_differs(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, BASE, HEAD)
    table = _only_table(doc)
    assert table["executed"] is True and table["reason"] == ""
    assert table["harness"] == {
        "path": "pkg/config.py",
        "module": "pkg.config",
        "import_root": "",
        "owner": "Config",
        "kind": "dataclass",
        "function": "__post_init__",
        "target": "use_rope",
        "keywords": {"mode": "mode", "cache": "cache", "use_rope": "use_rope"},
        "enums": ["Mode"],
        "defaults_from": "",
        "defaults_call": "",
        "via": "",
        "given": {},
        "given_from": "",
        "call": False,
        "sets": [],
        "args": [],
    }
    rows = table["rows"]
    assert len(rows) == 8 and table["wrong_rows"] == [] and table["agreed"] == 8
    for row in rows:  # every row ran on both sides and gave what the table predicted
        for side in ("base", "head"):
            assert row["executed"][side] == {"outcome": "value", "value": row["predicted"][side]}, row
    (changed,) = [r for r in rows if r["changed"]]
    assert changed["inputs"] == {"mode": "<other>", "cache": False, "use_rope": True} and changed["default"]
    assert changed["executed"]["base"]["value"] == "True" and changed["executed"]["head"]["value"] == "False"
    # `Config()` itself: the default row, executed, differs between the revisions too.
    assert table["defaults"] == {
        "base": {"outcome": "value", "value": "True"},
        "head": {"outcome": "value", "value": "False"},
    }
    # The generated file is a real pytest module: Python literals as expectations, one case per row.
    test = ast.parse(table["test"])
    assert "from pkg.config import Config, Mode" in table["test"]
    assert (
        "pytest.param({'mode': Mode.FAST, 'cache': False, 'use_rope': True}, False, id='r6')" in table["test"]
    )
    assert {f.name for f in test.body if isinstance(f, ast.FunctionDef)} >= {"test_use_rope_row"}
    assert "pytest.param({}, ANY, id='defaults')" in table["test"]  # `Config()`: a case of the same test
    assert not any(f.rule == "defaults-raise" for f in review.findings)
    assert not any("truth table" in n.message for n in review.notes), review.notes
    assert doc["kpi"]["executed_tables"] == {
        "tables": 1,
        "executed": 1,
        "rows": 8,
        "agreed": 8,
        "wrong": 0,
        "defaults_raise": 0,
    }


RAISES_BASE = """from dataclasses import dataclass


@dataclass
class OffloadConfig:
    num_layers: int = 0
    offload_layers: int = 1
    offload: bool = False
    pinned: bool = True
"""
RAISES_HEAD = (
    RAISES_BASE
    + """
    def __post_init__(self):
        if self.offload:
            self.pinned = False
        assert self.offload_layers < self.num_layers, "offload_layers must be below num_layers"
"""
)


def test_an_assert_that_rejects_the_defaults_is_a_p0_with_the_executed_last_line(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, RAISES_BASE, RAISES_HEAD)
    table = _only_table(doc)
    last = "AssertionError: offload_layers must be below num_layers"
    assert table["defaults"]["head"] == {"outcome": "raised", "value": last, "at": "pkg/config.py:14"}
    assert table["defaults"]["base"] == {"outcome": "value", "value": "True"}
    (p0,) = [f for f in review.findings if f.rule == "defaults-raise"]
    assert p0.severity.value == "P0" and (p0.path, p0.line) == ("pkg/config.py", 14)
    assert last in p0.title
    assert p0.evidence[0] == f"executed `OffloadConfig()` from `pkg.config` on the head: {last}"
    assert p0.evidence[1] == "on the base: True"
    assert review.status.value == "BLOCKING"
    # Every row raises on the head: the table predicted values, so each row says it was wrong.
    assert all(r["executed"]["head"]["value"] == last for r in table["rows"])
    assert table["wrong_rows"] == [r["row"] for r in table["rows"]]
    json_p0 = next(f for f in doc["findings"] if f["rule"] == "defaults-raise")
    assert json_p0["severity"] == "P0"


WRONG_BASE = """from dataclasses import dataclass


@dataclass
class Config:
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        self._normalise()

    def _normalise(self):
        self.use_rope = True
"""
# The write in `_normalise` (another function, called after the guarded write) is outside the table's
# model: the table says `cache=False` gives False, the code gives True.
WRONG_HEAD = WRONG_BASE.replace(
    "    def __post_init__(self):\n",
    "    def __post_init__(self):\n        if not self.cache:\n            self.use_rope = False\n",
)


def test_a_row_the_table_gets_wrong_shows_the_executed_value_and_says_so(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, WRONG_BASE, WRONG_HEAD)
    table = _only_table(doc)
    by_inputs = {(r["inputs"]["cache"], r["inputs"]["use_rope"]): r for r in table["rows"]}
    wrong = by_inputs[(False, True)]
    assert wrong["predicted"]["head"] == "False"
    assert wrong["executed"]["head"] == {"outcome": "value", "value": "True"}
    assert wrong["agrees"]["head"] is False and wrong["table_wrong"] is True
    assert by_inputs[(True, True)]["table_wrong"] is False  # rows the model gets right stay right
    assert wrong["row"] in table["wrong_rows"]
    kpi = doc["kpi"]["executed_tables"]
    assert kpi["executed"] == 1 and kpi["wrong"] == len(table["wrong_rows"]) >= 1
    assert kpi["agreed"] == kpi["rows"] - kpi["wrong"]
    said = [n.message for n in review.notes if "was wrong in row" in n.message]
    assert (
        f"The truth table of `use_rope` (pkg/config.py:10) was wrong in row {wrong['row']} on the head: "
        "it predicted `False`, the code gives `True`"
    ) in "\n".join(said)
    assert not any(f.rule == "defaults-raise" for f in review.findings)


REQUIRED_BASE = """class EngineConfig:
    def __init__(self, model, cache=False, use_rope=True):
        if not model:
            raise ValueError("a model is required")
        self.model = model
        self.cache = cache
        self.use_rope = use_rope
"""
REQUIRED_HEAD = REQUIRED_BASE + "        if not self.cache:\n            self.use_rope = False\n"
REQUIRED_TEST = "from pkg.config import EngineConfig\n\n\ndef test_engine():\n    assert EngineConfig(model='tiny').model\n"


def test_a_required_argument_takes_the_value_the_repositorys_test_gives_and_the_rows_run(
    tmp_path: Path,
) -> None:
    _, doc = _review(tmp_path, REQUIRED_BASE, REQUIRED_HEAD, others={"tests/test_engine.py": REQUIRED_TEST})
    table = _only_table(doc)
    assert table["harness"]["given"] == {"model": "'tiny'"}
    assert table["harness"]["given_from"] == "tests/test_engine.py:5"
    assert (
        table["executed"] is True and table["wrong_rows"] == [] and table["agreed"] == len(table["rows"]) == 4
    )
    assert "GIVEN = {'model': 'tiny'}" in table["test"]
    assert table["defaults"]["head"] == {"outcome": "value", "value": "False"}


SAME_RAISE_BASE = RAISES_BASE + RAISES_HEAD.split(RAISES_BASE, 1)[1].replace(
    "            self.pinned = False\n", "            pass\n"
)


def test_defaults_that_raise_the_same_on_the_base_are_not_this_changes_finding(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, SAME_RAISE_BASE, RAISES_HEAD)
    table = _only_table(doc)
    last = "AssertionError: offload_layers must be below num_layers"
    assert table["defaults"]["head"]["value"] == last and table["defaults"]["base"]["value"] == last
    assert not any(f.rule == "defaults-raise" for f in review.findings)
    # Rows that raise exactly as every build does on both revisions are not run: not the table's error.
    same = [r for r in table["rows"] if r["executed"]["head"]["outcome"] == "not_run"]
    assert same and table["wrong_rows"] == []
    for r in same:
        assert (
            r["executed"]["head"]["value"]
            == f"raises as the all-defaults build does on both revisions: {last}"
        )


def test_a_column_the_change_adds_is_not_run_on_the_base_and_not_called_wrong(tmp_path: Path) -> None:
    head = BASE.replace(
        "    use_rope: bool = True\n", "    use_rope: bool = True\n    eager: bool = False\n"
    ).replace("if self.mode == Mode.SLOW:", "if self.mode == Mode.SLOW or self.eager:")
    _, doc = _review(tmp_path, BASE, head)
    table = _only_table(doc)
    eager = [r for r in table["rows"] if r["inputs"]["eager"]]
    assert eager and table["wrong_rows"] == []
    for r in eager:  # `Config(eager=...)` is a TypeError on the base: not a row the table got wrong
        assert r["executed"]["base"]["outcome"] == "not_run"
        assert "unexpected keyword argument 'eager'" in r["executed"]["base"]["value"]
        assert r["executed"]["head"] == {"outcome": "value", "value": r["predicted"]["head"]}


# `cfg.name` is read and declared nowhere: no namespace can stand for `cfg` (execution/harness_function.py).
MODULE_LEVEL_BASE = "def derive(cfg):\n    print(cfg.name)\n    return cfg\n"
MODULE_LEVEL_HEAD = "def derive(cfg):\n    print(cfg.name)\n    if not cfg.cache:\n        cfg.use_rope = False\n    return cfg\n"


def test_without_a_constructor_path_nothing_is_run_and_the_reason_is_given(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, MODULE_LEVEL_BASE, MODULE_LEVEL_HEAD)
    table = _only_table(doc)
    assert table["executed"] is False and table["harness"] is None and table["rows"] == []
    assert (
        table["reason"]
        == "`derive` reads `cfg.name`, which no column sets and for which no default is found "
        "(no option of the module's parser, no field of the class annotating `cfg`): the namespace it "
        "takes cannot be built"
    )
    assert table["test"] == ""


PLAIN = """class Config:
    def __init__(self, cache=False, use_rope=True):
        self.cache = cache
        self.use_rope = use_rope
"""


def test_a_plain_class_in_a_src_layout_is_built_through_its_init(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    files = {".reviewbot.toml": toml(f"{sys.executable} -c pass", timeout=120), "src/pkg/__init__.py": ""}
    base = repo.commit({**files, "src/pkg/plain.py": PLAIN}, "base")
    head_text = PLAIN + "        if not self.cache:\n            self.use_rope = False\n"
    head = repo.commit({"src/pkg/plain.py": head_text}, "head")
    review = review_change(
        load_change(repo.path, base, head), ReviewSettings(execute=executor(repo.path, SETTINGS))
    )
    table = _only_table(render_json(review))
    assert table["harness"]["kind"] == "class" and table["harness"]["import_root"] == "src"
    assert table["agreed"] == 4 and table["wrong_rows"] == []
    changed = [r for r in table["rows"] if r["changed"]]
    assert [(r["executed"]["base"]["value"], r["executed"]["head"]["value"]) for r in changed] == [
        ("True", "False")
    ]


def test_a_construction_that_hangs_is_killed_at_the_tests_timeout_and_the_round_goes_on(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "repo")
    files = {".reviewbot.toml": toml(f"{sys.executable} -c pass", timeout=3), "pkg/__init__.py": ""}
    base = repo.commit({**files, "pkg/config.py": BASE}, "base")
    hangs = HEAD.replace(
        "    def __post_init__(self):\n", "    def __post_init__(self):\n        time.sleep(120)\n"
    )
    head = repo.commit({"pkg/config.py": "import time\n" + hangs}, "head")
    started = time.monotonic()
    review = review_change(
        load_change(repo.path, base, head), ReviewSettings(execute=executor(repo.path, SETTINGS))
    )
    assert time.monotonic() - started < 90
    table = _only_table(render_json(review))
    assert table["reason"] == "head: did not finish within 3 s and was killed"
    assert all(r["executed"]["head"]["outcome"] == "not_run" for r in table["rows"])
    assert table["wrong_rows"] == [] and not any(f.rule == "defaults-raise" for f in review.findings)
    notes = [n.message for n in review.notes]
    assert (
        "The truth tables were not executed on the head: did not finish within 3 s and was killed." in notes
    )


def test_a_module_that_does_not_import_here_says_what_failed_in_one_line(tmp_path: Path) -> None:
    head_text = "import torch_is_not_installed_here  # noqa: F401\n" + HEAD
    review, doc = _review(tmp_path, BASE, head_text)
    table = _only_table(doc)
    missing = "ModuleNotFoundError: No module named 'torch_is_not_installed_here'"
    assert table["executed"] is False and table["reason"] == f"head: the test did not import: {missing}"
    assert table["defaults"]["head"] == {"outcome": "not_run", "value": f"the test did not import: {missing}"}
    assert table["defaults"]["base"]["outcome"] == "value"  # the base imports: it ran there
    line = f"The truth table of `use_rope` (pkg/config.py:{table['line']}) was not executed: the test did not import: {missing}."
    assert line in [n.message for n in review.notes]
    assert not any(f.rule == "defaults-raise" for f in review.findings) and table["wrong_rows"] == []


METHOD_BASE = """class ModelConfig:
    def __init__(self, cache=False):
        self.cache = cache
        self.use_rope = True
        self.ckpt_path = None

    def update_common(self, strict=False):
        pass

    def load(self):
        with open(self.ckpt_path) as fh:
            self.layers = len(fh.read())
"""
METHOD_HEAD = METHOD_BASE.replace(
    "    def update_common(self, strict=False):\n        pass\n",
    "    def update_common(self, strict=False):\n        if not self.cache or strict:\n            self.use_rope = False\n",
)


def test_a_method_no_constructor_calls_runs_on_the_built_object_row_for_row(tmp_path: Path) -> None:
    review, doc = _review(tmp_path, METHOD_BASE, METHOD_HEAD)
    table = _only_table(doc)
    assert table["executed"] is True and table["reason"] == ""
    h = table["harness"]
    assert (h["owner"], h["function"], h["call"], h["sets"], h["args"]) == (
        "ModelConfig",
        "update_common",
        True,
        ["use_rope"],
        ["strict"],
    )
    rows = table["rows"]
    assert rows and table["wrong_rows"] == [] and table["agreed"] == len(rows)
    for row in rows:  # every row ran on both sides and gave what the table predicted
        for side in ("base", "head"):
            assert row["executed"][side] == {"outcome": "value", "value": row["predicted"][side]}, row
    # `ModelConfig().update_common()`: the defaults row differs between the revisions.
    assert table["defaults"] == {
        "base": {"outcome": "value", "value": "True"},
        "head": {"outcome": "value", "value": "False"},
    }
    assert "built.update_common(**{k: v for k, v in kwargs.items() if k in ARGS})" in table["test"]
    assert table["verified"] is True and table["fails_on_base"]
    assert not any(f.rule == "defaults-raise" for f in review.findings)


UNBUILT_BASE = METHOD_BASE.replace(
    "    def load(self):\n", "    def reload(self, strict=False):\n        pass\n\n    def load(self):\n"
)
UNBUILT_HEAD = UNBUILT_BASE.replace(
    "    def reload(self, strict=False):\n        pass\n",
    "    def reload(self, strict=False):\n        self.load()\n        if strict:\n            self.use_rope = False\n",
)


def test_a_method_that_cannot_run_on_the_defaults_is_no_finding_and_no_wrong_row(tmp_path: Path) -> None:
    # `reload` opens `self.ckpt_path` (None with every default): the harness cannot give it a state to
    # run in. Its raise is shown, the rows that raise the same are not run, nothing is called wrong.
    review, doc = _review(tmp_path, UNBUILT_BASE, UNBUILT_HEAD)
    table = _only_table(doc)
    raised = table["defaults"]["head"]
    assert raised["outcome"] == "raised" and raised["value"].startswith("TypeError: expected str, bytes")
    assert table["wrong_rows"] == [] and table["verified"] is False
    for row in table["rows"]:
        assert row["executed"]["head"]["outcome"] == "not_run", row
        assert row["executed"]["head"]["value"].startswith("`reload` raises the same with every default")
    assert not any(f.rule == "defaults-raise" for f in review.findings)
    assert doc["kpi"]["executed_tables"]["rows"] == 0 and doc["kpi"]["executed_tables"]["defaults_raise"] == 0


INHERITED = """class Base:
    def __init__(self, model, cache=False):
        self.model = model
        self.cache = cache


"""
INHERITED_BASE = (
    INHERITED
    + """class EngineConfig(Base):
    cache = False
    use_rope = True

    def finalize(self):
        pass
"""
)
INHERITED_HEAD = INHERITED_BASE.replace(
    "    def finalize(self):\n        pass\n",
    "    def finalize(self):\n        if not self.cache:\n            self.use_rope = False\n",
)


def test_a_constructor_missing_arguments_is_never_a_defaults_raise_finding(tmp_path: Path) -> None:
    # `EngineConfig.__init__` is `Base`'s: the harness cannot see that it needs `model`, builds with
    # nothing and gets a TypeError. That says the build did not fit, not that the defaults are rejected.
    review, doc = _review(
        tmp_path,
        INHERITED_BASE,
        INHERITED_HEAD,
    )
    table = _only_table(doc)
    raised = table["defaults"]["head"]
    assert (
        raised["outcome"] == "not_run"
        and "missing 1 required positional argument: 'model'" in raised["value"]
    )
    assert raised["value"].startswith("could not be built: TypeError")
    assert table["wrong_rows"] == [] and table["verified"] is False
    assert all(r["executed"]["head"]["outcome"] == "not_run" for r in table["rows"])
    assert not any(f.rule == "defaults-raise" for f in review.findings)
