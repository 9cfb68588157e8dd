"""The interface every model format implements (:mod:`hf_punctcase.formats`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class ModelFormat:
    """One way a checkpoint folder can hold a model, and the runtime that runs it.

    Attributes:
        name: the format's name (``"torch"``, ``"onnx"``).
        runtime: the runtime that runs it (:data:`hf_punctcase.execution.TORCH`, ``ONNXRUNTIME``, ...).
        files: the files that make a folder this format, for error messages.
        description: what such a folder is, for error messages.
    """

    name: str = ""
    runtime: str = ""
    files: str = ""
    description: str = ""

    def detect(self, folder: Path) -> bool:
        """Whether ``folder``'s file names say it is this format (contents are for :meth:`check`)."""
        raise NotImplementedError

    def check(self, folder: Path, config: dict[str, Any], labels: dict[str, list[str]], trust_remote_code: bool) -> None:
        """Check the format's own files without loading the model; raise
        :class:`~hf_punctcase.checkpoints.CheckpointError` (or FileNotFoundError) naming the folder.
        ``config`` is the parsed config.json, ``labels`` its label lists (already checked)."""
        raise NotImplementedError

    def load_model(self, folder: str, **kwargs: Any):
        """The model in ``folder`` as the punct-case pipeline runs it, for a format whose runtime is
        not torch (a torch checkpoint is loaded by transformers' ``from_pretrained``).
        ``AutoModelForJointTokenClassification.from_pretrained`` calls it with its own keyword
        arguments (``dtype``, ``trust_remote_code``, ...), which a format takes or refuses."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


__all__ = ["ModelFormat"]
