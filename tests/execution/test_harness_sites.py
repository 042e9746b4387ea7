"""Which of a repository's own configurations the harnesses take (execution/harness_argparse_sites.py)."""

from __future__ import annotations

from reviewbot.execution.harness_argparse_sites import validated_setup

MULTI_GPU = """
def test_overlap():
    args = parse_args()
    args.num_layers = 1
    args.tensor_model_parallel_size = 2
    validate_args(args)
"""

ONE_PROCESS = """
def test_upcycling():
    args = parse_args()
    args.num_layers = 2
    args.micro_batch_size = 1
    args.context_parallel_size = 1
    validate_args(args)
"""


def test_a_site_that_fits_one_process_is_taken_before_one_that_asks_for_more_ranks() -> None:
    # the generated test runs in one process: tensor_model_parallel_size = 2 fails validation there
    got = validated_setup("validate_args", [("tests/test_a.py", MULTI_GPU), ("tests/test_b.py", ONE_PROCESS)])
    assert got == (
        (("num_layers", "2"), ("micro_batch_size", "1"), ("context_parallel_size", "1")),
        "tests/test_b.py:7",
    )


def test_when_every_site_asks_for_more_ranks_the_first_is_taken() -> None:
    other = MULTI_GPU.replace("tensor_model_parallel_size = 2", "world_size = 8")
    got = validated_setup("validate_args", [("tests/test_a.py", MULTI_GPU), ("tests/test_c.py", other)])
    assert got is not None and got[1] == "tests/test_a.py:6"
    assert ("tensor_model_parallel_size", "2") in got[0]


def test_a_parallel_size_of_one_or_a_flag_is_no_extra_rank() -> None:
    text = ONE_PROCESS.replace(
        "args.num_layers = 2", "args.pipeline_model_parallel_size = 1\n    args.tp_size = True"
    )
    got = validated_setup("validate_args", [("tests/test_d.py", text)])
    assert got is not None and ("pipeline_model_parallel_size", "1") in got[0]
