"""Words → subword tokens, and subword predictions → words.

The one place where the first-subword convention lives: a word's labels sit on its first subword;
every other position (later subwords, special tokens, padding) carries -100.
"""

from __future__ import annotations

from collections.abc import Sequence

from transformers import BatchEncoding, PreTrainedTokenizerBase

from .modeling import IGNORE_INDEX


def model_words(words: Sequence[str], lowercase: bool) -> list[str]:
    """The words as the encoder sees them (lowercased like ASR output when the model asks for it)."""
    return [w.lower() for w in words] if lowercase else list(words)


def tokenize_words(
    tokenizer: PreTrainedTokenizerBase,
    words_batch: Sequence[Sequence[str]],
    max_length: int,
    lowercase: bool = True,
) -> BatchEncoding:
    """Tokenise pre-split words (no padding; truncated to ``max_length`` subwords)."""
    return tokenizer(
        [model_words(words, lowercase) for words in words_batch],
        is_split_into_words=True,
        truncation=True,
        max_length=max_length,
    )


def first_subword_positions(word_ids: Sequence[int | None], num_words: int) -> list[int]:
    """Position of each word's first subword, or -1 for a word that got none (dropped by the
    tokenizer, e.g. a control character, or cut off by truncation)."""
    positions = [-1] * num_words
    previous = None
    for position, word_id in enumerate(word_ids):
        if word_id is not None and word_id != previous:
            positions[word_id] = position
        previous = word_id
    return positions


def align_labels(word_ids: Sequence[int | None], word_labels: Sequence[int]) -> list[int]:
    """Per-subword label ids: the word's label on its first subword, -100 elsewhere."""
    aligned = []
    previous = None
    for word_id in word_ids:
        if word_id is None or word_id == previous:
            aligned.append(IGNORE_INDEX)
        else:
            aligned.append(word_labels[word_id])
        previous = word_id
    return aligned


def tokenize_and_align_labels(
    tokenizer: PreTrainedTokenizerBase,
    words_batch: Sequence[Sequence[str]],
    punct_batch: Sequence[Sequence[int]],
    case_batch: Sequence[Sequence[int]],
    max_length: int,
    lowercase: bool = True,
) -> BatchEncoding:
    """Tokenise labelled words for training: adds ``punct_labels`` and ``case_labels`` columns."""
    encoding = tokenize_words(tokenizer, words_batch, max_length, lowercase)
    encoding["punct_labels"] = [align_labels(encoding.word_ids(i), p) for i, p in enumerate(punct_batch)]
    encoding["case_labels"] = [align_labels(encoding.word_ids(i), c) for i, c in enumerate(case_batch)]
    return encoding
