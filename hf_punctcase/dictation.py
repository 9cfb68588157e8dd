"""Moved: :mod:`hf_punctcase.options.dictation`. This name keeps working, with a FutureWarning, until the next release."""

import warnings

from .options.dictation import *  # noqa: F403
from .options.dictation import __all__

warnings.warn(
    "hf_punctcase.dictation is now hf_punctcase.options.dictation; the old name goes in the next release", FutureWarning, stacklevel=2
)
