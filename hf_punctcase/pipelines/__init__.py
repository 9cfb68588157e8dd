"""Pipelines over backends: the ``"punct-case"`` transformers pipeline, the torch backend and the ONNX
Runtime backend."""

from .backends import OnnxBackend, OnnxModel, TorchBackend, backend_for
from .punct_case import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS, PunctCasePipeline

__all__ = [
    "DEFAULT_CONTEXT_WORDS",
    "DEFAULT_WINDOW_WORDS",
    "OnnxBackend",
    "OnnxModel",
    "PunctCasePipeline",
    "TorchBackend",
    "backend_for",
]
