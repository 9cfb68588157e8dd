"""Windows over a transcript's words, as the model sees them: planned, tokenised, and read back into
one row of probabilities per word.

A window answers for its middle words (its *core*) and sees ``context_words`` words on each side, so
every word is predicted where it sits farthest from a window edge. Windows that vote (``vote=True``)
are planned the same, so they cost the same, but each answers for all of its words: a word's
probabilities are the average of every window that holds it, each window weighted by the word's
distance from the window's nearer cut edge (Courtland et al. 2020 aggregate overlapping windows' predictions).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..tokenization import first_subword_positions, tokenize_words

#: Words per model window, and words of context on each side of a window's core, unless asked otherwise.
DEFAULT_WINDOW_WORDS = 200
DEFAULT_CONTEXT_WORDS = 50


@dataclass
class Window:
    """A slice ``[start, end)`` of an input's words, answering for words ``[core_start, core_end)``."""

    start: int
    end: int
    core_start: int
    core_end: int
    vote: bool = False


def check_window_sizes(window_words: int, context_words: int) -> None:
    """Raise ValueError unless the sizes leave a core of at least one word."""
    for name, value in (("window_words", window_words), ("context_words", context_words)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if context_words < 0:
        raise ValueError(f"context_words must be ≥ 0, got {context_words}")
    if window_words - 2 * context_words < 1:
        raise ValueError(f"window_words ({window_words}) must exceed 2 × context_words ({context_words})")


def plan_windows(num_words: int, window_words: int, context_words: int, vote: bool = False) -> Iterator[Window]:
    """Windows over ``num_words`` words: cores of ``window_words - 2 * context_words`` words tiling
    the input, each with up to ``context_words`` words of context on each side. With ``vote`` the
    same windows answer for all of their words (their core is the whole window)."""
    check_window_sizes(window_words, context_words)
    core = window_words - 2 * context_words
    for core_start in range(0, num_words, core):
        core_end = min(core_start + core, num_words)
        start, end = max(0, core_start - context_words), min(num_words, core_end + context_words)
        yield Window(start, end, start, end, vote=True) if vote else Window(start, end, core_start, core_end)


@dataclass
class EncodedWindow:
    """One model input: subword ids, and the position of the first subword of each word of the core
    (-1 for a word the tokenizer gave no subword)."""

    input_ids: list[int]
    attention_mask: list[int]
    core_positions: np.ndarray
    #: The input's index of the first core word, and each core word's weight (its vote).
    core_start: int = 0
    core_weights: np.ndarray | None = None


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
                list(encoding["input_ids"][0]), list(encoding["attention_mask"][0]), np.asarray(core, dtype=np.int64),
                piece.core_start, vote_weights(piece, len(words)),
            )
    if empty:
        ids = tokenizer("")["input_ids"] or [tokenizer.pad_token_id]
        yield EncodedWindow(list(ids), [1] * len(ids), np.zeros(0, dtype=np.int64))


def vote_weights(window: Window, num_words: int) -> np.ndarray:
    """Each core word's weight: 1 for a window that does not vote; for one that votes, 1 + the word's
    distance in words from the window's nearer edge where the window cuts the input (the input's own
    start and end cut nothing: a word there is as well placed as a word in the middle)."""
    size = window.core_end - window.core_start
    if not window.vote:
        return np.ones(size, dtype=np.float32)
    index = np.arange(window.core_start, window.core_end)
    far = window.end - window.start
    left = index - window.start if window.start > 0 else np.full(size, far)
    right = window.end - 1 - index if window.end < num_words else np.full(size, far)
    return (np.minimum(left, right) + 1).astype(np.float32)


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
        start, end = max(0, core_start - context), min(len(words), core_end + context)
        yield from _fit(tokenizer, words, Window(start, end, core_start, core_end, window.vote), max_length)


#: The longest subword sequence given to a model when neither it nor its tokenizer sets a usable limit.
DEFAULT_MAX_LENGTH = 512


def max_input_length(model_limit: int | None, tokenizer_limit: int | None) -> int:
    """Subwords per window given to a model: the smaller of the model's limit (its
    ``max_position_embeddings``) and the tokenizer's ``model_max_length``; a tokenizer without a real
    limit (transformers writes a huge number) counts as :data:`DEFAULT_MAX_LENGTH`."""
    tokenizer_limit = tokenizer_limit if tokenizer_limit is not None and tokenizer_limit < 100_000 else DEFAULT_MAX_LENGTH
    return min(DEFAULT_MAX_LENGTH if model_limit is None else model_limit, tokenizer_limit)


def word_probabilities(probs: np.ndarray, core_positions: np.ndarray) -> np.ndarray:
    """One window's subword probabilities ``(seq_len, classes)`` → one row per core word (its first
    subword's); a word without subwords gets certainty on class 0 (``O`` / ``LOWER``)."""
    rows = np.zeros((len(core_positions), probs.shape[-1]), dtype=np.float32)
    rows[:, 0] = 1.0
    seen = core_positions >= 0
    rows[seen] = probs[core_positions[seen]]
    return rows


@dataclass
class WindowRows:
    """What one window says of the words it answers for: per task, a row of probabilities per core
    word; where they sit in the input, and their weights."""

    probs: dict[str, np.ndarray]
    core_start: int
    weights: np.ndarray


def batch_rows(probs: Mapping[str, np.ndarray], windows: Sequence[EncodedWindow]) -> list[WindowRows]:
    """Each window's :class:`WindowRows` from a batch's per-task probabilities ``(batch, seq_len, classes)``
    (row ``i``: ``windows[i]``)."""
    return [window_rows({task: task_probs[row] for task, task_probs in probs.items()}, window) for row, window in enumerate(windows)]


def padded_windows(windows: Sequence[EncodedWindow], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """A batch of windows as one model input, padded on the right (``pad_id``, mask 0): int64
    ``input_ids`` and ``attention_mask`` of shape ``(len(windows), longest)``."""
    length = max(len(window.input_ids) for window in windows)
    ids = np.full((len(windows), length), pad_id, dtype=np.int64)
    mask = np.zeros((len(windows), length), dtype=np.int64)
    for row, window in enumerate(windows):
        ids[row, : len(window.input_ids)] = window.input_ids
        mask[row, : len(window.attention_mask)] = window.attention_mask
    return ids, mask


def window_rows(probs: Mapping[str, np.ndarray], window: EncodedWindow) -> WindowRows:
    """One window's :class:`WindowRows` from its per-task subword probabilities ``(seq_len, classes)``."""
    size = len(window.core_positions)
    weights = window.core_weights if window.core_weights is not None else np.ones(size, dtype=np.float32)
    rows = {task: word_probabilities(task_probs, window.core_positions) for task, task_probs in probs.items()}
    return WindowRows(rows, window.core_start, weights)


def join_windows(windows: Sequence[WindowRows], num_words: int) -> dict[str, np.ndarray]:
    """An input's per-word probabilities by task, from its windows' (in order): one row per input word,
    the average of the windows that answer for the word, weighted by their :attr:`WindowRows.weights`
    (the one window's rows themselves where cores tile the input)."""
    if _tiled(windows):
        return {task: np.concatenate([window.probs[task] for window in windows])[:num_words] for task in windows[0].probs}
    joined = {}
    for task in windows[0].probs:
        total = np.zeros((num_words, windows[0].probs[task].shape[-1]), dtype=np.float64)
        weight = np.zeros(num_words, dtype=np.float64)
        for window in windows:
            stop = window.core_start + len(window.weights)
            total[window.core_start : stop] += window.weights[:, None] * window.probs[task]
            weight[window.core_start : stop] += window.weights
        joined[task] = (total / weight[:, None]).astype(np.float32)
    return joined


def _tiled(windows: Sequence[WindowRows]) -> bool:
    """Whether the windows' cores follow one another without overlap."""
    position = 0
    for window in windows:
        if window.core_start != position:
            return False
        position += len(window.weights)
    return True
