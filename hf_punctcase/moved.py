"""Names that moved: each keeps working at its old place for one release, with a FutureWarning that
names the new one."""

from __future__ import annotations

import importlib
import warnings
from typing import Any


def moved_name(old_module: str, name: str, new_module: str, stacklevel: int = 3) -> Any:
    """``new_module.name``, after a FutureWarning that ``old_module.name`` is now there (for a module's
    ``__getattr__``: the warning points at the line that asked for the name)."""
    warnings.warn(
        f"{old_module}.{name} is now {new_module}.{name}; the old name goes in the next release",
        FutureWarning,
        stacklevel=stacklevel,
    )
    return getattr(importlib.import_module(new_module), name)


def moved_module(old_module: str, new_module: str) -> None:
    """Warn that ``old_module`` is now ``new_module`` (called by the old module's file, whose names
    are the new module's)."""
    warnings.warn(f"{old_module} is now {new_module}; the old module goes in the next release", FutureWarning, stacklevel=3)
