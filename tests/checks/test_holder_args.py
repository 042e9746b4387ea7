"""Which environment holders are objects (`registry_holder`) and where a called name comes from."""

from reviewbot.analysis.envs.holder_args import imported_from, registry_holder, truthful

SGLANG_LIKE = """
class EnvField:
    def get(self):
        return self.default


class Envs:
    SGLANG_STRICT = EnvBool(True)
    SGLANG_PORT: int = EnvInt(9000)
"""

VLLM_LIKE = """
environment_variables = {
    "VLLM_STRICT": lambda: bool(int(os.getenv("VLLM_STRICT", "0"))),
}


def __getattr__(name):
    return environment_variables[name]()
"""


def test_a_registry_of_holder_objects_declares_them() -> None:
    proof = registry_holder("SGLANG_STRICT", "app/environ.py", SGLANG_LIKE)
    assert proof is not None and proof.declared
    assert (proof.text, proof.path, proof.line) == ("SGLANG_STRICT = EnvBool(True)", "app/environ.py", 8)
    annotated = registry_holder("SGLANG_PORT", "app/environ.py", SGLANG_LIKE)
    assert annotated is not None and annotated.text == "SGLANG_PORT: int = EnvInt(9000)"


def test_a_registry_of_values_has_no_holders() -> None:
    # vLLM's `envs.X` is the parsed value (module `__getattr__`): passing it on passes a bool.
    assert registry_holder("VLLM_STRICT", "vllm/envs.py", VLLM_LIKE) is None
    assert registry_holder("SGLANG_MISSING", "app/environ.py", SGLANG_LIKE) is None


def test_imported_from() -> None:
    head = "from app.utils import log_with, raise_or_warn\nfrom app.other import raise_or_warn_all as w\n"
    assert imported_from(head, "raise_or_warn") == "app.utils"
    assert imported_from(head, "log_with") == "app.utils"
    assert imported_from(head, "raise_or_warn_all") is None  # imported under another name
    assert imported_from(head, "missing") is None


def test_a_holder_that_defines_its_truth_is_no_holder() -> None:
    # `if envs.X:` is right when the holder class says what its truth is, or `envs.X` is the value.
    with_bool = SGLANG_LIKE.replace(
        "    def get(self):", "    def __bool__(self):\n        return bool(self.get())\n\n    def get(self):"
    )
    descriptor = SGLANG_LIKE.replace(
        "    def get(self):",
        "    def __get__(self, obj, owner):\n        return self.get()\n\n    def get(self):",
    )
    for text in (with_bool, descriptor):
        assert truthful(text)
        assert registry_holder("SGLANG_STRICT", "app/environ.py", text) is None
    assert not truthful(SGLANG_LIKE)


def test_imported_from_one_statement_only() -> None:
    assert (
        imported_from("from app.utils import log_with\n\nraise_or_warn(self, envs.X)\n", "raise_or_warn")
        is None
    )
    assert (
        imported_from("from app.utils import (\n    log_with,\n    raise_or_warn,\n)\n", "raise_or_warn")
        == "app.utils"
    )
