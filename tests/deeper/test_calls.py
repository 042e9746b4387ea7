"""Call sites, imports and call resolution (reviewbot.lang.calls) and the follow stage that reads the
files behind a flag's read sites (reviewbot.lang.follow), on small real source trees."""

from __future__ import annotations

import random
import re
import textwrap
from pathlib import Path

from reviewbot.lang.build import build_index
from reviewbot.lang.builders import builder_helpers
from reviewbot.lang.calls import CallGraph, construction, extract_calls, owner_of
from reviewbot.lang.facts import Lang
from reviewbot.lang.follow import follow_calls, resolve_import
from reviewbot.lang.mentions import _lines_matching
from reviewbot.lang.parse import parse_file
from tests.lang.helpers import DirTree


def _graph(files: dict[str, str]) -> CallGraph:
    graph = CallGraph()
    for path, source in files.items():
        text = textwrap.dedent(source).lstrip("\n")
        facts = parse_file(path, text)
        assert facts is not None
        graph.files[path] = facts
        graph.calls[path] = extract_calls(path, text, facts)
    return graph


def _write(root: Path, files: dict[str, str]) -> DirTree:
    for rel, source in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(source).lstrip("\n"))
    return DirTree(root)


def test_construction_and_owner() -> None:
    assert construction("FusedOp(cfg)") == ("FusedOp", "cfg")
    assert construction("std.make_unique<ops.FusedOp>(cfg,1)") == ("FusedOp", "cfg,1")
    assert construction("new FusedOp(cfg)") == ("FusedOp", "cfg")
    assert construction("op.run(x)") is None  # a call, not a constructor
    assert owner_of("AiterPrefillImpl.forward") == "AiterPrefillImpl"
    assert owner_of("rtp::Impl::run") == "Impl"
    assert owner_of("free_function") is None


def test_python_sites_keywords_and_imports() -> None:
    graph = _graph(
        {
            "pkg/impl.py": """
                from .kernels import RopeOp
                import pkg.ops as ops

                class Impl:
                    def forward(self, qkv):
                        return ops.fused(qkv, logn=self.cfg.use_logn_attn)
            """
        }
    )
    calls = graph.calls["pkg/impl.py"]
    (site,) = calls.sites
    assert (site.line, site.function, site.callee) == (6, "Impl.forward", "ops.fused")
    assert site.args == ("qkv", "logn=cfg.use_logn_attn")
    assert calls.imports == (".kernels", ".kernels.RopeOp", "pkg.ops")


def test_cpp_member_types_and_resolution_through_a_declared_member() -> None:
    graph = _graph(
        {
            "src/impl.cc": """
                class Op {
                public:
                    void forward(Tensor& x) { scale(x); }
                };
                class Impl {
                public:
                    void run(Tensor& x) { if (cfg_.flag) { op_->forward(x); } }
                private:
                    Config                  cfg_;
                    std::unique_ptr<Op>     op_;
                };
            """
        }
    )
    assert ("Impl", "op_", "Op") in graph.calls["src/impl.cc"].member_types
    (site,) = graph.sites_in("src/impl.cc", "Impl::run", {7})
    (callee,) = graph.resolve(site)
    assert (callee.function.name, callee.kind) == ("Op::forward", "member")
    # Without a constructor argument that holds the config, the object is not "built from the config".
    assert graph.resolve(site, roots={"cfg"}) == []


def test_python_object_call_and_own_method() -> None:
    graph = _graph(
        {
            "pkg/impl.py": """
                class Rope:
                    def __call__(self, x):
                        return x

                class Impl:
                    def __init__(self, cfg):
                        self.rope = Rope(cfg)

                    def forward(self, x):
                        x = self.prepare(x)
                        return self.rope(x)

                    def prepare(self, x):
                        return x
            """
        }
    )
    own, obj = graph.sites_in("pkg/impl.py", "Impl.forward")
    (method,) = graph.resolve(own, roots={"cfg"})
    assert (method.function.name, method.kind) == ("Impl.prepare", "method")
    (call,) = graph.resolve(obj, roots={"cfg"})
    assert (call.function.name, call.kind, call.built_with) == ("Rope.__call__", "member", ("cfg",))
    assert call.via == "`self.rope = Rope(cfg)` (pkg/impl.py:7)"
    assert graph.resolve(obj, roots={"other"}) == []


def test_resolve_import_for_both_languages() -> None:
    paths = {"pkg/attn/kernels.py", "pkg/ops/__init__.py", "src/pkg/util.py", "cpp/ops/Op.h", "cpp/ops/Op.cc"}
    assert resolve_import("pkg/attn/impl.py", ".kernels", Lang.PYTHON, paths) == ["pkg/attn/kernels.py"]
    assert resolve_import("pkg/attn/impl.py", "..ops", Lang.PYTHON, paths) == ["pkg/ops/__init__.py"]
    assert resolve_import("pkg/attn/impl.py", "pkg.util", Lang.PYTHON, paths) == ["src/pkg/util.py"]
    assert resolve_import("pkg/attn/impl.py", "missing", Lang.PYTHON, paths) == []
    assert resolve_import("cpp/attn/Impl.cc", "cpp/ops/Op.h", Lang.CPP, paths) == [
        "cpp/ops/Op.h",
        "cpp/ops/Op.cc",
    ]
    assert resolve_import("cpp/ops/Other.cc", "Op.h", Lang.CPP, paths) == ["cpp/ops/Op.h", "cpp/ops/Op.cc"]


def test_follow_reads_only_the_files_the_gated_code_reaches(tmp_path: Path) -> None:
    tree = _write(
        tmp_path,
        {
            "pkg/impl.py": """
                from pkg.kernels import Fused

                class Impl:
                    def __init__(self, cfg):
                        self.cfg = cfg
                        self.op = Fused(cfg)

                    def forward(self, x):
                        if self.cfg.need_fused:
                            x = self.op.forward(x)
                        return x
            """,
            "pkg/kernels.py": """
                from pkg.deep import scale

                class Fused:
                    def __init__(self, cfg):
                        self.cfg = cfg

                    def forward(self, x):
                        return scale(x, self.cfg)
            """,
            "pkg/deep.py": """
                def scale(x, cfg):
                    if cfg.use_logn:
                        return x * 2
                    return x
            """,
            "pkg/unrelated.py": """
                def other():
                    return 1
            """,
        },
    )
    index = build_index(tree, {"need_fused"})
    assert set(index.files) == {"pkg/impl.py"}  # the index only knows the read site
    before = len(tree.reads)
    graph = follow_calls(tree, index, ["need_fused"])
    assert set(graph.files) == {"pkg/impl.py", "pkg/kernels.py", "pkg/deep.py"}
    assert sorted(set(tree.reads[before:])) == ["pkg/deep.py", "pkg/impl.py", "pkg/kernels.py"]
    assert [r.field for r in graph.files["pkg/deep.py"].reads if r.in_condition] == ["use_logn"]
    # One call level only: the free function two levels down is not read.
    shallow = follow_calls(tree, index, ["need_fused"], depth=1)
    assert set(shallow.files) == {"pkg/impl.py", "pkg/kernels.py"}


def test_python_inherited_method_through_an_own_call_and_a_member() -> None:
    graph = _graph(
        {
            "pkg/ops.py": """
                class OpBase:
                    def __init__(self, cfg):
                        self.cfg = cfg

                    def _forward(self, x):
                        return x

                    def forward(self, x):
                        return self._forward(x)

                class PrefillOp(OpBase):
                    def run(self, x):
                        return self._forward(x)

                class Impl:
                    def __init__(self, cfg):
                        self.op = PrefillOp(cfg)

                    def forward(self, x):
                        return self.op.forward(x)
            """
        }
    )
    assert graph.ancestry("PrefillOp") == ["PrefillOp", "OpBase"]
    (own,) = graph.sites_in("pkg/ops.py", "PrefillOp.run")
    (method,) = graph.resolve(own, roots={"cfg"})
    assert (method.function.name, method.kind) == ("OpBase._forward", "method")
    (member,) = graph.sites_in("pkg/ops.py", "Impl.forward")
    (call,) = graph.resolve(member, roots={"cfg"})
    assert (call.function.name, call.kind, call.cls) == ("OpBase.forward", "member", "PrefillOp")


def test_follow_loads_the_base_class_of_a_cpp_op_from_its_header(tmp_path: Path) -> None:
    tree = _write(
        tmp_path,
        {
            "cpp/attn/Impl.cc": """
                #include "cpp/ops/Op.h"

                class Impl {
                public:
                    explicit Impl(const Config& cfg): cfg_(cfg), op_(std::make_unique<PrefillOp>(cfg)) {}
                    void run(Tensor& x) {
                        if (cfg_.need_fused) {
                            op_->forward(x);
                        }
                    }
                private:
                    Config                     cfg_;
                    std::unique_ptr<PrefillOp> op_;
                };
            """,
            "cpp/ops/Op.h": """
                #pragma once
                class OpBase {
                public:
                    explicit OpBase(const Config& cfg);
                    void forward(Tensor& x);
                protected:
                    Config cfg_;
                };
                class PrefillOp: public OpBase {
                public:
                    explicit PrefillOp(const Config& cfg);
                };
            """,
            "cpp/ops/Op.cc": """
                #include "cpp/ops/Op.h"

                OpBase::OpBase(const Config& cfg): cfg_(cfg) {}
                PrefillOp::PrefillOp(const Config& cfg): OpBase(cfg) {}

                void OpBase::forward(Tensor& x) {
                    if (cfg_.use_logn) {
                        scale(x);
                    }
                }
            """,
        },
    )
    index = build_index(tree, {"need_fused"})
    graph = follow_calls(tree, index, ["need_fused"])
    assert {"cpp/ops/Op.h", "cpp/ops/Op.cc"} <= set(graph.files)
    (site,) = graph.sites_in("cpp/attn/Impl.cc", "Impl::run")
    (callee,) = graph.resolve(site)
    assert (callee.function.name, callee.cls) == ("OpBase::forward", "PrefillOp")


def test_follow_finds_every_reader_of_a_switch_and_counts_a_widely_read_one(tmp_path: Path) -> None:
    files = {
        "pkg/config.py": """
            from dataclasses import dataclass

            @dataclass
            class Config:
                need_fused: bool = True
                use_logn: bool = False
                verbose: bool = False
        """,
        "pkg/impl.py": """
            class Impl:
                def __init__(self, cfg):
                    self.cfg = cfg

                def forward(self, x):
                    if self.cfg.need_fused:
                        if self.cfg.use_logn:
                            x = x * 2
                        if self.cfg.verbose:
                            print(x)
                    return x
        """,
        "pkg/softmax.py": """
            def softmax(x, cfg):
                if cfg.use_logn:
                    return x * 3
                return x
        """,
        "tests/test_impl.py": """
            def test_logn(cfg):
                assert cfg.use_logn is False
        """,
    }
    files.update({f"pkg/tool{i}.py": f"def tool{i}(cfg):\n    return cfg.verbose\n" for i in range(30)})
    tree = _write(tmp_path, files)
    index = build_index(tree, {"need_fused", "Config"})
    graph = follow_calls(tree, index, ["need_fused"])
    assert graph.mentions["use_logn"] == ("pkg/config.py", "pkg/impl.py", "pkg/softmax.py")  # no test file
    assert "pkg/softmax.py" in graph.readers
    assert graph.mention_lines["pkg/softmax.py"] == {2: "if cfg.use_logn:"}
    assert graph.widely_read == {"verbose": 32}
    assert not any(p.startswith("pkg/tool") for p in graph.readers)


def test_builder_helpers_follow_calls_into_the_same_file(tmp_path: Path) -> None:
    tree = _write(
        tmp_path,
        {
            "pkg/models.py": """
                class Base:
                    @staticmethod
                    def _common(config):
                        config.rope_style = 1
                        Base._from_hf(config)

                    @staticmethod
                    def _from_hf(config):
                        config.use_logn = True

                class Model(Base):
                    @classmethod
                    def _create_config(cls, path):
                        config = Config()
                        Base._common(config)
                        return config

                class Child(Model):
                    @classmethod
                    def _create_config(cls, path):
                        config = Model._create_config(path)
                        return config
            """
        },
    )
    index = build_index(tree, {"rope_style", "_create_config"})
    helpers = builder_helpers(tree, index)
    assert helpers[("pkg/models.py", "Model._create_config")] == (
        ((15,), "pkg/models.py", "Base._common"),
        ((15, 5), "pkg/models.py", "Base._from_hf"),
    )
    assert [h[2] for h in helpers[("pkg/models.py", "Child._create_config")]] == [
        "Model._create_config",
        "Base._common",
        "Base._from_hf",
    ]


def test_lines_mentioning_a_name_are_those_a_line_by_line_search_finds() -> None:
    """mentions._lines_matching finds matches in the whole text and maps them to lines: the same
    lines, stripped, as testing each line against each whole-word pattern."""
    rng = random.Random(7)
    names = ["use_mla", "mla", "x"]
    patterns = [re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in names]
    pieces = ["use_mla", "mla", "x", "_x", "xx", " ", "\n", "\n", ".", "(", "é", "  "]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        chosen = rng.sample(patterns, rng.randint(1, 3))
        expected = {
            i: line.strip()
            for i, line in enumerate(text.split("\n"), 1)
            if any(rx.search(line) for rx in chosen)
        }
        assert _lines_matching(text, chosen) == expected, text
