"""analysis.derive on the owner model: which changed statements are derivations of an owner's field."""

from __future__ import annotations

import difflib
import textwrap

from reviewbot.analysis.derive import ChangedDerivation, changed_derivations
from reviewbot.lang.facts import FileFacts
from reviewbot.lang.parse import parse_file
from reviewbot.model.change import ChangedFile, ChangeSet, FileStatus, Hunk


def _text(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def _derive(path: str, base: str, head: str) -> list[ChangedDerivation]:
    base_text, head_text = _text(base), _text(head)
    matcher = difflib.SequenceMatcher(a=base_text.split("\n"), b=head_text.split("\n"), autojunk=False)
    head_lines = head_text.split("\n")
    added = tuple(
        (j + 1, head_lines[j])
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for j in range(j1, j2)
    )
    hunk = Hunk(1, 1, 1, 1, "", added, ())
    changed = ChangedFile(path, path, FileStatus.MODIFIED, (hunk,), base_text, head_text)
    change = ChangeSet("b", "h", "b", [changed], 0)
    base_facts: dict[str, FileFacts] = {}
    head_facts: dict[str, FileFacts] = {}
    if (found := parse_file(path, base_text)) is not None:
        base_facts[path] = found
    if (found := parse_file(path, head_text)) is not None:
        head_facts[path] = found
    return changed_derivations(change, base_facts, head_facts)


def _rows(ds: list[ChangedDerivation]) -> list[tuple[int, str, str, str, str]]:
    return [
        (d.head.line, d.head.target, d.head.value, d.head.guard.key if d.head.guard else "", d.head.via)
        for d in ds
    ]


SERVER_ARGS = """
import os
from dataclasses import dataclass


@dataclass
class ServerArgs:
    tp_size: int = 1
    chunked_prefill_size: int = 8192

    def __post_init__(self):
        if self.tp_size >= 4:
            self.chunked_prefill_size = 4096
"""


def test_self_write_of_a_field_first_assigned_in_init_is_a_derivation() -> None:
    base = """
    class GptParams:
        def __init__(self):
            self.reuse_cache = False

        def update(self):
            pass
    """
    head = """
    class GptParams:
        def __init__(self):
            self.reuse_cache = False

        def update(self):
            self.reuse_cache = bool(int(os.environ.get('REUSE_CACHE', 0)))
    """
    assert _rows(_derive("pkg/params.py", base, head)) == [
        (6, "reuse_cache", "bool(int(os.environ.get('REUSE_CACHE',0)))", "", "")
    ]


def test_dataclass_post_init_write_is_a_derivation() -> None:
    base = SERVER_ARGS.replace("4096", "2048")
    assert _rows(_derive("pkg/server_args.py", base, SERVER_ARGS)) == [
        (12, "chunked_prefill_size", "4096", "4 <= tp_size", "")
    ]


def test_an_edit_on_a_continuation_line_changes_the_statement() -> None:
    base = """
    class GptParams:
        def update(self, align):
            self.inter_padding_size = \\
                self.inter_size + (pad(self.inter_size, align) if self.quant else 0)
    """
    head = base.replace("if self.quant else 0", "if self.quant_algo.isQuant() else 0")
    assert _rows(_derive("pkg/params.py", base, head)) == [
        (3, "inter_padding_size", "inter_size+(pad(inter_size,align)if quant_algo.isQuant()else 0)", "", "")
    ]


def test_a_guarded_local_that_flows_into_a_field_is_a_derivation() -> None:
    base = """
    class GptParams:
        def update(self):
            sparse_file = None
            self.sparse_file = sparse_file
    """
    head = """
    class GptParams:
        def update(self):
            sparse_file = None
            if os.environ.get('SPARSE_CONFIG_FILE') is not None:
                sparse_file = os.environ['SPARSE_CONFIG_FILE']
            self.sparse_file = sparse_file
    """
    [d] = _derive("pkg/params.py", base, head)
    assert _rows([d]) == [
        (
            5,
            "sparse_file",
            "os.environ['SPARSE_CONFIG_FILE']",
            "None != os.environ.get('SPARSE_CONFIG_FILE')",
            "sparse_file",
        )
    ]
    assert (d.head.via_line, d.head.owner, d.new_branch) == (6, "GptParams", True)


def test_cpp_local_through_an_expression_into_a_member() -> None:
    base = """
    void ModelConfig::derive(Cfg& c) const {
        bool fuse = c.qk_norm;
        c.fuse_qkv = fuse && use_kvcache;
    }
    """
    head = base.replace("bool fuse = c.qk_norm;", "bool fuse = c.qk_norm || c.rope_style == RopeStyle::No;")
    # The field's statement is the derivation; the local's unguarded value is inlined into it.
    assert _rows(_derive("src/Config.cc", base, head)) == [
        (3, "c.fuse_qkv", "(c.qk_norm||c.rope_style==RopeStyle.No)&&use_kvcache", "", "")
    ]


def test_a_local_whose_value_holds_a_backslash_is_inlined_as_written() -> None:
    # A string escape in the local's value (`"\\u00e9"`) is code, not a replacement-template escape:
    # it once raised `re.error: bad escape \\u` and failed the whole review.
    base = """
    void Params::derive(Cfg& c) const {
        std::string sep = "-";
        c.sep = sep + c.name;
    }
    """
    head = base.replace('std::string sep = "-";', 'std::string sep = "\\u00e9";')
    assert _rows(_derive("src/Params.cc", base, head)) == [(3, "c.sep", '("\\u00e9")+c.name', "", "")]


def test_constructor_declarations_parameter_copies_and_pickling_are_not_derivations() -> None:
    base = """
    class GptParams:
        def __init__(self, head_num):
            pass

        def __setstate__(self, state):
            pass

        def set_head(self, head_num):
            pass
    """
    head = """
    class GptParams:
        def __init__(self, head_num):
            self.use_x = False
            self.head_num = head_num
            self.port = g_master_info.port if g_rank == 0 else -1

        def __setstate__(self, state):
            self.head_num = state["head_num"]

        def set_head(self, head_num):
            self.head_num = head_num
    """
    # Only the constructor's computed value is a derivation (its value depends on other objects).
    assert [(r[0], r[1]) for r in _rows(_derive("pkg/params.py", base, head))] == [(5, "port"), (5, "port")]


def test_cpp_constructor_member_initialisers_copying_parameters_are_declarations() -> None:
    base = """
    struct SystemPromptParams {
        SystemPromptParams() {}
        std::vector<int> prompt_token = {};
        int prompt_length = 0;
    };
    """
    head = """
    struct SystemPromptParams {
        SystemPromptParams(const std::vector<int>& _prompt_token)
            : prompt_token(_prompt_token), prompt_length(_prompt_token.size()) {}
        std::vector<int> prompt_token = {};
        int prompt_length = 0;
    };
    """
    assert _rows(_derive("src/SystemPrompt.h", base, head)) == [
        (3, "prompt_length", "_prompt_token.size()", "", "")
    ]


def test_self_writes_in_a_non_config_class_are_not_derivations() -> None:
    base = """
    class Attention(nn.Module):
        def forward(self, x):
            return x
    """
    head = """
    class Attention(nn.Module):
        def forward(self, x):
            self.cache = x * 2
            return x
    """
    assert _derive("pkg/attn.py", base, head) == []


def test_vendored_files_are_not_reviewed() -> None:
    base = "void f(Cfg& c) {\n}\n"
    head = "void f(Cfg& c) {\n    c.x = 1;\n}\n"
    assert _derive("3rdparty/lib/a.cc", base, head) == []
    assert len(_derive("src/a.cc", base, head)) == 1


def test_config_constructor_keyword_is_a_derivation_but_not_a_script_entry_point() -> None:
    base = """
    class Mixtral:
        @staticmethod
        def create_config(ckpt):
            config = GptInitModelParameters(
                head_num=ckpt["n_head"],
                layer_num=ckpt["n_layer"],
            )
            return config


    if __name__ == "__main__":
        pass
    """
    head = """
    class Mixtral:
        @staticmethod
        def create_config(ckpt):
            config = GptInitModelParameters(
                head_num=ckpt["n_head"],
                layer_num=ckpt["n_layer"],
                has_moe_norm=True,
            )
            return config


    if __name__ == "__main__":
        ModelConfig.async_mode = True
    """
    assert _rows(_derive("pkg/mixtral.py", base, head)) == [(7, "config.has_moe_norm", "True", "", "")]


def test_an_env_switch_of_any_class_is_a_derivation() -> None:
    base = """
    class StreamCacheManager:
        def __init__(self, config):
            self.reuse_cache_ = os.environ.get('REUSE_CACHE', None) == '1'
            self.engine = Engine(config)
    """
    head = """
    class StreamCacheManager:
        def __init__(self, config):
            self.reuse_cache_ = os.environ.get('REUSE_CACHE', None) == '1' or os.environ.get('USE_BLOCK', None) == '1'
            self.engine = Engine(config, fast=True)
    """
    assert [(r[0], r[1]) for r in _rows(_derive("pkg/cache.py", base, head))] == [(3, "reuse_cache_")]


def test_an_object_sized_by_the_environment_is_not_a_switch() -> None:
    base = """
    class MLACommonImpl:
        def __init__(self):
            self._workspace_buffer = torch.empty(128 * 1024 * 1024, dtype=torch.uint8)
    """
    head = """
    class MLACommonImpl:
        def __init__(self):
            self._workspace_buffer = torch.empty(envs.VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE, dtype=torch.uint8)
    """
    assert _derive("pkg/mla.py", base, head) == []


def test_a_field_and_a_local_of_the_same_name_are_told_apart() -> None:
    base = """
    class ModelParams:
        def update(self, tp_size):
            for idx in range(len(self.layer_inter_size)):
                inter_size = self.layer_inter_size[idx]
            self.inter_padding_size = self.inter_size + 1
    """
    head = base.replace("self.inter_size + 1", "self.inter_size + 2")
    # `self.inter_size` is the field, not the loop's local `inter_size`: no flow from the loop.
    assert _rows(_derive("pkg/params.py", base, head)) == [(5, "inter_padding_size", "inter_size+2", "", "")]


def test_a_change_to_an_outer_multi_line_condition_changes_the_writes_below_it() -> None:
    base = """
    class ServerArgs:
        def _handle_hicache(self):
            if self.enable_hierarchical_cache and self.hicache_io_backend == "kernel":
                if self.decode_attention_backend is None:
                    self.decode_attention_backend = "triton"
    """
    head = """
    class ServerArgs:
        def _handle_hicache(self):
            if (
                self.enable_hierarchical_cache
                or self.disaggregation_decode_enable_offload_kvcache
            ) and self.hicache_io_backend == "kernel":
                if self.decode_attention_backend is None:
                    self.decode_attention_backend = "triton"
    """
    [d] = _derive("pkg/server_args.py", base, head)
    assert (d.head.line, d.head.field, d.head.guard_spans) == (
        8,
        "decode_attention_backend",
        ((3, 6), (7, 7)),
    )


def test_a_member_computed_from_a_config_field_is_a_derivation_a_copy_or_an_object_is_not() -> None:
    base = """
    FIFOScheduler::FIFOScheduler(const MagaInitParams& config, CacheManagerPtr cache_manager):
        cache_manager_(cache_manager),
        max_seq_len_(config.gpt_init_parameter->max_seq_len_),
        reserve_block_num_(config.gpt_init_parameter->stream_reserve_block_nums_),
        layer_(config.gpt_init_parameter->layer_num_) {}
    """
    head = """
    FIFOScheduler::FIFOScheduler(const MagaInitParams& config, CacheManagerPtr cache_manager):
        cache_manager_(cache_manager),
        max_seq_len_(config.gpt_init_parameter->max_seq_len_ + 1),
        reserve_block_num_(config.gpt_init_parameter->ratio_ * cache_manager->freeBlockNums() / 100),
        layer_(new Layer(config.gpt_init_parameter->layer_num_ * 2)) {}
    """
    assert [(r[0], r[1]) for r in _rows(_derive("src/FIFOScheduler.cc", base, head))] == [
        (3, "max_seq_len_"),
        (4, "reserve_block_num_"),
    ]
