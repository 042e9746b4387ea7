"""Webhook signatures: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>`."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["sign", "verify_signature"]

_PREFIX = "sha256="


def sign(secret: bytes, body: bytes) -> str:
    """The header value GitHub sends for `body` (tests and tools use it to sign deliveries)."""
    return _PREFIX + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    """True when `header` is the signature of the exact raw `body` under `secret`.

    The comparison is constant-time so the answer's timing does not leak how much of a forged
    signature was right. The legacy SHA-1 header is deliberately not accepted.
    """
    if not secret or not header or not header.startswith(_PREFIX):
        return False
    expected = sign(secret, body)
    # compare_digest on bytes: a non-ASCII header must fail, not raise.
    return hmac.compare_digest(expected.encode("ascii"), header.strip().encode("utf-8", "replace"))
