"""Moved to :mod:`hf_punctcase.training.ngram` (n-gram data selection is training's); this module
keeps its names for one release, with a FutureWarning."""

from .moved import moved_module

moved_module(__name__, "hf_punctcase.training.ngram")

from .training.ngram import *  # noqa: E402,F403
