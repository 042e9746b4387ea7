"""Call sites, imports and call resolution (reviewbot.lang.calls) and the follow stage that reads the
files behind a flag's read sites (reviewbot.lang.follow), on small real source trees."""

from __future__ import annotations

import textwrap
from pathlib import Path

from reviewbot.lang.build import build_index
from reviewbot.lang.calls import CallGraph, construction, extract_calls, owner_of
from reviewbot.lang.facts import Lang
from reviewbot.lang.follow import follow_calls, resolve_import
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
