"""The owner model's facts: owners, fields, receiver types, bindings and environment reads (both languages)."""

from __future__ import annotations

import textwrap

from reviewbot.lang.facts import BindingKind, DeclOrigin, FieldDecl, FileFacts, OwnerKind, OwnerVia
from reviewbot.lang.python import parser as python
from tests.lang.helpers import parse_cpp, parse_py, writes


def _fields(facts: FileFacts, owner: str) -> dict[str, FieldDecl]:
    return {d.field: d for d in facts.fields if d.owner == owner}


PY_OWNERS = """
from dataclasses import dataclass, field
from pydantic import BaseModel


@dataclass(frozen=True)
class ServerArgs:
    model_path: str
    tp_size: int = 1
    chunked: int = field(default=8192)

    def __post_init__(self):
        self.mem_fraction = 0.8


class Plain:
    __slots__ = {"a", "b"}
    limit = 3

    def __init__(self, head_num: int, cfg: "ModelConfig"):
        self.params = torch.classes.FT.GptInitParameter(head_num)
        self.use_x = False
        self.head = head_num
        self.cfg = cfg
        if head_num > 2:
            self.big = True
        self.use_x = True

    def __getattr__(self, k):
        return self.params.__getattr__(k)


class Settings(BaseModel):
    port: int = 80
"""


def test_python_owners_and_fields_class_level_and_first_assigned_in_init() -> None:
    facts = parse_py(PY_OWNERS)
    owners = {o.name: o for o in facts.owners}
    assert (owners["ServerArgs"].kind, owners["ServerArgs"].config) == (OwnerKind.DATACLASS, True)
    assert (owners["Settings"].kind, owners["Settings"].bases) == (OwnerKind.DATACLASS, ("BaseModel",))
    assert (owners["Plain"].kind, owners["Plain"].config, owners["Plain"].delegate) == (
        OwnerKind.CLASS,
        False,
        "params",
    )
    args = _fields(facts, "ServerArgs")
    assert {n: (d.type, d.default, d.origin) for n, d in args.items()} == {
        "model_path": ("str", None, DeclOrigin.BODY),
        "tp_size": ("int", "1", DeclOrigin.BODY),
        "chunked": ("int", "8192", DeclOrigin.BODY),
        "mem_fraction": ("float", None, DeclOrigin.INIT),  # __post_init__ computes, it does not default
    }
    plain = _fields(facts, "Plain")
    assert {n: (d.type, d.default, d.origin, d.line) for n, d in plain.items()} == {
        "a": ("", None, DeclOrigin.BODY, 16),
        "b": ("", None, DeclOrigin.BODY, 16),
        "limit": ("int", "3", DeclOrigin.BODY, 17),
        "params": ("GptInitParameter", None, DeclOrigin.INIT, 20),
        "use_x": ("bool", "False", DeclOrigin.INIT, 21),  # the first assignment declares it
        "head": ("int", None, DeclOrigin.INIT, 22),  # the parameter's annotation
        "cfg": ("ModelConfig", None, DeclOrigin.INIT, 23),
        "big": ("bool", None, DeclOrigin.INIT, 25),  # guarded: declared, no default
    }


def test_python_receiver_types_self_param_constructor_declared_and_paths() -> None:
    facts = parse_py(
        """
        class Builder:
            def build(self, cfg: ModelConfig, other):
                self.ready = True
                cfg.attn.flag = 1
                c = ModelConfig.from_dict({})
                c.x = 2
                d: RopeConfig = make()
                d.dim = 3
                e = cfg.rope
                e.base = 4
                other.y = 5
                Config(z=6)
        """
    )
    got = {a.field: (a.receiver, a.owner, a.owner_via) for a in facts.assignments if a.field != "c"}
    assert got["ready"] == ("self", "Builder", OwnerVia.SELF)
    assert got["flag"] == ("cfg.attn", "ModelConfig.attn", OwnerVia.PARAM)
    assert got["x"] == ("c", "ModelConfig", OwnerVia.CONSTRUCTOR)
    assert got["dim"] == ("d", "RopeConfig", OwnerVia.DECLARED)
    assert got["base"] == ("e", "ModelConfig.rope", OwnerVia.PARAM)
    assert got["y"] == ("other", "", OwnerVia.NONE)  # unknown: left to the index
    assert got["z"] == ("Config", "Config", OwnerVia.CONSTRUCTOR)
    [read] = [r for r in facts.reads if r.expr == "cfg.rope"]
    assert (read.owner, read.owner_via) == ("ModelConfig", OwnerVia.PARAM)


def test_python_multi_line_statement_spans_all_its_lines() -> None:
    facts = parse_py(
        """
        class C:
            def f(self):
                self.inter_padding_size = \\
                    self.inter_size + (pad(self.inter_size) if self.quant else 0)
        """
    )
    [plain] = [a for a in writes(facts, "inter_padding_size") if a.guard is None]
    assert (plain.line, plain.stmt_start, plain.stmt_end) == (3, 3, 4)
    assert "\\" not in plain.value  # the line continuation is not part of the value


def test_python_environment_reads_with_defaults_parsing_and_targets() -> None:
    facts = parse_py(
        """
        import os
        from pkg import envs

        class C:
            def f(self):
                self.reuse = bool(int(os.environ.get('REUSE_CACHE', 0)))
                path = None
                if os.getenv("SPARSE_FILE") is not None:
                    path = os.environ["SPARSE_FILE"]
                self.flag = get_env_bool("USE_FLAG", default=False)
                if envs.SGLANG_X:
                    pass
                set_env("NOT_A_READ", "1")
                os.environ["ALSO_NOT_A_READ"] = "1"
        """
    )
    got = [(e.name, e.default, e.parse, e.accessor, e.target, e.line) for e in facts.env_reads]
    assert got == [
        ("REUSE_CACHE", "0", "bool(int(·))", "os.environ.get", "reuse", 6),
        ("SPARSE_FILE", None, "· is not None", "os.getenv", "", 8),
        ("SPARSE_FILE", None, "", "os.environ[]", "path", 9),
        ("USE_FLAG", "False", "bool", "get_env_bool", "flag", 10),
        ("SGLANG_X", None, "", "envs.X", "", 11),
    ]
    assert all(e.function == "C.f" for e in facts.env_reads)


CPP_OWNERS = """
struct RopeConfig : public BaseConfig {
    int dim = 0;
    RopeStyle style = RopeStyle::No;
    std::shared_ptr<Extra> extra;
    bool a, b = true;
};

class Engine {
    bool stop_ = false;
};

AttentionConfigs ModelConfig::getAttentionConfigs(const GptInitParameter& params) const {
    AttentionConfigs config;
    config.rope_config.style = params.rope_config_.style;
    auto c = std::make_shared<Foo>(1);
    c->bar = 2;
    rope_.dim = 3;
    head_num_ = 4;
    this->use_logn_attn_ = true;
    bool local = false;
    local = true;
    return config;
}
"""


def test_cpp_owners_member_fields_and_receiver_types() -> None:
    facts = parse_cpp(CPP_OWNERS)
    owners = {o.name: o for o in facts.owners}
    assert (owners["RopeConfig"].kind, owners["RopeConfig"].bases, owners["RopeConfig"].config) == (
        OwnerKind.STRUCT,
        ("BaseConfig",),
        True,
    )
    assert (owners["Engine"].kind, owners["Engine"].config) == (OwnerKind.CLASS, False)
    rope = _fields(facts, "RopeConfig")
    assert {n: (d.type, d.default) for n, d in rope.items()} == {
        "dim": ("int", "0"),
        "style": ("RopeStyle", "RopeStyle.No"),
        "extra": ("Extra", None),
        "a": ("bool", None),
        "b": ("bool", "True"),
    }
    got = {a.target: (a.receiver, a.owner, a.owner_via) for a in facts.assignments}
    assert got["config.rope_config.style"] == (
        "config.rope_config",
        "AttentionConfigs.rope_config",
        OwnerVia.DECLARED,
    )
    assert got["c.bar"] == ("c", "Foo", OwnerVia.CONSTRUCTOR)
    assert got["rope_.dim"] == ("rope_", "ModelConfig.rope_", OwnerVia.SELF)
    assert got["head_num_"] == ("this", "ModelConfig", OwnerVia.SELF)
    assert got["use_logn_attn_"] == ("this", "ModelConfig", OwnerVia.SELF)
    assert got["local"] == ("", "", OwnerVia.NONE)
    [read] = [r for r in facts.reads if r.expr == "params.rope_config_.style"]
    assert (read.owner, read.owner_via) == ("GptInitParameter.rope_config_", OwnerVia.PARAM)


def test_cpp_bindings_direct_static_and_through_a_macro() -> None:
    facts = parse_cpp(
        """
        #define DEF_PROPERTY(name, member) .def_readwrite(#name, &GptInitParameter::member)
        #define REGISTER_PROPERTYS                   \\
            DEF_PROPERTY(head_num, head_num_)        \\
            DEF_PROPERTY(use_logn_attn, use_logn_attn_)
        static auto ths = torch::jit::class_<GptInitParameter>("FasterTransformer", "GptInitParameter")
            .def("setX", &GptInitParameter::setX) REGISTER_PROPERTYS;
        #undef DEF_PROPERTY
        #define DEF_PROPERTY(name) .def_readwrite(#name, &SpecialTokens::name##_)
        #define REG DEF_PROPERTY(bos_token_id)

        void reg(py::module& m) {
            py::class_<rtp::AttentionConfigs>(m, "PyAttentionConfigs")
                .def(py::init<>())
                .def_readwrite("need_rope_kv_cache", &rtp::AttentionConfigs::need_rope_kv_cache)
                .def_property("dim", &AttentionConfigs::getDim, &AttentionConfigs::setDim);
        }
        """
    )
    got = [(b.name, b.owner, b.member, b.kind, b.exposed_as, b.line) for b in facts.bindings]
    assert got == [
        ("head_num", "GptInitParameter", "head_num_", BindingKind.READWRITE, "GptInitParameter", 3),
        ("use_logn_attn", "GptInitParameter", "use_logn_attn_", BindingKind.READWRITE, "GptInitParameter", 4),
        ("setX", "GptInitParameter", "setX", BindingKind.METHOD, "GptInitParameter", 6),
        ("bos_token_id", "SpecialTokens", "bos_token_id_", BindingKind.READWRITE, "", 9),
        (
            "need_rope_kv_cache",
            "AttentionConfigs",
            "need_rope_kv_cache",
            BindingKind.READWRITE,
            "PyAttentionConfigs",
            14,
        ),
        ("dim", "AttentionConfigs", "getDim", BindingKind.PROPERTY, "PyAttentionConfigs", 15),
    ]
    # Writable member bindings are external writers of the member, owned by the bound class.
    bound = [(a.target, a.owner, a.owner_via) for a in facts.assignments]
    assert bound == [
        ("GptInitParameter.head_num_", "GptInitParameter", OwnerVia.BINDING),
        ("GptInitParameter.use_logn_attn_", "GptInitParameter", OwnerVia.BINDING),
        ("SpecialTokens.bos_token_id_", "SpecialTokens", OwnerVia.BINDING),
        ("AttentionConfigs.need_rope_kv_cache", "AttentionConfigs", OwnerVia.BINDING),
    ]


def test_cpp_environment_reads() -> None:
    facts = parse_cpp(
        """
        void Cfg::load() {
            bool use_x = std::getenv("USE_X") && std::string(std::getenv("USE_X")) == "1";
            int n = autil::EnvUtil::getEnv("N_THREADS", 4);
            threads_ = atoi(getenv("THREADS"));
            setenv("NOT_A_READ", "1", 1);
        }
        """
    )
    got = [(e.name, e.default, e.parse, e.accessor, e.target, e.line) for e in facts.env_reads]
    assert got == [
        ("USE_X", None, "", "getenv", "use_x", 2),
        ("USE_X", None, 'std.string(·)=="1"', "getenv", "use_x", 2),
        ("N_THREADS", "4", "", "autil.EnvUtil.getEnv", "n", 3),
        ("THREADS", None, "atoi(·)", "getenv", "threads_", 4),
    ]


def test_pydantic_and_attrs_fields_take_their_field_defaults() -> None:
    facts = parse_py(
        """
        import attr
        from pydantic import BaseModel, Field


        class GenerateConfig(BaseModel):
            max_new_tokens: int = Field(1000, description="cap")
            top_k: int = Field(default=0)


        @attr.s
        class CacheConfig:
            block_nums = attr.ib(default=16)
            reuse = attr.ib(False)
        """
    )
    owners = {o.name: (o.kind, o.config) for o in facts.owners}
    assert owners == {
        "GenerateConfig": (OwnerKind.DATACLASS, True),
        "CacheConfig": (OwnerKind.DATACLASS, True),
    }
    got = {(d.owner, d.field): (d.type, d.default) for d in facts.fields}
    assert got == {
        ("GenerateConfig", "max_new_tokens"): ("int", "1000"),
        ("GenerateConfig", "top_k"): ("int", "0"),
        ("CacheConfig", "block_nums"): ("", "16"),
        ("CacheConfig", "reuse"): ("", "False"),
    }


def test_fields_a_constructor_declares_are_found_outside_the_focus() -> None:
    source = """
    class Params:
        def __init__(self, head_num: int):
            self.gpt_init_params = torch.classes.FT.GptInitParameter(head_num)
            if head_num > 2:
                self.big = True
            else:
                self.small = 1
    """
    focused = python.parse("pkg/params.py", textwrap.dedent(source), focus=lambda body: "unrelated" in body)
    assert focused.assignments == ()  # the constructor is not walked...
    got = {d.field: (d.type, d.origin) for d in focused.fields}
    assert got == {  # ...but the fields it declares are known
        "gpt_init_params": ("GptInitParameter", DeclOrigin.INIT),
        "big": ("bool", DeclOrigin.INIT),
        "small": ("int", DeclOrigin.INIT),
    }
