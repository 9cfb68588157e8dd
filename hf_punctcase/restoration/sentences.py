"""Restored words placed in the restored text and cut into sentences."""

from __future__ import annotations

from collections.abc import Sequence

from ..labels import SENTENCE_END_LABELS


def char_offsets(words: Sequence[dict]) -> list[tuple[int, int]]:
    """Where each restored word lies in the restored text (the words joined by one space):
    ``(start_char, end_char)`` with ``text[start_char:end_char] == word["word"]``."""
    offsets, position = [], 0
    for entry in words:
        end = position + len(entry["word"])
        offsets.append((position, end))
        position = end + 1
    return offsets


def add_char_offsets(words: Sequence[dict]) -> Sequence[dict]:
    """Give each restored word entry its ``start_char`` and ``end_char`` (:func:`char_offsets`), in place."""
    for entry, (start, end) in zip(words, char_offsets(words)):
        entry["start_char"], entry["end_char"] = start, end
    return words


def is_sentence_end(entry: dict) -> bool:
    """Whether a restored word ends a sentence: its punctuation label is PERIOD, QUESTION or
    EXCLAMATION (:data:`SENTENCE_END_LABELS`)."""
    return entry.get("punctuation") in SENTENCE_END_LABELS


def sentences(words: Sequence[dict]) -> list[dict]:
    """The restored words (``decode``'s ``"words"``) cut into sentences after each sentence end
    (:func:`is_sentence_end`) and at the end.

    Each sentence is ``{"text", "first_word", "last_word", "start", "end", "start_char", "end_char"}``:
    its text, the indices of its first and last word (inclusive), the ``start`` of its first word and
    the ``end`` of its last word where the words carry times (else None) and its character span in
    the restored text. Every word is in exactly one sentence; no input, no sentences.
    """
    offsets = char_offsets(words)
    result, first = [], 0
    for i, entry in enumerate(words):
        if i + 1 < len(words) and not is_sentence_end(entry):
            continue
        result.append(
            {
                "text": " ".join(w["word"] for w in words[first : i + 1]),
                "first_word": first,
                "last_word": i,
                "start": words[first].get("start"),
                "end": entry.get("end"),
                "start_char": offsets[first][0],
                "end_char": offsets[i][1],
            }
        )
        first = i + 1
    return result
