"""The index's owner model: owner_of, writers_of / readers_of by owner (never by bare attribute name),
joins across a binding, the receiver-name resort, environment reads, vendored trees left out."""

from __future__ import annotations

from pathlib import Path

from reviewbot.change.git import GitTree
from reviewbot.lang.build import build_index
from reviewbot.lang.facts import OwnerVia
from reviewbot.lang.index import RepoIndex, is_excluded
from tests.gitrepo import Repo
from tests.lang.helpers import parse_cpp, parse_py

CONFIG_H = """
struct RopeConfig {
    int dim = 0;
    RopeStyle style = RopeStyle::No;
};
struct ModelConfig {
    RopeConfig rope_config;
    bool use_logn_attn = false;
    DataType data_type = DataType::FP16;
};
class GptInitParameter {
public:
    bool use_logn_attn_ = false;
    int64_t head_num_ = 0;
};
"""

BIND_CC = """
#define DEF_PROPERTY(name, member) .def_readwrite(#name, &GptInitParameter::member)
static auto ths = torch::jit::class_<GptInitParameter>("FasterTransformer", "GptInitParameter")
    DEF_PROPERTY(use_logn_attn, use_logn_attn_)
    DEF_PROPERTY(head_num, head_num_);
"""

DERIVE_CC = """
void ModelConfig::derive(RopeConfig& rope) {
    if (rope.style == RopeStyle::No) {
        use_logn_attn = false;
    }
    rope_config.dim = 64;
}
void GptInitParameter::update() {
    use_logn_attn_ = head_num_ > 8;
}
"""

PARAMS_PY = """
import torch


class GptInitModelParameters:
    def __init__(self, head_num: int):
        self.gpt_init_params = torch.classes.FasterTransformer.GptInitParameter(head_num)

    def __getattr__(self, k):
        return self.gpt_init_params.__getattr__(k)


class Weight:
    def __init__(self):
        self.data_type = None
"""

MODELS_PY = """
from pkg.params import GptInitModelParameters


class Llama:
    @staticmethod
    def create_config(ckpt):
        config = GptInitModelParameters(head_num=8)
        config.use_logn_attn = ckpt.get("logn", False)
        if config.use_logn_attn:
            config.head_num = 4
        return config

    def load(self, weight: "Weight", model_config):
        weight.data_type = torch.float32
        model_config.data_type = "fp16"
        rope_config = model_config.rope_config
        rope_config.dim = 128
"""


def _index() -> RepoIndex:
    index = RepoIndex()
    index.add(parse_cpp(CONFIG_H, "src/Config.h"))
    index.add(parse_cpp(BIND_CC, "src/Bind.cc"))
    index.add(parse_cpp(DERIVE_CC, "src/Config.cc"))
    index.add(parse_py(PARAMS_PY, "pkg/params.py"))
    index.add(parse_py(MODELS_PY, "pkg/models.py"))
    return index


def _where(items: list) -> list[tuple[str, int]]:  # type: ignore[type-arg]
    return [(x.path, x.line) for x in items]


def test_writers_of_match_by_owner_not_by_bare_attribute_name() -> None:
    index = _index()
    # `weight.data_type` (a Weight) is not a write of ModelConfig::data_type; `model_config.data_type`
    # is (the receiver's name is the type's name: the documented last resort).
    assert _where(index.writers_of("ModelConfig", "data_type")) == [("pkg/models.py", 15)]
    # Weight's writers: the write through an annotated parameter and its constructor's declaration.
    assert _where(index.writers_of("Weight", "data_type")) == [("pkg/models.py", 14), ("pkg/params.py", 14)]
    [w] = index.writers_of("ModelConfig", "data_type")
    assert index.owner_of(w) == ("ModelConfig", OwnerVia.NAME)


def test_writers_of_join_a_binding_and_a_forwarding_python_class() -> None:
    index = _index()
    # C++ member writes, the binding itself, and Python writes through GptInitModelParameters, whose
    # `__getattr__` forwards to the bound GptInitParameter (`use_logn_attn` is `use_logn_attn_`).
    assert _where(index.writers_of("GptInitParameter", "use_logn_attn_")) == [
        ("pkg/models.py", 8),
        ("src/Bind.cc", 3),
        ("src/Config.cc", 8),
    ]
    # The constructor's keyword (`GptInitModelParameters(head_num=8)`) writes it too.
    assert _where(index.writers_of("GptInitParameter", "head_num_")) == [
        ("pkg/models.py", 7),
        ("pkg/models.py", 10),
        ("src/Bind.cc", 4),
    ]
    # ModelConfig::use_logn_attn is another field of another owner: only its own write.
    assert _where(index.writers_of("ModelConfig", "use_logn_attn")) == [("src/Config.cc", 3)]


def test_owner_of_follows_declared_member_types_and_receiver_names() -> None:
    index = _index()
    dims = {(w.path, w.line): index.owner_of(w) for w in index.writers("dim")}
    assert dims == {
        ("src/Config.cc", 5): ("RopeConfig", OwnerVia.SELF),  # `rope_config.dim` in a ModelConfig method
        ("pkg/models.py", 17): ("RopeConfig", OwnerVia.NAME),  # a local named `rope_config`
    }
    assert index.resolve_type("ModelConfig.rope_config") == "RopeConfig"
    assert index.resolve_type("ModelConfig.nothing") == ""
    assert _where(index.readers_of("GptInitParameter", "use_logn_attn_")) == [("pkg/models.py", 9)]
    [decl] = [index.field_decl("GptInitModelParameters", "head_num")]
    assert decl is not None and (decl.owner, decl.field, decl.type) == (
        "GptInitParameter",
        "head_num_",
        "int64_t",
    )


def test_environment_reads_are_looked_up_by_name() -> None:
    index = RepoIndex()
    index.add(
        parse_py("import os\nclass C:\n    def f(self):\n        self.x = os.getenv('USE_X', '1') == '1'\n")
    )
    index.add(parse_cpp('void f() { bool x = getenv("USE_X"); }\n', "src/a.cc"))
    assert [(e.path, e.lang.value, e.default) for e in index.env_reads("USE_X")] == [
        ("pkg/config.py", "python", "'1'"),
        ("src/a.cc", "cpp", None),
    ]
    assert index.env_reads("OTHER") == []


def test_vendored_trees_are_never_read_or_indexed(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    sha = repo.commit(
        {
            "src/derive.cc": "void D::run(Cfg& c) { c.need_cache = false; }\n",
            "3rdparty/lib/derive.cc": "void E::run(Cfg& c) { c.need_cache = true; }\n",
            "src/third_party/x.py": "def f(c):\n    c.need_cache = 1\n",
            "gen/out.py": "def g(c):\n    c.need_cache = 2\n",
        }
    )
    with GitTree(repo.path, sha) as tree:
        index = build_index(tree, {"need_cache"}, exclude=("gen/",))
    assert sorted(index.files) == ["src/derive.cc"]
    assert index.scanned_files == 1
    assert index.is_excluded("3rdparty/a.h") and index.is_excluded("gen/x.py")
    assert (
        is_excluded("a/vendor/b.py") and not is_excluded("vendor.py") and not is_excluded("src/external.py")
    )
