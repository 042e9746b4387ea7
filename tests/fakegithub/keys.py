"""RSA keys and JWTs for GitHub App tests."""

from __future__ import annotations

import time
from functools import lru_cache

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

__all__ = ["app_keypair", "app_jwt"]


@lru_cache(maxsize=1)
def app_keypair() -> tuple[str, str]:
    """(private PEM, public PEM) of a 2048-bit RSA key, made once per test session."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def app_jwt(app_id: int, private_pem: str, *, lifetime: int = 540, now: float | None = None) -> str:
    """A JWT as GitHub expects from an App: RS256, iss = app id, at most 10 minutes long."""
    t = int(time.time() if now is None else now)
    return jwt.encode(
        {"iat": t - 60, "exp": t + lifetime, "iss": str(app_id)}, private_pem, algorithm="RS256"
    )
