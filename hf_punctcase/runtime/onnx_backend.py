"""Moved to :mod:`hf_punctcase.backends.onnxruntime` (and :mod:`hf_punctcase.backends.base`); this
module keeps their names for one release, with a FutureWarning."""

from ..moved import moved_module

moved_module(__name__, "hf_punctcase.backends.onnxruntime")

from ..backends.base import *  # noqa: E402,F403
from ..backends.onnxruntime import *  # noqa: E402,F403
