"""Backends: subword ids in, per-task probabilities out, one file per runtime.

The restoration engine never touches a model's outputs directly: a backend (:class:`Backend`, the
protocol every one follows) names each head's probabilities by task (``"punct"``, ``"case"`` and any
further head a model family carries), as NumPy arrays on the CPU, for the tasks a call names or every
head's; the graph runtimes then run only what those tasks need.

- :class:`~hf_punctcase.backends.torch.TorchBackend` (``torch.py``): a torch model of any family.
- :class:`~hf_punctcase.backends.onnxruntime.OnnxBackend` (``onnxruntime.py``): an ONNX graph, with
  ONNX Runtime and NumPy only (the torch-free runtime runs on it); ``CachedCutsBackend`` for the
  library's cached graphs.
- :class:`~hf_punctcase.backends.openvino.OpenVinoBackend` (``openvino.py``): an OpenVINO graph.

A new runtime is one file here and one format beside it (:mod:`hf_punctcase.formats`, whose model
attaches the backend). Importing this package imports no runtime: each module imports its own.
"""

from __future__ import annotations

import importlib

from .base import Backend

#: Names imported on first use (PEP 562), so that the torch-free runtime never imports torch.
_LAZY = {
    "TorchBackend": ".torch",
    "OnnxBackend": ".onnxruntime",
    "CachedCutsBackend": ".onnxruntime",
    "OpenVinoBackend": ".openvino",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Backend", "CachedCutsBackend", "OnnxBackend", "OpenVinoBackend", "TorchBackend"]
