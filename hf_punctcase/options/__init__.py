"""The built-in head tasks and the ways of restoring they make possible, one module each: each declares
its task with :func:`~hf_punctcase.tasks.register_task` and its option's run, and importing it
registers them (importing :mod:`hf_punctcase` imports this package).

- :mod:`~hf_punctcase.options.disfluency`: the disfluency head, ``remove_disfluencies=True``;
- :mod:`~hf_punctcase.options.dictation`: the spoken-command head, ``spoken_punctuation=True``;
- :mod:`~hf_punctcase.options.paragraphs`: the paragraph head, ``paragraphs=True``.

The core (tasks, inputs, restoration) imports none of them (an import-linter contract holds it), and a
checkpoint's code bundle carries the modules of the heads its config lists. They are imported in this
order, which is the order of :data:`~hf_punctcase.tasks.TASKS`: models output their heads and scores
list them in it.
"""

from .disfluency import DISFLUENCY
from .dictation import COMMAND
from .paragraphs import PARAGRAPH

__all__ = ["COMMAND", "DISFLUENCY", "PARAGRAPH"]
