"""Moved: :mod:`hf_punctcase.restoration.layout`. This name keeps working, with a FutureWarning, until the next release."""

import warnings

from .restoration.layout import *  # noqa: F403
from .restoration.layout import __all__

warnings.warn(
    "hf_punctcase.layout is now hf_punctcase.restoration.layout; the old name goes in the next release", FutureWarning, stacklevel=2
)
