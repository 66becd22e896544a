"""Where the rules' compiled helpers are found (and those of the packages above).

A compiled helper is an optional extension built at install (``setup.py``): pure computation,
checked against the Python function it stands in for, which is what runs where it was not
built. ``GIN_REFEREE_PURE_PYTHON=1`` asks for the Python functions everywhere (to measure or
debug them); the environment is read once, when the helpers' modules are imported.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["PURE_PYTHON_ENV", "compiled_module"]

PURE_PYTHON_ENV = "GIN_REFEREE_PURE_PYTHON"
"""The variable that, set to anything but ``0``, turns the compiled helpers off."""


def compiled_module(name: str) -> ModuleType | None:
    """The compiled module ``name`` (e.g. ``referee.rules._legal``), or None when it was not
    built or :data:`PURE_PYTHON_ENV` is set."""
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None
    try:  # (by name: the import linter would read a plain import as one of a package)
        return importlib.import_module(name)
    except ImportError:  # installed without a C compiler: the Python functions
        return None
