"""Which environment holders are objects (`registry_holder`) and where a called name comes from."""

from reviewbot.analysis.envs.holder_args import imported_from, registry_holder

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
