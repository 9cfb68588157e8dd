"""Moved: :mod:`hf_punctcase.options.paragraphs`. This name keeps working, with a FutureWarning, until the next release."""

import warnings

from .options.paragraphs import *  # noqa: F403
from .options.paragraphs import __all__

warnings.warn(
    "hf_punctcase.paragraphs is now hf_punctcase.options.paragraphs; the old name goes in the next release", FutureWarning, stacklevel=2
)
