"""Restoration without a runtime: every stage between the user's text and the model's probabilities.

    text ─split_words─▶ words + their own marks ─plan_windows─▶ windows ─encode_windows─▶ subword ids
    per-task probabilities ─word_probabilities─▶ one row per word ─decode─▶ labels ─▶ restored text

One module per job: :mod:`~hf_punctcase.restoration.words` (which words pass through, what the encoder
sees), :mod:`~hf_punctcase.restoration.windows` (windows, subwords, per-word rows),
:mod:`~hf_punctcase.restoration.decoding` (labels and the restored text),
:mod:`~hf_punctcase.restoration.sentences` (offsets, sentences),
:mod:`~hf_punctcase.restoration.options` (:class:`RestoreOptions`, what a call may ask for) and
:mod:`~hf_punctcase.restoration.engine` (:class:`RestorationEngine`, the stages together for one model,
which the pipeline, the torch-free runtime and a stream each drive).

Every model family and runtime shares these functions: the transformers pipeline (torch) runs the model
between ``encode_windows`` and ``word_probabilities``, and a runtime without torch does the same with
its own runtime (ONNX Runtime). Only NumPy and a tokenizer are needed here.

A window answers for its middle words (its *core*) and sees ``context_words`` words on each side, so
every word is predicted where it sits farthest from a window edge. Words are passed through untouched
where an English model cannot case or punctuate them (:func:`is_opaque`).

What restoration may change, and nothing else: the case of a word's Latin letters (only to a letter
that lowercases as the original does, so that the word stays the input word up to case), and the
punctuation marks ``. , ? ! : ; - …`` trailing a word, which are replaced by the predicted mark
(kept instead with ``keep_punctuation``). Leading and closing quotes and brackets, the characters
inside a word, an abbreviation's period ("U.S.") and every character of a word passed through are
kept as written (:func:`restored_trail` places the predicted mark among closing quotes and
brackets); whitespace between words becomes one space.
"""

from ..labels import SENTENCE_END_LABELS
from .decoding import (
    BARE_RUN_WORDS,
    CAPITAL_RUN_WORDS,
    NAME_ODDS,
    WrittenStretches,
    closing_mark,
    consistent_labels,
    decode,
    restore_from_windows,
    written_words,
)
from .engine import RestorationEngine
from .options import OPTION_NAMES, RESTORED_TASKS, RestoreOptions, check_tasks
from .sentences import add_char_offsets, char_offsets, is_sentence_end, sentences
from .windows import (
    DEFAULT_CONTEXT_WORDS,
    DEFAULT_MAX_LENGTH,
    DEFAULT_WINDOW_WORDS,
    EncodedWindow,
    Window,
    WindowRows,
    batch_rows,
    check_window_sizes,
    encode_windows,
    join_windows,
    max_input_length,
    padded_windows,
    plan_windows,
    vote_weights,
    window_rows,
    word_probabilities,
)
from ..labels import restored_trail
from .words import MAX_WORD_CHARS, capitalisable, encoder_words, has_surrogate, is_opaque

__all__ = [
    "BARE_RUN_WORDS",
    "CAPITAL_RUN_WORDS",
    "DEFAULT_CONTEXT_WORDS",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_WINDOW_WORDS",
    "EncodedWindow",
    "MAX_WORD_CHARS",
    "NAME_ODDS",
    "OPTION_NAMES",
    "RESTORED_TASKS",
    "RestorationEngine",
    "RestoreOptions",
    "SENTENCE_END_LABELS",
    "Window",
    "WindowRows",
    "add_char_offsets",
    "batch_rows",
    "capitalisable",
    "char_offsets",
    "check_tasks",
    "check_window_sizes",
    "closing_mark",
    "consistent_labels",
    "decode",
    "encode_windows",
    "encoder_words",
    "has_surrogate",
    "is_opaque",
    "is_sentence_end",
    "join_windows",
    "max_input_length",
    "padded_windows",
    "plan_windows",
    "restore_from_windows",
    "restored_trail",
    "sentences",
    "vote_weights",
    "window_rows",
    "word_probabilities",
    "WrittenStretches",
    "written_words",
]
