"""Pipelines over backends: the ``"punct-case"`` transformers pipeline, the torch backend and the ONNX
Runtime backend."""

from .backends import OnnxBackend, TorchBackend, backend_for
from .punct_case import PIPELINE_TASK, PunctCasePipeline

__all__ = [
    "OnnxBackend",
    "PunctCasePipeline",
    "PIPELINE_TASK",
    "TorchBackend",
    "backend_for",
]
