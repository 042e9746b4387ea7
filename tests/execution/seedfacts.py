"""Hand-built facts of the seed's change (ModelConfig::getAttentionConfigs), as the front ends report them.

Used where a test needs exactly these records; the end-to-end tests parse the bundled example instead.
"""

from __future__ import annotations

from reviewbot.analysis.derive import ChangedDerivation
from reviewbot.lang.facts import AssignKind, Assignment, FieldDefault, FileFacts, Lang
from reviewbot.lang.index import RepoIndex
from reviewbot.lang.predicate import And, Atom, Not, Or, conj

CC = "rtp_llm/cpp/config/ModelConfig.cc"
FN = "ModelConfig::getAttentionConfigs"
STYLE_NO = Atom.comparison("config.rope_config.style", "==", "RopeStyle::No")
NO_KV = Not(Atom("use_kvcache"))
GUARD = conj(STYLE_NO, NO_KV)
ROPE_MEMBERS = ("No", "Base", "Glm2", "DynamicNTK", "QwenDynamicNTK", "Yarn", "Llama3", "Mrope")


def assign(target: str, value: str, line: int, guard: object = None, **kw: object) -> Assignment:
    return Assignment(
        target=target,
        field=target.rsplit(".", 1)[-1],
        value=value,
        guard=guard,  # type: ignore[arg-type]
        path=kw.pop("path", CC),  # type: ignore[arg-type]
        line=line,
        function=kw.pop("function", FN),  # type: ignore[arg-type]
        lang=kw.pop("lang", Lang.CPP),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def seed_index() -> RepoIndex:
    index = RepoIndex()
    index.add(
        FileFacts(
            path="rtp_llm/cpp/config/RopeConfig.h",
            lang=Lang.CPP,
            defaults=(
                FieldDefault(
                    "RopeConfig", "style", "RopeStyle.No", "rtp_llm/cpp/config/RopeConfig.h", 17, Lang.CPP
                ),
            ),
            enums={"RopeStyle": ROPE_MEMBERS},
        )
    )
    index.add(
        FileFacts(
            path="rtp_llm/cpp/config/AttentionConfig.h",
            lang=Lang.CPP,
            defaults=(
                FieldDefault(
                    "AttentionConfigs",
                    "need_rope_kv_cache",
                    "True",
                    "rtp_llm/cpp/config/AttentionConfig.h",
                    20,
                    Lang.CPP,
                ),
            ),
        )
    )
    index.add(
        FileFacts(
            path="rtp_llm/cpp/config/ModelConfig.h",
            lang=Lang.CPP,
            defaults=(
                FieldDefault(
                    "ModelConfig", "use_kvcache", "True", "rtp_llm/cpp/config/ModelConfig.h", 12, Lang.CPP
                ),
            ),
        )
    )
    return index


def seed_head() -> tuple[list[ChangedDerivation], dict[str, FileFacts]]:
    """The round-1 head: the copy at line 13, the ternary at 16, the new `if` at 20-22."""
    copy_base = assign("config.need_rope_kv_cache", "attn_config.need_rope_kv_cache", 14)
    copy_head = assign("config.need_rope_kv_cache", "attn_config.need_rope_kv_cache", 13)
    new = assign(
        "config.need_rope_kv_cache",
        "False",
        21,
        GUARD,
        guard_line=20,
        branch_start=20,
        branch_end=22,
        text="config.need_rope_kv_cache = false;",
    )
    bias = Or((Atom("qk_norm"), And((STYLE_NO, NO_KV))))
    ternary = [
        assign("config.fuse_qkv_add_bias", "False", 16, bias, kind=AssignKind.TERNARY),
        assign("config.fuse_qkv_add_bias", "True", 16, Not(bias), kind=AssignKind.TERNARY),
    ]
    facts = FileFacts(path=CC, lang=Lang.CPP, assignments=(copy_head, *ternary, new))
    return [ChangedDerivation(head=new, base=(copy_base,), new_branch=True)], {CC: facts}
