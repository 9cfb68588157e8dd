"""Words → subword tokens, and subword predictions → words.

The one place where the first-subword convention lives: a word's labels sit on its first subword;
every other position (later subwords, special tokens, padding) carries -100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .labels import IGNORE_INDEX
from .tasks import CASING, PUNCTUATION, Task

if TYPE_CHECKING:  # annotations only: restoration (and the runtime without transformers) imports this module
    from transformers import BatchEncoding, PreTrainedTokenizerBase

# Knowledge distillation: the teacher's logits per word (word-level columns of a dataset), and per
# subword with a mask once tokenised (see hf_punctcase.training.distillation).
TEACHER_PUNCT = "teacher_punct_logits"
TEACHER_CASE = "teacher_case_logits"
TEACHER_MASK = "teacher_mask"
#: Token-level columns a distillation batch carries besides the model's inputs and labels.
TEACHER_COLUMNS = (TEACHER_PUNCT, TEACHER_CASE, TEACHER_MASK)


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


def first_subword_word_ids(word_ids: Sequence[int | None]) -> list[int | None]:
    """For each position, the word whose first subword it is, else None (later subwords, special tokens)."""
    firsts, previous = [], None
    for word_id in word_ids:
        firsts.append(word_id if word_id is not None and word_id != previous else None)
        previous = word_id
    return firsts


def first_subword_positions(word_ids: Sequence[int | None], num_words: int) -> list[int]:
    """Position of each word's first subword, or -1 for a word that got none (dropped by the
    tokenizer, e.g. a control character, or cut off by truncation)."""
    positions = [-1] * num_words
    for position, word_id in enumerate(first_subword_word_ids(word_ids)):
        if word_id is not None:
            positions[word_id] = position
    return positions


def align_labels(word_ids: Sequence[int | None], word_labels: Sequence[int]) -> list[int]:
    """Per-subword label ids: the word's label on its first subword, -100 elsewhere."""
    return [IGNORE_INDEX if w is None else word_labels[w] for w in first_subword_word_ids(word_ids)]


def teacher_columns_for_tokens(
    word_ids: Sequence[int | None], punct_rows: Sequence[Sequence[float]], case_rows: Sequence[Sequence[float]]
) -> dict[str, list]:
    """Token-level teacher columns: a word's rows on its first subword, zeros and mask 0 elsewhere
    (later subwords, special tokens, words the teacher gave no row)."""
    num_punct, num_case = len(punct_rows[0]) if punct_rows else 0, len(case_rows[0]) if case_rows else 0
    punct, case, mask = [], [], []
    for word_id in first_subword_word_ids(word_ids):
        row = word_id if word_id is not None and not math.isnan(punct_rows[word_id][0]) else None
        punct.append(list(punct_rows[row]) if row is not None else [0.0] * num_punct)
        case.append(list(case_rows[row]) if row is not None else [0.0] * num_case)
        mask.append(1 if row is not None else 0)
    return {TEACHER_PUNCT: punct, TEACHER_CASE: case, TEACHER_MASK: mask}


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


def tokenize_dataset(
    dataset,
    tokenizer: PreTrainedTokenizerBase,
    max_length: int = 256,
    stride: int = 32,
    lowercase: bool = True,
    num_proc: int | None = None,
    tasks: Sequence[Task] | None = None,
):
    """Tokenise a labelled dataset (``words``, ``punct``, ``case`` columns) for training.

    Labels sit on first subwords, -100 elsewhere and where a source gave no label (``MISSING_LABEL``). An example
    longer than ``max_length`` subwords becomes several, overlapping by ``stride`` subwords; the first
    word of a continuation window is not labelled there when the window before holds its start (a word
    cut, or the overlap's first word), so that with ``stride=0`` each word is labelled exactly once. Each of ``tasks`` (the model's, :func:`hf_punctcase.tasks.tasks_of`; default: punctuation
    and casing) gives a subword label column (``<task>_labels``) from its word column (``punct``,
    ``case``, ``disfluency``, ...; all ignored where the dataset has none). `datasets` caches the result. A dataset with the teacher's per-word logits
    (:func:`hf_punctcase.training.distillation.add_teacher_logits`) also gets the token-level teacher columns.
    """
    with_teacher = TEACHER_PUNCT in dataset.column_names
    sources = {task.word_column: task.label_field for task in (tasks or (PUNCTUATION, CASING))}

    def encode(batch):
        encoding = tokenizer(
            [model_words(words, lowercase) for words in batch["words"]],
            is_split_into_words=True,
            truncation=True,
            max_length=max_length,
            stride=stride,
            return_overflowing_tokens=True,
        )
        origins = encoding.pop("overflow_to_sample_mapping")
        columns = {name: [] for name in sources.values()}
        previous_origin, previous_words = None, set()
        for i, origin in enumerate(origins):
            word_ids = list(encoding.word_ids(i))
            seen = set(word_ids)
            if origin == previous_origin:  # a continuation window: its first word may be cut
                first = next((w for w in word_ids if w is not None), None)
                if first in previous_words:  # its first subword, which carries the label, is in the window before
                    word_ids = [None if w == first else w for w in word_ids]
            previous_origin, previous_words = origin, seen
            for source, name in sources.items():
                if source in batch:
                    labels = [IGNORE_INDEX if label < 0 else label for label in batch[source][origin]]
                else:  # a dataset without this task's annotation
                    labels = [IGNORE_INDEX] * len(batch["words"][origin])
                columns[name].append(align_labels(word_ids, labels))
            if with_teacher:
                teacher = teacher_columns_for_tokens(word_ids, batch[TEACHER_PUNCT][origin], batch[TEACHER_CASE][origin])
                for name, values in teacher.items():
                    columns.setdefault(name, []).append(values)
        return {**encoding, **columns}

    return dataset.map(encode, batched=True, remove_columns=dataset.column_names, num_proc=num_proc)
