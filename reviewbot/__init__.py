"""reviewbot: deterministic review of config-derivation changes."""

from __future__ import annotations

from pathlib import Path

__all__ = ["__version__", "PROJECT_ROOT"]
__version__ = "0.1.0"

# templates/ and checklists/ live beside the package (editable install, see README).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
