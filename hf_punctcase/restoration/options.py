"""How a transcript is restored: one frozen set of options, checked when it is made, that the pipeline,
:class:`~hf_punctcase.runtime.OnDeviceRestorer` and :class:`~hf_punctcase.StreamingRestorer` share.

Each of them holds the options it was made with and updates them with a call's
(:meth:`RestoreOptions.updated`), so a value is checked in one place whichever entry point it came through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ..tasks import CASING, PUNCTUATION, Task
from .windows import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS, check_window_sizes

#: What restoration may restore into the text, by task name (the ``tasks`` option): punctuation, casing.
RESTORED_TASKS: tuple[str, ...] = (PUNCTUATION.name, CASING.name)


def check_tasks(tasks: str | Task | Sequence[str | Task]) -> tuple[str, ...]:
    """The tasks to restore, checked, as names in the order ``("punct", "case")``: a non-empty subset of
    :data:`RESTORED_TASKS`, given by name or as :class:`~hf_punctcase.tasks.Task` (one alone may be
    given bare)."""
    if isinstance(tasks, (str, Task)):
        tasks = (tasks,)
    try:
        given = tuple(task.name if isinstance(task, Task) else task for task in tasks)
    except TypeError:
        raise TypeError(f"tasks must be a tuple of task names {RESTORED_TASKS}, got {type(tasks).__name__}") from None
    unknown = [task for task in given if task not in RESTORED_TASKS]
    if unknown or not given:
        raise ValueError(f"tasks must be a non-empty subset of {RESTORED_TASKS}, got {given!r}")
    return tuple(task for task in RESTORED_TASKS if task in given)


@dataclass(frozen=True)
class RestoreOptions:
    """How to restore a transcript. Made checked: a bad value raises TypeError or ValueError here,
    whichever entry point it was given to.

    Attributes:
        window_words: words per model window (200).
        context_words: words of context on each side of a window's core (50); the core,
            ``window_words − 2 × context_words`` words, must hold at least one.
        vote_windows: every window answers for all of its words, and a word's probabilities are the
            average of the windows that hold it, weighted by its distance from each one's cut edge
            (:func:`~hf_punctcase.restoration.vote_weights`); the same windows run, so it costs the same.
        keep_punctuation: keep the marks already in the input instead of stripping them and predicting.
        consistent_casing: decide the mark after each word together with the casing of the next
            (:func:`~hf_punctcase.restoration.consistent_labels`); False: each head's argmax.
        ends_sentence: each input is a whole text, whose last word ends a sentence
            (:func:`~hf_punctcase.restoration.closing_mark`); False for pieces that may stop mid-sentence.
        tasks: what to restore, a non-empty subset of ``("punct", "case")`` (:func:`check_tasks`).
        return_sentences: also return ``"sentences"`` (:func:`~hf_punctcase.restoration.sentences`).
        return_paragraphs: also return ``"paragraphs"``, where the model's paragraph head ends them
            (models with a paragraph head; :func:`~hf_punctcase.restoration.layout.paragraph_spans`); the
            text stays as it is (``paragraphs=True`` also writes a blank line between them).
        return_probabilities: also return ``"probabilities"``, each task's per-word probabilities (every
            head then runs).
        return_commands: also run the spoken-command head (models with one), so that each word carries
            its ``command`` and ``command_score``; ``spoken_punctuation=True`` runs it too. Other calls
            leave it out, and with it the layers of its own that the head may carry
            (:attr:`~hf_punctcase.tasks.Task.asked_by`).
        option_heads: names of head tasks that the call runs for their options alone, set by those
            options' runs (``spoken_punctuation=True`` names ``"command"``): such a head also runs, but
            only on the windows holding a word its option reads, where its task says which
            (:attr:`~hf_punctcase.tasks.Task.reads`); every other word is certain of its null label. A
            head asked for by its own switch (``return_commands``) or for its probabilities runs on
            every window.
    """

    window_words: int = DEFAULT_WINDOW_WORDS
    context_words: int = DEFAULT_CONTEXT_WORDS
    vote_windows: bool = False
    keep_punctuation: bool = False
    consistent_casing: bool = True
    ends_sentence: bool = True
    tasks: tuple[str, ...] = RESTORED_TASKS
    return_sentences: bool = False
    return_paragraphs: bool = False
    return_probabilities: bool = False
    return_commands: bool = False
    option_heads: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_window_sizes(self.window_words, self.context_words)
        if isinstance(self.option_heads, str) or not all(isinstance(name, str) for name in self.option_heads):
            raise TypeError(f"option_heads must be a tuple of task names, got {self.option_heads!r}")
        object.__setattr__(self, "option_heads", tuple(self.option_heads))
        for name in _SWITCHES:
            value = getattr(self, name)
            # A string ("False") or a number would be taken for its truth value without a word.
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {value!r}")
            object.__setattr__(self, name, bool(value))
        object.__setattr__(self, "tasks", check_tasks(self.tasks))

    def updated(self, **changes: Any) -> RestoreOptions:
        """These options with the ones given changed (a value of None leaves an option as it is);
        a name that is no option raises TypeError."""
        unknown = sorted(set(changes) - set(OPTION_NAMES))
        if unknown:
            raise TypeError(f"unknown restore options: {unknown} (the options are {list(OPTION_NAMES)})")
        given = {name: value for name, value in changes.items() if value is not None}
        return replace(self, **given) if given else self

    @property
    def core_words(self) -> int:
        """Words each window answers for."""
        return self.window_words - 2 * self.context_words


#: The names of the restore options, in :class:`RestoreOptions` order.
OPTION_NAMES: tuple[str, ...] = tuple(field.name for field in fields(RestoreOptions))
_SWITCHES = tuple(field.name for field in fields(RestoreOptions) if field.type == "bool")


__all__ = ["OPTION_NAMES", "RESTORED_TASKS", "RestoreOptions", "check_tasks"]
