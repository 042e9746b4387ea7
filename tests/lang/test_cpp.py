"""The C++ front end on small real snippets: one test per kind of fact."""

from __future__ import annotations

from reviewbot.lang.facts import AssignKind, BindingKind, Lang
from reviewbot.lang.predicate import loose_key
from tests.lang.helpers import guard_key, parse_cpp, reads, uses_at, writes


def test_if_else_if_else_guards_negate_earlier_conditions() -> None:
    facts = parse_cpp(
        """
        void Cfg::derive() {
            if (a.x) {
                out.mode = 1;
            } else if (b.y > 2) {
                out.mode = 2;
            } else {
                out.mode = 3;
            }
        }
        """
    )
    one, two, three = writes(facts, "mode")
    assert (one.value, guard_key(one)) == ("1", "a.x")
    assert (two.value, guard_key(two)) == ("2", "!a.x && 2 < b.y")
    assert (three.value, guard_key(three)) == ("3", "!a.x && 2 >= b.y")
    assert all(w.function == "Cfg::derive" and w.kind is AssignKind.PLAIN for w in (one, two, three))
    assert (one.guard_text, one.guard_line, one.branch_start, one.branch_end) == ("a.x", 2, 2, 4)
    assert (two.guard_text, two.guard_line, two.branch_start, two.branch_end) == ("b.y > 2", 4, 4, 6)
    assert (three.guard_line, three.branch_start, three.branch_end) == (4, 6, 8)
    assert [u.pred.key for u in facts.predicates] == ["a.x", "2 < b.y"]


def test_an_option_chain_keeps_only_the_branches_own_option_test() -> None:
    # `arg == "-b"` implies `arg != "-a"`: the earlier options' negations are dropped from the branch's
    # guard (a parser's chain of a hundred options gave guards of a hundred terms); other conditions stay.
    facts = parse_cpp(
        """
        void parse(const std::string & arg, Params & params, bool verbose) {
            if (arg == "-a" || arg == "--all") {
                params.all = true;
            } else if (verbose) {
                params.log = 1;
            } else if (arg == "-b") {
                params.batch = 2;
            } else {
                params.rest = 3;
            }
        }
        """
    )
    [batch] = writes(facts, "batch")
    assert guard_key(batch) == '!verbose && "-b" == arg'
    [rest] = writes(facts, "rest")  # the final else keeps every negation: it is what none of them took
    assert guard_key(rest) == '!("--all" == arg || "-a" == arg) && !verbose && "-b" != arg'


def test_nested_ifs_conjoin_and_plain_writes_have_no_guard() -> None:
    facts = parse_cpp(
        """
        void f(Config& c) {
            c.base = 0;
            if (c.p) {
                if (!c.q) {
                    c.inner = true;
                }
            }
        }
        """
    )
    [base] = writes(facts, "base")
    assert base.guard is None and base.guard_line is None
    assert (base.branch_start, base.branch_end, base.text) == (2, 2, "c.base = 0;")
    [inner] = writes(facts, "inner")
    assert (inner.target, inner.value, guard_key(inner)) == ("c.inner", "True", "!c.q && c.p")
    assert inner.guard_line == 4 and inner.function == "f"


def test_ternary_gives_two_guarded_writes_inside_enclosing_if() -> None:
    facts = parse_cpp(
        """
        void f(Config& c, bool outer) {
            if (outer) {
                c.level = c.fast ? 1 : c.slow ? 3 : 2;
            }
        }
        """
    )
    arms = writes(facts, "level")
    assert [(a.value, guard_key(a), a.kind) for a in arms] == [
        ("1", "c.fast && outer", AssignKind.TERNARY),
        ("3", "!c.fast && c.slow && outer", AssignKind.TERNARY),
        ("2", "!c.fast && !c.slow && outer", AssignKind.TERNARY),
    ]
    assert arms[0].guard_text == "c.fast" and arms[1].guard_text == "c.slow"
    assert all(a.line == 3 and a.branch_start == a.branch_end == 3 for a in arms)
    assert {u.pred.key for u in uses_at(facts, 3)} == {"c.fast", "c.slow"}


def test_ternary_false_arm_guard_is_the_whole_condition() -> None:
    facts = parse_cpp(
        """
        void M::g() const {
            config.fuse = qk_norm || (config.rope.style == RopeStyle::No && !use_kvcache) ? false : true;
        }
        """
    )
    off, on = writes(facts, "fuse")
    assert (off.value, on.value) == ("False", "True")
    assert guard_key(off) == "(!use_kvcache && RopeStyle.No == config.rope.style) || qk_norm"
    assert guard_key(on) == "!((!use_kvcache && RopeStyle.No == config.rope.style) || qk_norm)"


def test_augmented_writes_and_declarations_with_initialisers() -> None:
    facts = parse_cpp(
        """
        void f(Config* c) {
            c->flags |= kFast;
            const bool no_rope = c->style == RopeStyle::No && !c->use_kvcache;
            bool copy(c->enabled);
            int counter;
        }
        """
    )
    [flags] = writes(facts, "flags")
    assert (flags.target, flags.value, flags.kind) == ("c.flags", "kFast", AssignKind.AUGMENTED)
    [no_rope] = writes(facts, "no_rope")
    assert no_rope.target == "no_rope" and no_rope.value == "c.style==RopeStyle.No&&!c.use_kvcache"
    [copy] = writes(facts, "copy")
    assert copy.value == "c.enabled"
    assert writes(facts, "counter") == []
    [use] = uses_at(facts, 3)
    assert loose_key(use.pred) == "!use_kvcache && RopeStyle.No == style"


def test_struct_member_initialisers_and_enums() -> None:
    facts = parse_cpp(
        """
        namespace rtp {
        enum class RopeStyle { No = 0, Base = 1, Glm2 };
        enum Plain { A, B };
        struct RopeConfig {
            RopeStyle style = RopeStyle::No;
            bool      enabled{true};
            int       dim = 0, base = 10000;
            float     scale;
            struct Inner { bool deep = false; };
        };
        }
        """,
        path="src/RopeConfig.h",
    )
    assert facts.enums == {"RopeStyle": ("No", "Base", "Glm2"), "Plain": ("A", "B")}
    got = {(d.owner, d.field): (d.value, d.line) for d in facts.defaults}
    assert got == {
        ("RopeConfig", "style"): ("RopeStyle.No", 5),
        ("RopeConfig", "enabled"): ("True", 6),
        ("RopeConfig", "dim"): ("0", 7),
        ("RopeConfig", "base"): ("10000", 7),
        ("Inner", "deep"): ("False", 9),
    }
    assert all(d.lang is Lang.CPP and d.path == "src/RopeConfig.h" for d in facts.defaults)


def test_pybind_def_readwrite_is_an_external_writer() -> None:
    facts = parse_cpp(
        """
        void registerConfigs(py::module& m) {
            py::class_<AttentionConfigs>(m, "AttentionConfigs")
                .def(py::init<>())
                .def_readwrite("need_rope_kv_cache", &AttentionConfigs::need_rope_kv_cache)
                .def_readonly("head_num", &rtp::AttentionConfigs::head_num);
        }
        """
    )
    [rw] = writes(facts, "need_rope_kv_cache")
    assert (rw.kind, rw.target, rw.value, rw.line) == (
        AssignKind.BINDING,
        "AttentionConfigs.need_rope_kv_cache",
        "def_readwrite",
        4,
    )
    assert rw.text.startswith(".def_readwrite(") and rw.function == "registerConfigs"
    # A read-only binding exposes the member without writing it: a Binding fact, not a writer.
    assert writes(facts, "head_num") == []
    ro = next(b for b in facts.bindings if b.name == "head_num")
    assert (ro.owner, ro.member, ro.kind, ro.exposed_as, ro.writable) == (
        "AttentionConfigs",
        "head_num",
        BindingKind.READONLY,
        "AttentionConfigs",
        False,
    )


def test_comment_above_log_in_branch_and_target_checked_first() -> None:
    facts = parse_cpp(
        """
        void f(Config& c) {
            // Derive the flag only when nobody set it.
            /* Explicit settings win. */
            if (!c.fast_set && c.mode == 2) {
                RTP_LLM_LOG_INFO("fast: %d -> 1", c.fast);
                c.fast = 1;
            }

            // unrelated comment

            c.other = 2;
        }
        """
    )
    [fast] = writes(facts, "fast")
    assert fast.comment_above == "Derive the flag only when nobody set it.\nExplicit settings win."
    assert fast.comment_line == 2
    assert fast.logs_in_branch and fast.checks_target_first
    [other] = writes(facts, "other")
    assert other.comment_above == "" and other.comment_line is None
    assert not other.logs_in_branch and not other.checks_target_first


def test_field_reads_in_conditions_gate_their_branches() -> None:
    facts = parse_cpp(
        """
        void Impl::run(Buf& q) {
            if (!cfg_.use_cache) {
                skipWrite(q);
            } else {
                cache_op_.write(q);
            }
            while (this->busy) { spin(); }
            int n = cfg_.heads * 2;
        }
        """
    )
    [flag] = reads(facts, "use_cache")
    assert flag.in_condition and flag.negated and flag.expr == "cfg_.use_cache"
    # `gated` is what runs when the flag is true: the else branch of `if (!flag)`.
    assert [(g.line, g.calls) for g in flag.gated] == [(5, ("cache_op_", "write"))]
    assert [(g.line, g.calls) for g in flag.gated_else] == [(3, ("skipWrite",))]
    [busy] = reads(facts, "busy")
    assert busy.in_condition and not busy.negated and [g.calls for g in busy.gated] == [("spin",)]
    [heads] = reads(facts, "heads")
    assert not heads.in_condition and heads.gated == ()


def test_member_initialiser_alias_is_followed_one_level() -> None:
    facts = parse_cpp(
        """
        class Impl {
        public:
            explicit Impl(const Configs& c) : need_rope_(c.need_rope_kv_cache), heads_(4) {}
            void forward() {
                if (need_rope_) {
                    rope_op_.forward();
                }
            }
        };
        """
    )
    [aliased] = [r for r in reads(facts, "need_rope_kv_cache") if r.in_condition]
    assert (aliased.alias, aliased.alias_line, aliased.line) == ("need_rope_", 3, 5)
    assert aliased.function == "Impl::forward" and [g.calls for g in aliased.gated] == [
        ("rope_op_", "forward")
    ]
    # The alias is a member of its own name too.
    assert [r.alias for r in reads(facts, "need_rope_", in_condition=True)] == [None]
    inits = {w.field: w.value for w in facts.assignments if w.function == "Impl::Impl"}
    assert inits == {"need_rope_": "c.need_rope_kv_cache", "heads_": "4"}


def test_functions_are_qualified_and_spanned() -> None:
    facts = parse_cpp(
        """
        namespace rtp {
        struct S {
            int get() const { return v; }
        };
        template <typename T>
        const T& S::pick(int a) { return a; }
        }
        void free_fn() {}
        """
    )
    assert [(f.name, f.start_line, f.end_line) for f in facts.functions] == [
        ("S::get", 3, 3),
        ("S::pick", 6, 6),
        ("free_fn", 8, 8),
    ]
    assert facts.function_at(3) is not None and facts.function_at(3).name == "S::get"  # type: ignore[union-attr]


def test_parse_errors_are_counted_and_facts_salvaged() -> None:
    facts = parse_cpp(
        """
        void ok(Config& c) {
            if (c.a) { c.b = 1; }
        }
        void broken( {
            if (x && ) y = ;
        }
        """
    )
    assert facts.parse_errors > 0
    assert [w.field for w in writes(facts, "b")] == ["b"]


def test_garbage_does_not_raise() -> None:
    for text in ("", "}}}{{{", "\x00\x01binary", "#define X(a) a ## \\\n", "int x = " + "(" * 3000):
        facts = parse_cpp(text)
        assert facts.lang is Lang.CPP
    assert parse_cpp("int x = " + "(" * 3000).parse_errors > 0


def test_gated_statements_list_fields_read_not_written() -> None:
    facts = parse_cpp(
        """
        void f(Config& c, const Model& m) {
            if (m.enabled) {
                c.mode = m.fast_mode + c.bias;
            }
        }
        """
    )
    [flag] = reads(facts, "enabled")
    assert [(g.line, g.text, g.fields) for g in flag.gated] == [
        (3, "c.mode = m.fast_mode + c.bias;", ("fast_mode", "bias"))
    ]


def test_if_initialiser_declares_a_local_alias() -> None:
    facts = parse_cpp(
        """
        void Impl::run() {
            if (const bool on = cfg_.need_rope; on) {
                rope();
            }
        }
        """
    )
    [aliased] = [r for r in reads(facts, "need_rope") if r.in_condition]
    assert (aliased.alias, aliased.alias_line, [g.calls for g in aliased.gated]) == ("on", 2, [("rope",)])
