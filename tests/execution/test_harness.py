"""The construction path of a truth table (`harness.find_harness`) on real commits: found, or why not."""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.diff import load_change
from reviewbot.execution.call_sites import sites_of
from reviewbot.execution.harness import find_harness, module_of
from reviewbot.model.executed import Harness
from reviewbot.review.pipeline import ReviewSettings, parse_stage, review_change
from tests.gitrepo import Repo


def _harness(
    tmp_path: Path, path: str, base: str, head: str, others: dict[str, str | bytes | None] | None = None
) -> Harness | str:
    repo = Repo(tmp_path / "repo")
    b = repo.commit({path: base, **(others or {})}, "base")
    h = repo.commit({path: head}, "head")
    change = load_change(repo.path, b, h)
    (table,) = review_change(change, ReviewSettings()).truth_tables
    changed = change.file(path)
    assert changed is not None
    return find_harness(table, parse_stage(change).head_facts, changed.head_text, None, sites_of(change))


PLAIN = """class Config:
    def __init__(self, cache=False, *, use_rope=True):
        self.cache = cache
        self.use_rope = use_rope
"""
PLAIN_HEAD = PLAIN + "        if not self.cache:\n            self.use_rope = False\n"


def test_a_plain_class_takes_the_columns_as_init_keywords(tmp_path: Path) -> None:
    found = _harness(tmp_path, "src/pkg/plain.py", PLAIN, PLAIN_HEAD)
    assert isinstance(found, Harness)
    assert (found.module, found.import_root, found.owner, found.kind, found.function, found.target) == (
        "pkg.plain",
        "src",
        "Config",
        "class",
        "__init__",
        "use_rope",
    )
    assert dict(found.keywords) == {"cache": "cache", "use_rope": "use_rope"}


PYDANTIC = """from pydantic import BaseModel


class Settings(BaseModel):
    fast: bool = False
    paged: bool = True

    def __init__(self, **data):
        super().__init__(**data)
"""
PYDANTIC_HEAD = PYDANTIC + "        if not self.fast:\n            self.paged = False\n"


def test_a_pydantic_model_takes_its_annotated_fields(tmp_path: Path) -> None:
    found = _harness(tmp_path, "cfg.py", PYDANTIC, PYDANTIC_HEAD)
    assert isinstance(found, Harness) and found.kind == "pydantic" and found.module == "cfg"
    assert dict(found.keywords) == {"fast": "fast", "paged": "paged"}


COMPARED = """from dataclasses import dataclass, field


@dataclass
class Config:
    layers: int = 0
    use_rope: bool = True
    cached: bool = field(default=False, init=False)

    def __post_init__(self):
        pass
"""


def test_a_column_the_constructor_cannot_set_gives_a_reason_and_no_harness(tmp_path: Path) -> None:
    head = COMPARED.replace("        pass\n", "        if self.cached:\n            self.use_rope = False\n")
    found = _harness(tmp_path, "cfg.py", COMPARED, head)
    assert found == "the column `cached` cannot be set through `Config(...)`"


def test_an_enum_the_module_does_not_name_cannot_be_imported(tmp_path: Path) -> None:
    base = COMPARED.replace(
        "    cached: bool = field(default=False, init=False)\n", "    mode: object = None\n"
    )
    head = base.replace(
        "        pass\n", "        if self.mode == Mode.SLOW:\n            self.use_rope = False\n"
    )
    found = _harness(tmp_path, "cfg.py", base, head)
    assert found == "the enum `Mode` of column `mode` cannot be imported from `cfg`"


def test_the_import_path_comes_from_the_file_path() -> None:
    assert module_of("src/pkg/__init__.py") == ("src", "pkg")
    assert module_of("tools/my-script.py") is None
    assert module_of("pkg/config.py") == ("", "pkg.config")


def test_the_import_root_is_above_the_topmost_package_when_the_packages_are_known() -> None:
    packages = {"python/sglang", "python/sglang/srt", "pkg", "src/lib"}
    assert module_of("python/sglang/srt/server_args.py", packages) == ("python", "sglang.srt.server_args")
    assert module_of("python/sglang/__init__.py", packages) == ("python", "sglang")
    assert module_of("pkg/config.py", packages) == ("", "pkg.config")
    assert module_of("src/lib/plain.py", packages) == ("src", "lib.plain")
    assert module_of("tools/run.py", packages) == ("", "tools.run")  # no package: as without them
    # `srt` has no `__init__.py` (a namespace directory): the root is still above `sglang`.
    assert module_of("python/sglang/srt/configs/x.py", {"python/sglang", "python/sglang/srt/configs"}) == (
        "python",
        "sglang.srt.configs.x",
    )


def test_a_cpp_derivation_is_left_to_the_cpp_harness(tmp_path: Path) -> None:
    base = "void derive(Config& c) {\n}\n"
    head = "void derive(Config& c) {\n    if (!c.cache) {\n        c.use_rope = false;\n    }\n}\n"
    assert (
        _harness(tmp_path, "cfg.cc", base, head)
        == "a C++ derivation: the C++ harness (execution.cpp_harness) builds it, not the Python one"
    )


SERVER_ARGS = """from dataclasses import dataclass


@dataclass
class ServerArgs:
    cache: bool = False
    use_rope: bool = True

    def __post_init__(self):
        self._handle_defaults()

    def _handle_defaults(self):
        self._adjust()

    def _adjust(self):
        pass

    def later(self):
        pass
"""


def test_a_method_the_constructor_calls_on_self_is_built_through_the_constructor(tmp_path: Path) -> None:
    head = SERVER_ARGS.replace(
        "    def _adjust(self):\n        pass\n",
        "    def _adjust(self):\n        if not self.cache:\n            self.use_rope = False\n",
    )
    found = _harness(tmp_path, "srv.py", SERVER_ARGS, head)
    assert isinstance(found, Harness)
    assert (found.owner, found.kind, found.function, found.via) == (
        "ServerArgs",
        "dataclass",
        "_adjust",
        "__post_init__",
    )


def test_a_method_no_constructor_calls_is_called_on_the_built_object(tmp_path: Path) -> None:
    head = SERVER_ARGS.replace(
        "    def later(self):\n        pass\n",
        "    def later(self):\n        if not self.cache:\n            self.use_rope = False\n",
    )
    found = _harness(tmp_path, "srv.py", SERVER_ARGS, head)
    assert isinstance(found, Harness)
    assert (found.owner, found.function, found.via, found.call, found.target) == (
        "ServerArgs",
        "later",
        "",
        True,
        "use_rope",
    )
    # The columns are fields: the constructor takes them; nothing is set after the build, nothing passed.
    assert dict(found.keywords) == {"cache": "cache", "use_rope": "use_rope"}
    assert (found.sets, found.args) == ((), ())
    assert found.construction == "ServerArgs().later()"


MODEL_CONFIG = """class ModelConfig:
    def __init__(self):
        self.cache = False
        self.use_rope = True

    def update(self, strict=False):
        pass

    def resize(self, size):
        pass

    @staticmethod
    def build():
        pass
"""


def test_the_method_harness_sets_attributes_and_passes_its_own_parameters(tmp_path: Path) -> None:
    body = "        if not self.cache or strict:\n            self.use_rope = False\n"
    head = MODEL_CONFIG.replace(
        "    def update(self, strict=False):\n        pass\n", f"    def update(self, strict=False):\n{body}"
    )
    found = _harness(tmp_path, "mgr.py", MODEL_CONFIG, head)
    assert isinstance(found, Harness)
    # `cache` is no keyword of `__init__` but an attribute it assigns; `strict` is the method's parameter.
    assert dict(found.keywords) == {"cache": "cache", "strict": "strict", "use_rope": "use_rope"}
    assert (found.sets, found.args) == (("cache", "use_rope"), ("strict",))
    assert found.construction == "ModelConfig().update()"


def test_a_method_that_needs_arguments_is_not_called_and_a_static_one_is_called_as_a_function(
    tmp_path: Path,
) -> None:
    body = "        if not self.cache:\n            self.use_rope = False\n"
    head = MODEL_CONFIG.replace(
        "    def resize(self, size):\n        pass\n", f"    def resize(self, size):\n{body}"
    )
    assert _harness(tmp_path / "a", "mgr.py", MODEL_CONFIG, head) == (
        "the derivation runs in `ModelConfig.resize`, which no constructor of `ModelConfig` calls, and "
        "`ModelConfig.resize` requires `size` (no default): the all-defaults call `ModelConfig(...).resize()` has "
        "nothing to pass"
    )
    static = MODEL_CONFIG.replace(
        "    def build():\n        pass\n",
        "    def build():\n        x = ModelConfig()\n        if not x.cache:\n            x.use_rope = False\n",
    )
    found = _harness(tmp_path / "b", "mgr.py", MODEL_CONFIG, static)
    # No object to build: the function harness calls `ModelConfig.build()` and reads `x.use_rope` off
    # its frame as it returns; `x` is its own local, so its columns stay at what `__init__` gives them.
    assert isinstance(found, Harness), found
    assert (found.kind, found.static, found.reads, found.read_from, found.target) == (
        "function",
        "staticmethod",
        "local",
        "x",
        "use_rope",
    )
    assert found.fixed == ("x.cache", "x.use_rope") and found.keywords == ()
    assert found.construction == "ModelConfig.build()"


def test_a_constructor_with_a_required_argument_has_no_all_defaults_build(tmp_path: Path) -> None:
    # Built with no arguments it raises TypeError. `model` is never read by `__init__`: a placeholder
    # stands for it; an argument the constructor reads leaves no harness (a placeholder would decide).
    block = PLAIN.replace("(self, cache", "(self, model, cache")
    head = PLAIN_HEAD.replace("(self, cache", "(self, model, cache")
    found = _harness(tmp_path / "a", "blk.py", block, head)
    assert isinstance(found, Harness)
    assert found.given == (("model", "None"),) and found.given_from.startswith("placeholders")
    read = block.replace(
        "        self.cache = cache\n", "        self.cache = cache or model.endswith('-fast')\n"
    )
    assert (
        _harness(
            tmp_path / "r",
            "blk.py",
            read,
            read + "        if not self.cache:\n            self.use_rope = False\n",
        )
        == "`Config(...)` requires `model` (no default) and no call in the repository gives them as literals; "
        "the code the test runs (`__init__`) reads `model`: a placeholder would decide the rows: there is no "
        "configuration to build"
    )
    fields = COMPARED.replace("    layers: int = 0\n", "    layers: int\n    shape: tuple = field()\n")
    head = fields.replace("        pass\n", "        if self.layers:\n            self.use_rope = False\n")
    # `layers` is a column (the rows give it); `shape` is read nowhere: a placeholder of its type
    found = _harness(tmp_path / "b", "cfg.py", fields, head)
    assert isinstance(found, Harness)
    assert found.given == (("shape", "()"),)


def test_required_arguments_take_the_literals_a_call_in_the_repository_gives(tmp_path: Path) -> None:
    base = PLAIN.replace("(self, cache", "(self, model, cache")
    head = PLAIN_HEAD.replace("(self, cache", "(self, model, cache")
    calls = {
        "serve.py": "from cfg import Config\n\n\ndef make(name):\n    return Config(model=name)\n",
        "tests/test_cfg.py": "from cfg import Config\n\n\ndef test_build():\n    Config(model='tiny', cache=True)\n",
    }
    found = _harness(tmp_path, "cfg.py", base, head, {**calls})
    assert isinstance(found, Harness)
    # `serve.py` passes a name, not a literal; the test's call gives the value (its `cache` is not taken).
    assert found.given == (("model", "'tiny'"),) and found.given_from == "tests/test_cfg.py:5"
    assert found.construction == "Config(model='tiny')"


def test_a_positional_literal_or_a_module_constant_is_a_literal_a_call_gives(tmp_path: Path) -> None:
    # sglang's FunctionCallParser(self.tools, "llama3"); megatron's sequence_length=_SEQUENCE_LENGTH
    base = PLAIN.replace("(self, cache", "(self, model, size, cache").replace(
        "        self.cache = cache\n", "        self.cache = cache or model == 'big' or size > 8\n"
    )
    head = base + "        if not self.cache:\n            self.use_rope = False\n"
    test = "from cfg import Config\n\n_SIZE = 4\n\n\ndef test_build():\n    Config('tiny', size=_SIZE)\n"
    found = _harness(tmp_path / "a", "cfg.py", base, head, {"tests/test_cfg.py": test})
    assert isinstance(found, Harness)
    assert found.given == (("model", "'tiny'"), ("size", "4")) and found.given_from == "tests/test_cfg.py:7"
    # a name bound twice is no constant; a call with more positional arguments than known is not read
    rebound = test.replace("_SIZE = 4\n", "_SIZE = 4\n_SIZE = 5\n")
    assert isinstance(_harness(tmp_path / "b", "cfg.py", base, head, {"tests/test_cfg.py": rebound}), str)
    extra = test.replace("Config('tiny', size=_SIZE)", "Config('tiny', 4, True, False)")
    assert isinstance(_harness(tmp_path / "c", "cfg.py", base, head, {"tests/test_cfg.py": extra}), str)


def test_a_call_giving_some_required_arguments_takes_placeholders_for_the_rest_never_read(
    tmp_path: Path,
) -> None:
    # `tools` is stored, never read by the code the test runs; `model` is read: the call's literal gives it
    base = PLAIN.replace("(self, cache", "(self, tools, model, cache").replace(
        "        self.cache = cache\n",
        "        self.tools = tools\n        self.cache = cache or model == 'big'\n",
    )
    head = base + "        if not self.cache:\n            self.use_rope = False\n"
    test = "from cfg import Config\n\n\ndef test_build(self):\n    Config(self.tools, 'tiny')\n"
    found = _harness(tmp_path / "a", "cfg.py", base, head, {"tests/test_cfg.py": test})
    assert isinstance(found, Harness)
    assert found.given == (("model", "'tiny'"), ("tools", "None"))
    assert (
        found.given_from
        == "tests/test_cfg.py:5 (`tools`: placeholders (never read by the code the test runs))"
    )
    # the argument the call does not give as a literal is read: no placeholder, no harness
    read = base.replace("        self.tools = tools\n", "        self.tools = list(tools)\n")
    got = _harness(tmp_path / "b", "cfg.py", read, read + head[len(base) :], {"tests/test_cfg.py": test})
    assert isinstance(got, str) and "reads `tools`" in got
