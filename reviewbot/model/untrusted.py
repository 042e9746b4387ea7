"""Text that came from code under review (test names, test output, file names): made safe to show.

    secrets = secret_values()                 # values of the worker's own secret-looking variables
    untrusted_name(case_name, secrets=secrets)  # one line: redacted, controls escaped, capped
    untrusted_text(output, secrets=secrets)     # lines kept: redacted, other controls escaped, tail kept
    escape_controls("a\nb")                     # 'a\\nb': what a report shows for a newline in a name

A pull request's tests run with reviewbot's environment scrubbed, but what they print and name comes
back out; whatever slipped through must not reach a finding or a published report. So every value of
the worker's environment whose variable looks secret (`*PASS*`, `*PWD*`, `*SECRET*`, `*TOKEN*`,
`*KEY*`, `*DSN*`, credentials, sessions, cookies) or that is a URL with a user part
(`redis://:pw@host`) is replaced by `[redacted]` wherever it appears, as is the user part alone.
Values shorter than `MIN_SECRET_CHARS` are left alone: they cannot be told apart from ordinary words.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "cap",
    "escape_controls",
    "redact",
    "refused_env_names",
    "secret_values",
    "untrusted_name",
    "untrusted_text",
]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
ELLIPSIS = "…"

_SECRET_NAME = re.compile(
    r"PASS|PWD|SECRET|TOKEN|KEY|DSN|CREDENTIAL|PRIVATE|AUTH|COOKIE|SESSION|SIGNATURE|CERT", re.IGNORECASE
)
# The shell's working directories: paths, not passwords.
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})
# scheme://user:password@host, anywhere in a value (a DSN, a broker URL, a list of them).
_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^\s/@]+)@")

# What a name never shows raw: C0 and C1 controls, DEL, line and paragraph separators, the
# bidirectional overrides and isolates ("Trojan source"), a BOM, and the lone surrogates that stand
# for bytes that were not UTF-8.
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\ufeff\udc80-\udcff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


# Names a test process never gets, even when a repository's `[tests] env` asks for them: reviewbot's
# own settings and the usual shapes of a credential.
_SERVICE_OWN_NAME = re.compile(r"^(REVIEWBOT_|GITHUB_|GH_|ACTIONS_|RUNNER_)", re.IGNORECASE)
_CREDENTIAL_NAME = re.compile(
    _SECRET_NAME.pattern + r"|^DATABASE_URL$|^REDIS_URL$|_BROKER_URL$|^AWS_|^AZURE_|^GOOGLE_|^SSH_",
    re.IGNORECASE,
)


def refused_env_names(names: Iterable[str]) -> list[str]:
    """The names among `names` that are never passed to a test: reviewbot's own, or a credential's."""
    return sorted(n for n in names if _SERVICE_OWN_NAME.search(n) or _CREDENTIAL_NAME.search(n))


def secret_values(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values to redact from `env` (default: this process's environment), longest first."""
    found: set[str] = set()
    for name, value in (os.environ if env is None else env).items():
        if name.upper() not in _NOT_SECRET and _SECRET_NAME.search(name):
            found.add(value)
        for m in _USERINFO.finditer(value):
            found.add(value)
            userinfo = m.group(1)
            found.add(userinfo)
            found.add(userinfo.partition(":")[2])  # the password alone
    found.update(v.strip() for v in list(found))
    return tuple(sorted((v for v in found if len(v) >= MIN_SECRET_CHARS), key=lambda v: (-len(v), v)))


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each secret value replaced by `[redacted]`."""
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the byte that was not UTF-8
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_controls(text: str, keep: str = "") -> str:
    """Control and direction characters shown as escapes (`\\n`, `\\x1b`, `\\u202e`), except `keep`."""
    if keep:
        return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
    return _CONTROL.sub(_escape, text)


def cap(text: str, limit: int, *, unique: bool = False) -> str:
    """At most `limit` characters, cut with an ellipsis. `unique`: a cut keeps a short hash of the
    whole text, so two long names that share their start stay two names."""
    if len(text) <= limit:
        return text
    if not unique:
        return text[: max(limit - 1, 0)] + ELLIPSIS
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return text[: max(limit - 10, 0)] + ELLIPSIS + "#" + digest


def untrusted_name(
    text: str, limit: int = 240, *, secrets: Iterable[str] | None = None, unique: bool = True
) -> str:
    """A name from code under review as one safe line: redacted, controls escaped, capped."""
    values = secret_values() if secrets is None else secrets
    return cap(escape_controls(redact(text, values)), limit, unique=unique)


def untrusted_text(text: str, limit: int = 4096, *, secrets: Iterable[str] | None = None) -> str:
    """Output from code under review: redacted, controls other than newline and tab escaped, and at
    most `limit` characters (the end is kept: that is where a failure shows)."""
    values = secret_values() if secrets is None else secrets
    safe = escape_controls(redact(text, values), keep="\n\t")
    return safe if len(safe) <= limit else ELLIPSIS + safe[-(limit - 1) :]
