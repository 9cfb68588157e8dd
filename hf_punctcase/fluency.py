"""Moved: :mod:`hf_punctcase.options.disfluency`. This name keeps working, with a FutureWarning, until the next release."""

import warnings

from .options.disfluency import *  # noqa: F403
from .options.disfluency import __all__

warnings.warn(
    "hf_punctcase.fluency is now hf_punctcase.options.disfluency; the old name goes in the next release", FutureWarning, stacklevel=2
)
