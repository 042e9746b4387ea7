"""Known C++ macros are blanked before parsing: the code around them is read, and no line moves."""

from __future__ import annotations

from pathlib import Path

from reviewbot.lang.cpp.macros import blank_macros
from reviewbot.lang.cpp.parser import parse

KERNELS = """\
struct __align__(16) Tile { float v[4]; };

__global__ void __launch_bounds__(256) scale(float* __restrict__ out, int n) {
    __shared__ float tile[32];
    out[threadIdx.x] = tile[0];
}

C10_HOST_DEVICE inline bool use_fused_rope(const RopeConfig& rope, bool use_kvcache) {
    bool fused = rope.style != RopeStyle::No;
    if (!use_kvcache) {
        fused = false;
    }
    return fused;
}

TORCH_API void launch(float* out, int n, cudaStream_t stream) {
    scale<<<n / 256, 256, 0,
            stream>>>(out, n);
}
"""


def test_blanking_keeps_every_byte_and_line_in_place() -> None:
    raw = KERNELS.encode()
    out = blank_macros(raw)
    assert len(out) == len(raw) and out.count(b"\n") == raw.count(b"\n")
    assert b"__global__" not in out and b"<<<" not in out and b"__launch_bounds__" not in out
    assert b"bool use_fused_rope(const RopeConfig& rope, bool use_kvcache)" in out
    # a name that only contains a macro's spelling is left alone
    assert blank_macros(b"int my__device__x = 1;") == b"int my__device__x = 1;"


def test_cuda_qualified_functions_parse_without_errors_and_keep_their_derivations() -> None:
    facts = parse("kernels.cu", KERNELS)
    assert facts.error_spans == ()
    names = {fn.name for fn in facts.functions}
    assert {"use_fused_rope", "launch"} <= {n.rsplit("::", 1)[-1] for n in names}
    writes = [a for a in facts.assignments if a.line == 11]
    assert writes, "the guarded write under `if (!use_kvcache)` is a derivation fact"


def test_without_blanking_the_same_source_has_unread_regions() -> None:
    import tree_sitter_cpp
    from tree_sitter import Language, Parser

    tree = Parser(Language(tree_sitter_cpp.language())).parse(KERNELS.encode())
    assert tree.root_node.has_error  # what the blanking is for


EXPORTED = "ENGINE_HIDDEN bool fused(const Config& c) {\n    bool f = true;\n    if (!c.kv) {\n        f = false;\n    }\n    return f;\n}\n"


def test_declared_macros_are_read_and_kept_apart_in_the_facts_cache(tmp_path: Path) -> None:
    from reviewbot.lang.cache import open_cache, use
    from reviewbot.lang.cpp.macros import declared
    from reviewbot.lang.parse import parse_file

    store = open_cache(tmp_path, 16)
    with use(store):
        plain = parse_file("src/fused.cc", EXPORTED)
        with declared(("ENGINE_HIDDEN",)):
            own = parse_file("src/fused.cc", EXPORTED)
        again = parse_file("src/fused.cc", EXPORTED)
    assert plain is not None and own is not None and again is not None
    assert plain.error_spans == ((1, 1),) and own.error_spans == ()
    assert again.error_spans == plain.error_spans  # the declared parse did not replace the plain one


# A C header the way the engines write one: export macros defined in the header itself, `extern "C"`
# inside `#ifdef __cplusplus` guards, deprecated wrappers whose message holds a comma, and a config
# struct whose defaults are the derivations a change touches.
HEADER = """\
#ifdef LLAMA_SHARED
#    define LLAMA_API __declspec(dllexport)
#else
#    define LLAMA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

    struct llama_context_params {
        uint32_t n_ctx;
        float    yarn_ext_factor;
    };

    LLAMA_API struct llama_context_params llama_context_default_params(void);

    LLAMA_API DEPRECATED(int llama_eval(struct llama_context * ctx, int n_past),
            "avoid using this, it will be removed in the future");

#ifdef __cplusplus
}
#endif
"""

PARSER = """\
bool parse_arg(int argc, char ** argv, int i, gpt_params & params) {
    std::string arg = argv[i];
    if (arg == "-ctk") {
        CHECK_ARG
        params.cache_type_k = argv[++i];
        return true;
    }
    return false;
}

enum mode {
    ONLY_MODE
};
"""


def test_a_c_header_with_export_macros_extern_c_and_deprecated_wrappers_parses() -> None:
    raw = HEADER.encode()
    out = blank_macros(raw)
    assert len(out) == len(raw) and out.count(b"\n") == raw.count(b"\n")
    assert b"#    define LLAMA_API __declspec(dllexport)" in out  # a directive stays as written
    assert b"int llama_eval(struct llama_context * ctx, int n_past)" in out  # the wrapped declaration
    assert b"avoid using this" not in out
    facts = parse("llama.h", HEADER)
    assert facts.error_spans == ()


def test_a_statement_macro_alone_on_its_line_is_blanked_and_an_enumerator_is_not() -> None:
    out = blank_macros(PARSER.encode()).decode()
    assert "CHECK_ARG" not in out and "ONLY_MODE" in out
    facts = parse("common.cpp", PARSER)
    assert facts.error_spans == ()
    assert any(a.field == "cache_type_k" and a.line == 5 for a in facts.assignments)


def test_a_wrapper_message_with_a_parenthesis_is_blanked_whole() -> None:
    src = b'LLAMA_API DEPRECATED(int f(int x), "use g() instead :)");\nint h();\n'
    out = blank_macros(src)
    assert out.split(b"\n")[0].split() == [b"int", b"f(int", b"x)", b";"]
    assert parse("a.h", src.decode()).error_spans == ()


BINDINGS = """\
#define DEF_PROPERTY(name) .def_readwrite(#name, &Params::name##_)

#define REGISTER_PROPERTYS                                   \\
    DEF_PROPERTY(head_num)                                   \\
    /* strings select a branch in Python; keep them */       \\
    DEF_PROPERTY(norm_type)                                  \\
    DEF_PROPERTY(qk_norm)                                    \\\x20\x20\x20\x20
    DEF_PROPERTY(kv_cache_mem_mb)

static auto paramsTHS =
#ifdef LEGACY_THS
    torch::jit::class_<Params>("LegacyParams")
#else
    torch::jit::class_<Params>("Engine", "Params")
#endif
    .def(torch::jit::init<>()) REGISTER_PROPERTYS;

void Params::report(int64_t n) {
    printf("%" PRId64 "\\n", n);
    if (getenv("FT_DEBUG")) {
        head_num_ = 0;
    }
}

bool Loader::create_tensors() {
    LOADING_PRELUDE

    // the prelude declares the context
    use_mmap_ = false;
    return true;
}
"""


def test_bindings_with_conditionals_comments_and_continuations_parse_whole() -> None:
    # A conditional inside an expression keeps its first branch; a comment or blanks after a backslash
    # in a #define, a chain macro before `;`, a format macro between literals and a prelude macro before
    # a blank line are blanked: the file parses with no unread region, and no line moves.
    raw = BINDINGS.encode()
    out = blank_macros(raw)
    assert len(out) == len(raw) and out.count(b"\n") == raw.count(b"\n")
    assert b'"LegacyParams"' in out and b'"Engine", "Params"' not in out
    assert b'getenv("FT_DEBUG")' in out  # a literal's own text is never blanked
    facts = parse("cpp/Params.cc", BINDINGS)
    assert facts.error_spans == ()
    assert {a.field for a in facts.assignments} >= {"head_num_", "use_mmap_"}
    import tree_sitter_cpp
    from tree_sitter import Language, Parser

    assert Parser(Language(tree_sitter_cpp.language())).parse(raw).root_node.has_error  # as written


def test_casts_comments_enumerators_and_literal_text_are_left_as_written() -> None:
    # A C-style cast before `;` is a value, not a chain macro; a comment ending in `?` does not make a
    # statement-level #ifdef an expression; a lone enumerator before a comment and `};` is kept; a
    # literal's own text (`" NONE "`) is kept, while `"%" PRId64 "\n"` loses its format macro.
    src = (
        b"void f(Cfg & cfg) {\n    cfg.cap = (size_t) SIZE_MAX;\n    int n = 0;  // is 2 right?\n"
        b"#ifdef GGML_USE_CUDA\n    cfg.n = 1;\n#else\n    cfg.n = 2;\n#endif\n"
        b'    if (a == " NONE ") { printf("%" PRId64 "\\n", n); }\n}\n'
        b"enum Mode {\n    MODE_DEFAULT\n\n    // more later\n};\n"
    )
    out = blank_macros(src)
    assert b"(size_t) SIZE_MAX;" in out and b"cfg.n = 2;" in out and b"MODE_DEFAULT" in out
    assert b'" NONE "' in out and b"PRId64" not in out
