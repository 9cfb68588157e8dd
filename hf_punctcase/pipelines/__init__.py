"""Pipelines over backends: the ``"punct-case"`` transformers pipeline and the torch backend."""

from .backends import TorchBackend, native_bf16_cpu
from .punct_case import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS, PunctCasePipeline

__all__ = ["DEFAULT_CONTEXT_WORDS", "DEFAULT_WINDOW_WORDS", "PunctCasePipeline", "TorchBackend", "native_bf16_cpu"]
