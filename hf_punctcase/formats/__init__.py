"""Model formats: what a checkpoint folder holds and the runtime that runs it, found by a list of
dispatchers (in the manner of PEFT's).

Each entry of :data:`FORMATS` is a :class:`ModelFormat` that can tell its folders (``detect``), check
their files (``check``, called by :func:`hf_punctcase.checkpoints.checked_format`) and load one as the
``punct-case`` pipeline (``load_pipeline``). :func:`format_of` asks them in order; the first that
recognises the folder wins. A new runtime (CTranslate2, OpenVINO, ...) is one new module here with a
:class:`ModelFormat` subclass, plus its entry in :data:`FORMATS`.

Importing this package needs neither torch nor transformers: a format imports what it runs with when
it loads a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import ModelFormat
from .onnx import OnnxFormat
from .openvino import OpenVinoFormat
from .torch import TorchFormat

#: Every format, in the order they are asked: a folder with torch weights is a torch checkpoint even
#: when it also holds an ONNX or OpenVINO graph.
FORMATS: tuple[ModelFormat, ...] = (TorchFormat(), OnnxFormat(), OpenVinoFormat())


def format_of(folder: str | Path) -> ModelFormat | None:
    """The format of a folder's files (the first of :data:`FORMATS` that detects it), or None. Looks
    at file names only: :func:`hf_punctcase.checkpoints.checked_format` checks the contents."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    return next((model_format for model_format in FORMATS if model_format.detect(folder)), None)


def format_named(name: str) -> ModelFormat:
    """The format called ``name`` (``"torch"``, ``"onnx"``)."""
    for model_format in FORMATS:
        if model_format.name == name:
            return model_format
    raise ValueError(f"no model format {name!r}; the formats are {', '.join(f.name for f in FORMATS)}")


def is_onnx_dir(folder: Any) -> bool:
    """Whether a folder is an ONNX export: ``model.onnx`` and no torch weights (a folder with both is a
    torch checkpoint, and the pipeline runs its torch model)."""
    return isinstance(format_of(folder), OnnxFormat) if folder is not None else False


__all__ = ["FORMATS", "ModelFormat", "OnnxFormat", "OpenVinoFormat", "TorchFormat", "format_named", "format_of", "is_onnx_dir"]
