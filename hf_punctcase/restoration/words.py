"""A transcript's words as restoration treats them: those passed through untouched, those the encoder
sees, and which words casing can change (the characters that may follow a restored word:
:func:`hf_punctcase.labels.restored_trail`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..inputs import InputWords
from ..labels import apply_case, is_latin_letter
from ..tokenization import model_words

#: Words longer than this are passed through untouched and shown to the model as one unknown token.
MAX_WORD_CHARS = 100


def is_opaque(word: str) -> bool:
    """Tokens an English model cannot punctuate or case (no Latin letter or digit: emoji, symbols,
    other scripts; over-long tokens; tokens holding a lone surrogate, which no tokenizer accepts):
    passed through exactly as written."""
    return (
        len(word) > MAX_WORD_CHARS
        or has_surrogate(word)
        or not any(ch.isalnum() and ch.isascii() or is_latin_letter(ch) for ch in word)
    )


def has_surrogate(word: str) -> bool:
    """Whether ``word`` holds a lone surrogate (U+D800–U+DFFF), as text decoded with
    ``errors="surrogateescape"`` does: it cannot be encoded, so the tokenizer must not see it."""
    return not word.isascii() and any("\ud800" <= ch <= "\udfff" for ch in word)


def encoder_words(words: InputWords, lowercase: bool, unk_token: str) -> list[str]:
    """The words as the encoder sees them: lowercased when the model asks for it; an over-long token
    or one with a lone surrogate becomes the unknown token (after lowercasing, so that "[UNK]" stays
    the special token)."""
    return [
        unk_token if len(w) > MAX_WORD_CHARS or has_surrogate(w) else w for w in model_words(words.words, lowercase)
    ]


def capitalisable(words: Sequence[str], opaque: Sequence[bool] | None = None) -> np.ndarray:
    """Whether each word reads differently lowercased and capitalised ("so": yes; "3.5", "😀": no)."""
    opaque = [is_opaque(word) for word in words] if opaque is None else opaque
    known: dict[str, bool] = {}  # a transcript repeats its words: each distinct one is cased once

    def differs(word: str) -> bool:
        if word not in known:
            known[word] = apply_case(word, "UPPER_FIRST") != apply_case(word, "LOWER")
        return known[word]

    return np.array([not dark and differs(word) for word, dark in zip(words, opaque)], dtype=bool)
