"""Restoration without a runtime: every stage between the user's text and the model's probabilities.

    text ─split_words─▶ words + their own marks ─plan_windows─▶ windows ─encode_windows─▶ subword ids
    per-task probabilities ─word_probabilities─▶ one row per word ─decode─▶ labels ─▶ restored text

Every model family and runtime shares these functions: the transformers pipeline (torch) runs the model
between ``encode_windows`` and ``word_probabilities``, and a runtime without torch does the same with
its own session. Only NumPy and a tokenizer are needed here.

A window answers for its middle words (its *core*) and sees ``context_words`` words on each side, so
every word is predicted where it sits farthest from a window edge. Words are passed through untouched
where an English model cannot case or punctuate them (:func:`is_opaque`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .labels import LabelScheme, apply_case, is_latin_letter, split_trailing_marks
from .tokenization import first_subword_positions, model_words, tokenize_words

#: Words longer than this are passed through untouched and shown to the model as one unknown token.
MAX_WORD_CHARS = 100
#: The task heads whose probabilities restoration reads, by the name a backend gives them.
PUNCTUATION, CASING = "punct", "case"


@dataclass(frozen=True, eq=False)
class InputWords:
    """An input's words and the marks that trailed them, shared by all its windows.

    Held in an object rather than as lists because the pipeline base class walks every list in a
    batch (to move tensors to the device): a list of a million words per window would be walked
    once per window.
    """

    words: list[str]
    marks: list[str]

    def __len__(self) -> int:
        return len(self.words)


def split_words(tokens: Sequence[str]) -> InputWords:
    """Whitespace tokens → words and the punctuation each carried (``"risks?"`` → ``"risks"``, ``"?"``).

    A token of punctuation only (``--``, ``...``) stays a word of its own, so that every token is one
    word of the output."""
    cores, marks = [], []
    for token in tokens:
        core, trail = split_trailing_marks(token)
        if not core:
            core, trail = token, ""
        cores.append(core)
        marks.append(trail)
    return InputWords(cores, marks)


def is_opaque(word: str) -> bool:
    """Tokens an English model cannot punctuate or case (no Latin letter or digit: emoji, symbols,
    other scripts; or over-long tokens): passed through exactly as written."""
    return len(word) > MAX_WORD_CHARS or not any(ch.isalnum() and ch.isascii() or is_latin_letter(ch) for ch in word)


def encoder_words(words: InputWords, lowercase: bool, unk_token: str) -> list[str]:
    """The words as the encoder sees them: lowercased when the model asks for it; an over-long token
    becomes the unknown token (after lowercasing, so that "[UNK]" stays the special token)."""
    return [unk_token if len(w) > MAX_WORD_CHARS else w for w in model_words(words.words, lowercase)]


@dataclass
class Window:
    """A slice ``[start, end)`` of an input's words, answering for words ``[core_start, core_end)``."""

    start: int
    end: int
    core_start: int
    core_end: int


def check_window_sizes(window_words: int, context_words: int) -> None:
    """Raise ValueError unless the sizes leave a core of at least one word."""
    for name, value in (("window_words", window_words), ("context_words", context_words)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if context_words < 0:
        raise ValueError(f"context_words must be ≥ 0, got {context_words}")
    if window_words - 2 * context_words < 1:
        raise ValueError(f"window_words ({window_words}) must exceed 2 × context_words ({context_words})")


def plan_windows(num_words: int, window_words: int, context_words: int) -> Iterator[Window]:
    """Windows over ``num_words`` words: cores of ``window_words - 2 * context_words`` words tiling
    the input, each with up to ``context_words`` words of context on each side."""
    check_window_sizes(window_words, context_words)
    core = window_words - 2 * context_words
    for core_start in range(0, num_words, core):
        core_end = min(core_start + core, num_words)
        yield Window(max(0, core_start - context_words), min(num_words, core_end + context_words), core_start, core_end)


@dataclass
class EncodedWindow:
    """One model input: subword ids, and the position of the first subword of each word of the core
    (-1 for a word the tokenizer gave no subword)."""

    input_ids: list[int]
    attention_mask: list[int]
    core_positions: np.ndarray


def encode_windows(tokenizer, words: Sequence[str], windows: Sequence[Window], max_length: int) -> Iterator[EncodedWindow]:
    """Tokenise each window; a window whose subwords exceed ``max_length`` is split in two (cores halved,
    context halved) until it fits. An input without words gives one empty window, so that it still
    has a result."""
    empty = True
    for window in windows:
        for piece, encoding in _fit(tokenizer, words, window, max_length):
            empty = False
            positions = first_subword_positions(encoding.word_ids(0), piece.end - piece.start)
            offset = piece.core_start - piece.start
            core = positions[offset : offset + piece.core_end - piece.core_start]
            yield EncodedWindow(
                list(encoding["input_ids"][0]), list(encoding["attention_mask"][0]), np.asarray(core, dtype=np.int64)
            )
    if empty:
        ids = tokenizer("")["input_ids"] or [tokenizer.pad_token_id]
        yield EncodedWindow(list(ids), [1] * len(ids), np.zeros(0, dtype=np.int64))


def _fit(tokenizer, words: Sequence[str], window: Window, max_length: int):
    encoding = tokenize_words(tokenizer, [words[window.start : window.end]], 10**9, lowercase=False)
    if len(encoding["input_ids"][0]) <= max_length or window.end - window.start == 1:
        if len(encoding["input_ids"][0]) > max_length:  # one word alone overflows: keep its start
            encoding = tokenize_words(tokenizer, [words[window.start : window.end]], max_length, lowercase=False)
        yield window, encoding
        return
    context = (window.core_start - window.start) // 2
    if window.core_end - window.core_start > 1:
        middle = (window.core_start + window.core_end) // 2
        cores = [(window.core_start, middle), (middle, window.core_end)]
    else:
        cores = [(window.core_start, window.core_end)]
    for core_start, core_end in cores:
        yield from _fit(
            tokenizer,
            words,
            Window(max(0, core_start - context), min(len(words), core_end + context), core_start, core_end),
            max_length,
        )


def word_probabilities(probs: np.ndarray, core_positions: np.ndarray) -> np.ndarray:
    """One window's subword probabilities ``(seq_len, classes)`` → one row per core word (its first
    subword's); a word without subwords gets certainty on class 0 (``O`` / ``LOWER``)."""
    rows = np.zeros((len(core_positions), probs.shape[-1]), dtype=np.float32)
    rows[:, 0] = 1.0
    seen = core_positions >= 0
    rows[seen] = probs[core_positions[seen]]
    return rows


def decode(
    words: InputWords,
    probs: dict[str, np.ndarray],
    scheme: LabelScheme,
    lexicon: dict[str, str] | None = None,
    keep_punctuation: bool = False,
) -> dict:
    """Per-word probabilities (``probs[task]``: one row per word) → labels → the restored text.

    Returns ``{"text": ..., "words": [{"word", "punctuation", "casing", "punct_score", "case_score"}]}``;
    ``text.split()`` has one token per input word, each the input word up to case plus a trailing mark.
    """
    punct, case = probs[PUNCTUATION], probs[CASING]
    if not len(punct) == len(case) == len(words):
        raise RuntimeError(f"internal error: {len(punct)} predictions for {len(words)} words")
    punct_ids, case_ids = punct.argmax(-1), case.argmax(-1)
    restored = []
    for i, word in enumerate(words.words):
        mark = words.marks[i]
        punct_label = scheme.punct_labels[punct_ids[i]]
        case_label = scheme.case_labels[case_ids[i]]
        if is_opaque(word):
            text = word + mark if keep_punctuation else word
            punct_label, case_label = "O", "LOWER"
        elif keep_punctuation and mark:
            text = apply_case(word, case_label, lexicon) + mark
            punct_label = scheme.label_of_marks(mark)
        else:
            text = scheme.render_word(word, punct_label, case_label, lexicon)
        restored.append(
            {
                "word": text,
                "punctuation": punct_label,
                "casing": case_label,
                "punct_score": float(punct[i, punct_ids[i]]),
                "case_score": float(case[i, case_ids[i]]),
            }
        )
    return {"text": " ".join(w["word"] for w in restored), "words": restored}


__all__ = [
    "CASING",
    "EncodedWindow",
    "InputWords",
    "MAX_WORD_CHARS",
    "PUNCTUATION",
    "Window",
    "check_window_sizes",
    "decode",
    "encode_windows",
    "encoder_words",
    "is_opaque",
    "plan_windows",
    "split_words",
    "word_probabilities",
]
