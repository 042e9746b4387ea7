"""Which calls leave a trace in the logs (`is_log_callee`): the write that logs it applied is no silent override."""

import pytest

from reviewbot.lang.common import is_log_callee


@pytest.mark.parametrize(
    "callee",
    [
        "print",
        "logger.warning",
        "RTP_LLM_LOG_INFO",
        "warnings.warn",
        # A project's own helpers, named after the verb with a qualifier (Megatron-LM's validate_args).
        "warn_rank_0",
        "print_rank_0",
        "log_single_rank",
        "utils.print_rank_last",
        "logger.warning_once",
    ],
)
def test_log_calls(callee: str) -> None:
    assert is_log_callee(callee)


@pytest.mark.parametrize(
    "callee",
    ["log_softmax", "torch.log_softmax", "log_prob", "math.log2", "warnings_filter", "printer", "set_args"],
)
def test_not_log_calls(callee: str) -> None:
    # `log_` also starts maths: only a qualifier of who or how often it logs makes it a log helper.
    assert not is_log_callee(callee)
