"""Named faults: the errors the library raises for a broken checkpoint, and how a message is put on one
line. Torch-free."""

from __future__ import annotations

from pathlib import Path


class CheckpointError(ValueError):
    """A checkpoint folder whose files are there but unusable; the message names the folder and the fault."""


def one_line(message: object) -> str:
    """A message (or an exception's) on one line: every run of whitespace, newlines included, one space."""
    return " ".join(str(message).split())


def checkpoint_fault(folder: Path, message: str) -> CheckpointError:
    """A :class:`CheckpointError` naming ``folder``."""
    return CheckpointError(f"model path {folder}: {message}")


__all__ = ["CheckpointError", "checkpoint_fault", "one_line"]
