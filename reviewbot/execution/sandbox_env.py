"""The environment of a test process: an allow-list, never reviewbot's own.

    sandbox_env(os.environ, home, tmp)                       # PATH, LANG, LC_*, TZ, TERM + HOME/TMPDIR
    sandbox_env(os.environ, home, tmp, allow=["CC", "CXX"])  # names the base revision's [tests] env lists
    sandbox_env(os.environ, home, tmp, set_env={"PYTEST_ADDOPTS": "--junitxml=..."})  # set by reviewbot

A deny-list of secret-looking names let `MYSQL_PWD`, `DB_PASS`, `CELERY_BROKER_URL=redis://:pw@...` and
`SENTRY_DSN` through: the names a worker's secrets have are not ours to guess. So the test
process starts from nothing and gets only what a build needs to find its tools and speak a locale. A
repository may ask for more names in `.reviewbot.toml` (`[tests] env = [...]`, read from the base
revision): those pass unless they are reviewbot's own (`REVIEWBOT_*`, `GITHUB_*`, `GH_*`) or look like
a credential, or their value carries a password in a URL.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from reviewbot.model.untrusted import refused_env_names

__all__ = ["ALLOWED", "sandbox_env"]

# Locale and terminal only: nothing here can carry a credential or point at a host service.
ALLOWED = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "SOURCE_DATE_EPOCH")
_ALLOWED_PREFIXES = ("LC_",)

_URL_WITH_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/@]+@")


def _allowed(name: str) -> bool:
    return name in ALLOWED or name.startswith(_ALLOWED_PREFIXES)


def sandbox_env(
    parent: Mapping[str, str],
    home: Path,
    tmp: Path,
    *,
    allow: Iterable[str] = (),
    set_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The test process's environment: `parent`'s allowed names, HOME and TMPDIR in the run directory.

    `allow` adds names (a repository's `[tests] env`) minus `refused_env_names`; `set_env` holds what
    reviewbot itself sets for the run (e.g. where pytest writes JUnit) and is applied last."""
    allow = list(allow)
    extra = set(allow) - set(refused_env_names(allow))
    out = {
        k: v
        for k, v in parent.items()
        if (_allowed(k) or k in extra) and not _URL_WITH_USER.search(v) and "\0" not in v
    }
    out.setdefault("PATH", os.defpath)
    out.update({"HOME": str(home), "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp)})
    out.update(set_env or {})
    return out
