"""The package's extras: what each optional part needs, and the one error that names the extra."""

from __future__ import annotations

from collections.abc import Mapping

from .hardware import installed


def require_extra(extra: str, what: str, modules: Mapping[str, str]) -> None:
    """Raise ImportError, naming the extra that installs them, where a module of ``modules`` (import
    name → the package that installs it) is not installed; ``what`` is the part that needs them."""
    missing = [package for module, package in modules.items() if not installed(module)]
    if missing:
        raise ImportError(
            f"{what} needs {', '.join(missing)}, which a plain install leaves out: "
            f'pip install "hf_punctcase[{extra}]" (or pip install {" ".join(missing)})'
        )


__all__ = ["require_extra"]
