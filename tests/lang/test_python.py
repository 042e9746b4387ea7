"""The Python front end on small real snippets: one test per kind of fact."""

from __future__ import annotations

from reviewbot.lang.facts import AssignKind, Lang
from tests.lang.helpers import guard_key, parse_py, reads, uses_at, writes


def test_if_elif_else_guards_negate_earlier_conditions() -> None:
    facts = parse_py(
        """
        def derive(cfg):
            # pick the mode
            if cfg.a:
                cfg.mode = 1
            elif cfg.b is not None:
                cfg.mode = 2
            else:
                cfg.mode = 3
        """
    )
    one, two, three = writes(facts, "mode")
    assert (one.value, guard_key(one)) == ("1", "cfg.a")
    assert (two.value, guard_key(two)) == ("2", "!cfg.a && None != cfg.b")
    assert (three.value, guard_key(three)) == ("3", "!cfg.a && None == cfg.b")
    assert (one.guard_line, one.branch_start, one.branch_end, one.comment_above) == (3, 3, 4, "pick the mode")
    assert (two.guard_text, two.guard_line, two.branch_start, two.branch_end) == (
        "cfg.b is not None",
        5,
        5,
        6,
    )
    assert (three.guard_text, three.branch_start, three.branch_end) == ("cfg.b is not None", 7, 8)
    assert all(w.function == "derive" and w.lang is Lang.PYTHON for w in (one, two, three))


def test_nested_ifs_and_conditional_expressions() -> None:
    facts = parse_py(
        """
        class Builder:
            def build(self, cfg, outer):
                if outer:
                    if not cfg.q:
                        cfg.level = 1 if cfg.fast else 2
        """
    )
    fast, slow = writes(facts, "level")
    assert (fast.value, guard_key(fast), fast.kind) == (
        "1",
        "!cfg.q && cfg.fast && outer",
        AssignKind.TERNARY,
    )
    assert (slow.value, guard_key(slow), slow.kind) == (
        "2",
        "!cfg.fast && !cfg.q && outer",
        AssignKind.TERNARY,
    )
    assert fast.guard_text == "cfg.fast" and fast.function == "Builder.build"
    assert [u.pred.key for u in uses_at(facts, 5)] == ["cfg.fast"]


def test_keyword_arguments_of_constructors_and_replace() -> None:
    facts = parse_py(
        """
        from dataclasses import replace

        def make(base):
            config = ModelConfig(task_type=TaskType.DENSE, heads=12)
            tuned = replace(base, need_rope=False)
            again = base._replace(need_rope=True)
            print("x", end="")
            scale = torch.nn.Parameter(torch.ones(4), requires_grad=False)
            weight = Parameter(w.t(), requires_grad=False)
            return Other(need_rope=flag)
        """
    )
    assert {(w.target, w.value) for w in facts.assignments if w.kind is AssignKind.KEYWORD} == {
        ("config.task_type", "TaskType.DENSE"),
        ("config.heads", "12"),
        ("tuned.need_rope", "False"),
        ("again.need_rope", "True"),
        ("Other.need_rope", "flag"),
    }
    assert writes(facts, "end") == []
    assert writes(facts, "requires_grad") == []  # a tensor's flag, not a config field


def test_augmented_and_local_plain_name_assignments() -> None:
    facts = parse_py(
        """
        def f(cfg, task):
            cfg.flags |= FAST
            use_kvcache = task == TaskType.LM
            a, b = cfg.x, 2
        """
    )
    [flags] = writes(facts, "flags")
    assert (flags.kind, flags.target, flags.value) == (AssignKind.AUGMENTED, "cfg.flags", "FAST")
    [local] = writes(facts, "use_kvcache")
    assert (local.target, local.value, local.kind) == ("use_kvcache", "task==TaskType.LM", AssignKind.PLAIN)
    assert [(w.target, w.value) for w in facts.assignments if w.field in ("a", "b")] == [
        ("a", "cfg.x"),
        ("b", "2"),
    ]


def test_property_is_a_derivation_of_its_name() -> None:
    facts = parse_py(
        """
        class ModelConfig:
            @property
            def use_kvcache(self) -> bool:
                return self.task_type == TaskType.LANGUAGE_MODEL

            @property
            def no_rope(self) -> bool:
                return self.style == RopeStyle.No and not self.use_kvcache
        """
    )
    [kv] = writes(facts, "use_kvcache")
    assert (kv.target, kv.value, kv.kind, kv.guard) == (
        "use_kvcache",
        "task_type==TaskType.LANGUAGE_MODEL",
        AssignKind.PLAIN,
        None,
    )
    assert kv.function == "ModelConfig.use_kvcache" and kv.line == 4
    [no_rope] = writes(facts, "no_rope")
    assert no_rope.value == "style==RopeStyle.No and not use_kvcache"
    [use] = uses_at(facts, 8)
    assert use.pred.key == "!use_kvcache && RopeStyle.No == style"


def test_dataclass_class_and_init_defaults() -> None:
    facts = parse_py(
        """
        @dataclass
        class RopeConfig:
            style: RopeStyle = RopeStyle.No
            dim: int = 0
            extra: list = field(default_factory=list)
            base: int = field(default=10000)
            name: str

        class ModelConfig:
            kind = "dense"

            def __init__(self, task_type=TaskType.LANGUAGE_MODEL, cfg=None):
                self.task_type = task_type
                self.qk_norm = False
                self.heads = cfg.heads
                if cfg:
                    self.guarded = True
        """
    )
    got = {(d.owner, d.field): d.value for d in facts.defaults}
    assert got == {
        ("RopeConfig", "style"): "RopeStyle.No",
        ("RopeConfig", "dim"): "0",
        ("RopeConfig", "extra"): "list()",
        ("RopeConfig", "base"): "10000",
        ("ModelConfig", "kind"): '"dense"',
        ("ModelConfig", "task_type"): "TaskType.LANGUAGE_MODEL",
        ("ModelConfig", "qk_norm"): "False",
    }


def test_enum_subclasses_list_members_in_order() -> None:
    facts = parse_py(
        """
        class RopeStyle(IntEnum):
            No = 0
            Base = 1
            _ignore_ = ["x"]

            def describe(self):
                return self.name

        class Task(enum.Enum):
            LM = "lm"
            DENSE = "dense"

        class NotAnEnum(Base):
            X = 1
        """
    )
    assert facts.enums == {"RopeStyle": ("No", "Base"), "Task": ("LM", "DENSE")}
    assert [(d.owner, d.field) for d in facts.defaults] == [("NotAnEnum", "X")]


def test_reads_through_self_alias_and_local_alias() -> None:
    facts = parse_py(
        """
        class Impl:
            def forward(self, qkv, kv_cache):
                if self.need_rope:
                    self.kv_cache_write_op.forward(qkv, kv_cache)
                return qkv

            def __init__(self, attn_configs):
                self.need_rope = attn_configs.need_rope_kv_cache

        def g(cfg):
            flag = cfg.use_logn_attn
            if not flag:
                return 1
            scale(flag)
        """
    )
    [through_self] = reads(facts, "need_rope_kv_cache", in_condition=True)
    assert (through_self.alias, through_self.alias_line, through_self.line) == ("self.need_rope", 8, 3)
    assert through_self.expr == "need_rope" and through_self.function == "Impl.forward"
    assert [(g.line, g.calls, g.fields) for g in through_self.gated] == [
        (4, ("kv_cache_write_op", "forward"), ("kv_cache_write_op",))
    ]
    # The binding itself reads the original field.
    assert [r.line for r in reads(facts, "need_rope_kv_cache", in_condition=False)] == [8]
    [local] = reads(facts, "use_logn_attn", in_condition=True)
    assert (local.alias, local.alias_line, local.negated) == ("flag", 11, True)
    assert [g.line for g in local.gated] == [] and [g.line for g in local.gated_else] == [13]
    assert [r.line for r in reads(facts, "flag")] == []  # a local is not a field


def test_reads_skip_class_constants_and_callee_names() -> None:
    facts = parse_py(
        """
        def f(self, x):
            if self.style != RopeStyle.No:
                x = self.op.apply(x)
        """
    )
    assert [(r.field, r.in_condition) for r in facts.reads] == [("style", True), ("op", False)]


def test_while_condition_and_boolean_returns_are_predicate_uses() -> None:
    facts = parse_py(
        """
        def f(c):
            while c.pending and not c.stopped:
                c.step()
            ok = c.a or c.b
            return not (c.a or c.b)
        """
    )
    assert [(u.line, u.pred.key) for u in facts.predicates] == [
        (2, "!c.stopped && c.pending"),
        (4, "c.a || c.b"),
        (5, "!(c.a || c.b)"),
    ]


def test_logging_in_branch_and_target_checked_first() -> None:
    facts = parse_py(
        """
        def f(cfg):
            if cfg.need_rope_kv_cache is None and cfg.no_rope:
                logger.info("deriving need_rope_kv_cache")
                cfg.need_rope_kv_cache = False
        """
    )
    [w] = writes(facts, "need_rope_kv_cache")
    assert w.logs_in_branch and w.checks_target_first


def test_parse_errors_are_counted_and_facts_salvaged() -> None:
    facts = parse_py(
        """
        def ok(cfg):
            if cfg.a:
                cfg.b = 1

        def broken(:
            x = = 2
        """
    )
    assert facts.parse_errors > 0
    assert [guard_key(w) for w in writes(facts, "b")] == ["cfg.a"]
    for text in ("", "def (", "\x00\xff", "x = " + "(" * 3000, "if a:\n" + "  " * 500 + "b"):
        assert parse_py(text).lang is Lang.PYTHON
