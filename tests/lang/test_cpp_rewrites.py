"""Real C++ shapes tree-sitter cannot read as written are rewritten in place: the code is read, no line moves.

Each source below is the shape as found in a real engine's file that a review had to call INCOMPLETE
(an option parser with an `#ifdef` in its `else if` chain, CUDA instantiation files, CUTLASS's
`typename T::Arguments(...)`, a tokenizer's `s.operator std::string()`)."""

from __future__ import annotations

import pytest

from reviewbot.lang.cpp.macros import blank_macros
from reviewbot.lang.cpp.parser import parse
from reviewbot.lang.cpp.rewrites import rewrite

OPTION_CHAIN = """\
bool parse_args(int argc, char** argv, server_params& sparams, gpt_params& params) {
    bool invalid_param = false;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (arg == "--port") {
            sparams.port = std::stoi(argv[++i]);
        }
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
        else if (arg == "--ssl-key-file") {
            sparams.ssl_key_file = argv[++i];
        }
#endif
        else if (arg == "-ub" || arg == "--ubatch-size") {
            params.n_ubatch = std::stoi(argv[++i]);
        } else {
            invalid_param = true;
        }
    }
    return !invalid_param;
}
"""

SPLIT_ARM = """\
void pick(Config& c, int mode) {
    if (mode == 0) {
        c.kernel = 1;
#if defined(USE_ROCM)
    } else if (mode == 1) {
        c.kernel = 2;
#else
    } else if (mode == 1) {
        c.kernel = 3;
#endif
    } else {
        c.kernel = 4;
    }
}
"""

INSTANTIATIONS = """\
namespace kernels {
auto constexpr kSizePerHead = 256;
#ifdef ENABLE_BF16
INSTANTIATE_MMHA_LAUNCHERS(__nv_bfloat16, kSizePerHead)
template class CutlassInt8GemmRunner<__nv_bfloat16>;
#endif
extern template struct Runner<float>;
}  // namespace kernels
"""

EXPRESSIONS = """\
void run(const String& path_str, int m) {
    std::filesystem::path path(path_str.operator std::string());
    typename Gemm::Arguments args{m, 0,
        typename EpilogueVisitor::Arguments(m, 0, 0)};
    int tiles = m > 64 ? 2 : 1;
}
"""


CLASS_MACROS = """\
class EngineImpl : public Engine, public ffi::ModuleObj {
 public:
  TVM_MODULE_VTABLE_BEGIN("mlc.json_ffi");
  TVM_MODULE_VTABLE_ENTRY("reload", &EngineImpl::Reload);
  TVM_MODULE_VTABLE_END();
  static constexpr const bool _type_has_method_sequal_reduce = false;
  TVM_FFI_DECLARE_OBJECT_INFO("mlc.serve.GenerationConfig", GenerationConfigNode, Object);
  void Reset(RequestState rstate) {
    rsentry->rstate = rstate.operator->();
  }
};
"""


@pytest.mark.parametrize("source", [OPTION_CHAIN, SPLIT_ARM, INSTANTIATIONS, EXPRESSIONS, CLASS_MACROS])
def test_each_shape_parses_without_errors_and_keeps_every_line(source: str) -> None:
    raw = source.encode()
    out = blank_macros(raw)
    assert out.count(b"\n") == raw.count(b"\n")
    assert parse("engine.cc", source).error_spans == ()


def test_without_the_rewrites_the_same_sources_have_unread_regions() -> None:
    import tree_sitter_cpp
    from tree_sitter import Language, Parser

    parser = Parser(Language(tree_sitter_cpp.language()))
    for source in (OPTION_CHAIN, SPLIT_ARM, INSTANTIATIONS, EXPRESSIONS, CLASS_MACROS):
        assert parser.parse(source.encode()).root_node.has_error  # what each rewrite is for


def test_an_option_parser_split_by_an_ifdef_keeps_every_arm_as_a_derivation() -> None:
    facts = parse("server.cpp", OPTION_CHAIN)
    written = {a.target for a in facts.assignments}
    # the arms before, inside and after the conditional group are all read
    assert {"sparams.port", "sparams.ssl_key_file", "params.n_ubatch"} <= written


def test_a_split_arm_is_read_as_the_first_branch_builds_it() -> None:
    out = blank_macros(SPLIT_ARM.encode()).decode()
    assert "c.kernel = 2;" in out and "c.kernel = 3;" not in out and "#if" not in out and "#endif" not in out


def test_only_the_unreadable_words_go() -> None:
    out = blank_macros(EXPRESSIONS.encode()).decode()
    assert "Gemm::Arguments args{" in out  # a declaration's `typename` stays
    assert "typename EpilogueVisitor" not in out and "EpilogueVisitor::Arguments(m, 0, 0)" in out
    assert "path_str" in out and ".operator" not in out


@pytest.mark.parametrize(
    "source",
    [
        "template <typename T, typename U>\nT add(T a, U b) { return a + b; }\n",  # template parameters
        "TEST(Config, Defaults)\n{\n    EXPECT_EQ(1, 1);\n}\n",  # gtest: the macro has a body
        'void f(bool ok) {\n    ICHECK(ok)\n        << "not ok";\n}\n',  # a check macro's message continues it
        "#define DISPATCH(T, ...) \\\n  SWITCH(T,   \\\n         __VA_ARGS__)\n",  # inside a #define
        "void f(int x) {\n    if (x)\n#ifdef A\n        g();\n#endif\n}\n",  # a group that splits no else chain
        'void f(int x) {\n    CHECK_REGISTERED(x, "not registered");\n}\n',  # a check, not a declaring word
        'void f() {\n    TVM_REGISTER_GLOBAL("f").set_body(g);\n}\n',  # a registration chain reads as C++
    ],
)
def test_shapes_that_read_as_written_are_left_alone(source: str) -> None:
    assert rewrite(source.encode()) == source.encode()
