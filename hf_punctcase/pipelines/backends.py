"""Moved to :mod:`hf_punctcase.backends` (``TorchBackend`` and ``task_logits`` to
:mod:`hf_punctcase.backends.torch`, ``backend_for`` to :mod:`hf_punctcase.pipelines.punct_case`); this
module keeps their names for one release, with a FutureWarning."""

from ..moved import moved_module

moved_module(__name__, "hf_punctcase.backends")

from ..backends.onnxruntime import OnnxBackend  # noqa: E402,F401
from ..backends.torch import TorchBackend, task_logits  # noqa: E402,F401
from .punct_case import backend_for  # noqa: E402,F401
