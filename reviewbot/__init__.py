"""reviewbot: deterministic review of config-derivation changes."""

from __future__ import annotations

from pathlib import Path

__all__ = ["__version__", "PROJECT_ROOT", "DATA_DIR"]
__version__ = "0.1.0"

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# templates/, checklists/ and examples/ live at the top of the repository; reviewbot/data/ links to
# them, so a wheel carries real copies and an editable install reads the repository's own files.
DATA_DIR = Path(__file__).resolve().parent / "data"
