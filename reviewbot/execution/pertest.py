"""Per-test results without configuration: reviewbot asks the test runners it knows for JUnit XML.

A plain `make test` or `pytest` command writes no JUnit XML, and without per-test results
`ineffective-test` cannot tell which test a mutant failed. Every run therefore gets, through its
environment (`run_sandboxed(set_env=...)`), a reports directory in its run directory (outside the
checkout, so the tree under test is unchanged) and:

- ``PYTEST_ADDOPTS=--junitxml=<reports>/pytest.xml``: every pytest the command starts writes it; a
  command that passes its own ``--junitxml`` wins (pytest takes the last), and a command that runs
  pytest more than once keeps the last run's report here (its own reports are still read);
- ``GTEST_OUTPUT=xml:<reports>/gtest/``: every GoogleTest binary writes ``<binary>.xml`` there (a name
  already taken gets a suffix, so binaries that share a name keep both reports);
- ctest (CMake >= 3.21, which has ``--output-junit``): a ``ctest`` first on PATH that runs the real one
  with ``--output-junit <reports>/ctest-<pid>.xml`` -- ctest reads no environment variable for it.
  The GoogleTest binaries ctest starts still write their own reports through GTEST_OUTPUT.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = ["REPORTS_DIR", "per_test_env", "report_files", "ctest_supports_junit"]

REPORTS_DIR = "reports"  # in the run directory, beside the workspace `ws`


@functools.lru_cache(maxsize=4)
def ctest_supports_junit(ctest: str) -> bool:
    """Whether this ctest has `--output-junit` (CMake 3.21): an older one would fail on the option."""
    try:
        out = subprocess.run([ctest, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    m = re.search(r"ctest version (\d+)\.(\d+)", out)
    return m is not None and (int(m.group(1)), int(m.group(2))) >= (3, 21)


def _ctest_shim(shims: Path, reports: Path, path_var: str) -> bool:
    """Write `shims/ctest` running the real ctest with a JUnit report; False when there is none to wrap."""
    real = shutil.which("ctest", path=path_var)
    if real is None or not ctest_supports_junit(real):
        return False
    shims.mkdir(parents=True, exist_ok=True)
    shim = shims / "ctest"
    target = shlex.quote(str(reports / "ctest-"))
    # $$: one report per ctest process, so a command that runs ctest twice keeps both.
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(real)} --output-junit {target}"$$.xml" "$@"\n')
    shim.chmod(0o755)
    return True


def per_test_env(run_root: Path, path_var: str | None = None) -> dict[str, str]:
    """The variables that make pytest, GoogleTest and ctest write JUnit XML into the run's reports
    directory (created here, before the run directory is handed to the test user)."""
    reports = run_root / REPORTS_DIR
    (reports / "gtest").mkdir(parents=True, exist_ok=True)
    env = {
        "PYTEST_ADDOPTS": f"--junitxml={shlex.quote(str(reports / 'pytest.xml'))}",
        "GTEST_OUTPUT": f"xml:{reports / 'gtest'}/",
    }
    path_var = os.environ.get("PATH", os.defpath) if path_var is None else path_var
    shims = run_root / "shims"
    if _ctest_shim(shims, reports, path_var):
        env["PATH"] = f"{shims}{os.pathsep}{path_var}"
    return env


def report_files(run_root: Path) -> list[Path]:
    """The JUnit files the run wrote into its reports directory (links and non-files are left to
    `junit.parse_junit`, which refuses them)."""
    reports = run_root / REPORTS_DIR
    if not reports.is_dir():
        return []
    return sorted(p for p in reports.rglob("*.xml"))
