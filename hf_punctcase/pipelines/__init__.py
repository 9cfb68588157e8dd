"""The ``"punct-case"`` transformers pipeline (:class:`PunctCasePipeline`), over a backend of
:mod:`hf_punctcase.backends`."""

from .punct_case import PIPELINE_TASK, PunctCasePipeline, backend_for

#: Names that lived here and now live in :mod:`hf_punctcase.backends`: each keeps working, with a
#: FutureWarning that names its place, until the next release.
_MOVED = {"OnnxBackend": "hf_punctcase.backends.onnxruntime", "TorchBackend": "hf_punctcase.backends.torch"}


def __getattr__(name: str):
    if name in _MOVED:
        from ..moved import moved_name

        return moved_name(__name__, name, _MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PIPELINE_TASK", "PunctCasePipeline", "backend_for"]
