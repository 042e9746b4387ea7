"""Kernel stand-ins: pure-Python functions with the shapes of the real fused ops."""


def apply_logn_scaling(qkv: list, seq_len: int) -> list:
    return [("logn", seq_len, x) for x in qkv]


def apply_rope(qkv: list, style: int) -> list:
    return [("rope", int(style), x) for x in qkv]


def write_kv_cache(qkv: list, kv_cache: list) -> None:
    kv_cache.extend(qkv)


def fmha(qkv: list) -> list:
    return list(qkv)
