"""How far the example's rule reaches (reviewbot.analysis.reach.configs): atoms, builders, guard fields."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from reviewbot.analysis.reach.configs import BUILDER_NAMES, ModelReach, describe_reach, guard_fields
from reviewbot.lang.build import build_index
from reviewbot.lang.follow import follow_calls
from reviewbot.lang.predicate import And, Atom, Not
from tests.deeper.helpers import Reviewed, example_repo, review_repo
from tests.lang.helpers import DirTree


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Reviewed:
    repo, base, head = example_repo(tmp_path_factory.mktemp("reach") / "repo")
    return review_repo(repo, base, head)


def _builders(reach_builders: tuple[ModelReach, ...]) -> dict[str, ModelReach]:
    return {m.name: m for m in reach_builders}


def test_atoms_from_defaults_and_derivations(reviewed: Reviewed) -> None:
    (d,) = reviewed.ctx.derivations
    reach = describe_reach(d.head.guard, reviewed.ctx.index)
    assert reach is not None
    by_field = {a.field: a for a in reach.atoms}
    style = by_field["style"]
    assert (style.true_at_default, style.default_value, style.display) == (
        True,
        "RopeStyle.No",
        "rope_config.style",
    )
    kv = by_field["use_kvcache"]
    assert (kv.want, kv.source, kv.true_at_default) == (False, "task_type", False)
    assert "LANGUAGE_MODEL" not in kv.members and len(kv.members) == 7 and "RERANKER" in kv.members
    assert reach.fires_at_default is False and reach.wide
    assert reach.population.startswith("every task_type other than LANGUAGE_MODEL")


def test_builders_left_at_rope_style_no_reach_it_and_those_setting_base_do_not(reviewed: Reviewed) -> None:
    (d,) = reviewed.ctx.derivations
    reach = describe_reach(d.head.guard, reviewed.ctx.index)
    assert reach is not None
    models = _builders(reach.builders)
    assert (models["Bert"].reaches, models["Bert"].notes) == (True, ("task_type DENSE_EMBEDDING",))
    assert models["Cohere"].reaches is None and models["Cohere"].notes[0].startswith(
        "task_type from `ckpt.get("
    )
    baichuan = models["Baichuan13B"]
    assert (baichuan.reaches, baichuan.excluded) == (False, False)
    assert "reached when built for another task_type" in baichuan.notes[0]
    for name in ("Llama", "QWen"):
        assert models[name].excluded and models[name].notes == ("sets rope_config.style to RopeStyle.Base",)
    assert [m.split(" ")[0] for m in reach.models] == ["Bert", "Cohere", "Baichuan13B"]
    assert all(p.startswith("rtp_llm/models/") for p in reach.places)


def test_a_bool_atom_in_the_guard_is_judged_per_builder(reviewed: Reviewed) -> None:
    (d,) = reviewed.ctx.derivations
    assert isinstance(d.head.guard, And)
    guard = And((*d.head.guard.args, Not(Atom("config.use_logn_attn"))))
    reach = describe_reach(guard, reviewed.ctx.index)
    assert reach is not None
    models = _builders(reach.builders)
    assert models["Bert"].reaches is True  # leaves use_logn_attn at its default False
    assert models["Cohere"].reaches is None
    assert 'use_logn_attn from `ckpt.get("use_logn_attn",False)`' in models["Cohere"].notes
    assert "whose use_logn_attn is left at its default `False`" in reach.sentence


def test_guard_fields_include_what_derived_atoms_come_from(reviewed: Reviewed) -> None:
    (d,) = reviewed.ctx.derivations
    assert guard_fields(d.head.guard, reviewed.ctx.index) == {"style", "use_kvcache", "task_type"}
    assert guard_fields(None, reviewed.ctx.index) == set()


def _models_repo(root: Path) -> DirTree:
    files = {
        "cpp/RopeConfig.h": """
            #pragma once
            enum class RopeStyle {
                No   = 0,
                Base = 1,
                Yarn = 2,
            };
            struct RopeConfig {
                RopeStyle style = RopeStyle::No;
            };
        """,
        "models/base.py": """
            class BaseModel:
                @classmethod
                def create_config(cls, path):
                    config = cls._create_config(path)
                    config.attn_config.rope_config.style = 1
                    return config
        """,
        "models/llama.py": """
            class Llama:
                @classmethod
                def _create_config(cls, path):
                    config = ModelConfig()
                    config.attn_config.rope_config.style = 1
                    return config

            class Baichuan(Llama):
                @classmethod
                def _create_config(cls, path):
                    config = Llama._create_config(path)
                    if config.num_layers == 40:
                        config.attn_config.rope_config.style = 0
                    return config

            class Cohere(Llama):
                @classmethod
                def _create_config(cls, path):
                    config = Llama._create_config(path)
                    config.attn_config.rope_config.style = 0
                    return config
        """,
        "models/qwen.py": """
            class QWenBase:
                @staticmethod
                def _common_config(config):
                    config.attn_config.rope_config.style = 1

            class QWen(QWenBase):
                @classmethod
                def _create_config(cls, path):
                    config = ModelConfig()
                    QWenBase._common_config(config)
                    return config
        """,
    }
    for i in range(7):
        files[f"models/bert{i}.py"] = f"""
            class Bert{i}:
                @classmethod
                def _create_config(cls, path):
                    config = ModelConfig()
                    config.attn_config.head_num = {i}
                    return config
        """
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    return DirTree(root)


def test_explicit_values_exclude_a_builder_through_its_helpers_and_int_enum_values(tmp_path: Path) -> None:
    tree = _models_repo(tmp_path)
    index = build_index(tree, {"style", "RopeStyle", *BUILDER_NAMES})
    follow_calls(tree, index, ["need_rope_kv_cache"])  # no read sites: only the builders' helpers
    reach = describe_reach(Atom("config.rope_config.style == RopeStyle.No"), index)
    assert reach is not None
    models = _builders(reach.builders)
    assert "BaseModel" not in models  # the generic path, not a model
    assert models["Llama"].excluded and models["Llama"].notes == ("sets rope_config.style to 1 (Base)",)
    assert models["QWen"].excluded  # through QWenBase._common_config
    assert models["Cohere"].reaches is True and models["Cohere"].notes == (
        "sets rope_config.style to 0 (No)",
    )
    baichuan = models["Baichuan"]  # Base, then No when it has 40 layers
    assert (baichuan.excluded, baichuan.reaches) == (False, None)
    assert baichuan.notes == ("sets rope_config.style to 0 (No) under a condition",)
    # At most five named, the rest counted; those whose settings say so first.
    reached, _, not_reached = reach.sentence.partition(" Not reached by: ")
    assert reached.split("Model configs that reach it: ", 1)[1].startswith("Cohere (models/llama.py:")
    assert reached.endswith(" and 4 more.") and reached.count("(models/") == 5
    assert not_reached == (
        "Llama (models/llama.py:2; sets rope_config.style to 1 (Base)), "
        "QWen (models/qwen.py:7; sets rope_config.style to 1 (Base))."
    )
