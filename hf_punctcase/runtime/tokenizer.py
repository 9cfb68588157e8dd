"""A saved fast tokenizer, run with the ``tokenizers`` library alone.

:class:`RuntimeTokenizer` reads the ``tokenizer.json`` and ``tokenizer_config.json`` that transformers'
``save_pretrained`` writes and answers the calls that :mod:`hf_punctcase.restoration` makes of a
tokenizer (pre-split words in, subword ids and each subword's word out) with the same ids, masks and
word ids as transformers' fast tokenizer loaded from the same folder: the same Rust tokenizer runs,
with the same truncation, special tokens and no padding.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"


class RuntimeEncoding(dict):
    """``{"input_ids": ..., "attention_mask": ...}`` (a list per sequence for a batch), with
    :meth:`word_ids` as transformers' ``BatchEncoding`` has it."""

    def __init__(self, encodings: list, batched: bool):
        ids = [encoding.ids for encoding in encodings]
        masks = [encoding.attention_mask for encoding in encodings]
        super().__init__(input_ids=ids if batched else ids[0], attention_mask=masks if batched else masks[0])
        self.encodings = encodings

    def word_ids(self, batch_index: int = 0) -> list[int | None]:
        """For each subword of sequence ``batch_index``, the index of the word it belongs to (None for
        special tokens)."""
        return list(self.encodings[batch_index].word_ids)


def _token_text(value) -> str | None:
    """A special token as tokenizer_config.json stores it: a string, or an AddedToken's fields."""
    if isinstance(value, dict):
        return value.get("content")
    return value if isinstance(value, str) else None


class RuntimeTokenizer:
    """A fast tokenizer without transformers: ``tokenizers.Tokenizer`` plus the special tokens,
    length limit and padding side of its ``tokenizer_config.json``.

    Call it as restoration calls transformers' tokenizers: ``tokenizer(words_batch,
    is_split_into_words=True, truncation=True, max_length=n)`` for a batch of word lists, or
    ``tokenizer(text)`` for one string; the result has ``["input_ids"]``, ``["attention_mask"]`` and
    ``word_ids(i)``.
    """

    def __init__(
        self,
        tokenizer,
        *,
        unk_token: str | None = None,
        pad_token: str | None = None,
        model_max_length: int | None = None,
        padding_side: str = "right",
        truncation_side: str = "right",
    ):
        self.tokenizer = tokenizer
        self.unk_token = unk_token
        self.pad_token = pad_token
        self.model_max_length = model_max_length
        self.padding_side = padding_side
        self.truncation_side = truncation_side

    @classmethod
    def from_pretrained(cls, folder: str | os.PathLike) -> RuntimeTokenizer:
        """The tokenizer saved in ``folder`` (``tokenizer.json``, and ``tokenizer_config.json`` where present)."""
        from tokenizers import Tokenizer

        folder = Path(folder)
        file = folder / TOKENIZER_FILE
        if not file.is_file():
            raise FileNotFoundError(f"{folder} lacks {TOKENIZER_FILE} (the runtime needs a fast tokenizer's file)")
        config_file = folder / TOKENIZER_CONFIG_FILE
        config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
        special_map = folder / "special_tokens_map.json"
        specials = json.loads(special_map.read_text(encoding="utf-8")) if special_map.is_file() else {}
        limit = config.get("model_max_length")
        return cls(
            Tokenizer.from_file(str(file)),
            unk_token=_token_text(config.get("unk_token", specials.get("unk_token"))),
            pad_token=_token_text(config.get("pad_token", specials.get("pad_token"))),
            model_max_length=int(limit) if isinstance(limit, (int, float)) else None,
            padding_side=config.get("padding_side", "right"),
            truncation_side=config.get("truncation_side", "right"),
        )

    @property
    def pad_token_id(self) -> int | None:
        return None if self.pad_token is None else self.tokenizer.token_to_id(self.pad_token)

    @property
    def unk_token_id(self) -> int | None:
        return None if self.unk_token is None else self.tokenizer.token_to_id(self.unk_token)

    def __call__(
        self,
        text: str | Sequence[str] | Sequence[Sequence[str]],
        is_split_into_words: bool = False,
        truncation: bool = False,
        max_length: int | None = None,
    ) -> RuntimeEncoding:
        """Encode one input or a batch, with special tokens and without padding; with ``truncation``,
        each sequence is cut to ``max_length`` subwords (special tokens included), as transformers does."""
        if truncation:
            limit = max_length if max_length is not None else self.model_max_length
            self.tokenizer.enable_truncation(int(limit), stride=0, strategy="longest_first", direction=self.truncation_side)
        else:
            self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        batched = not isinstance(text, str) and (not is_split_into_words or (len(text) > 0 and not isinstance(text[0], str)))
        inputs = list(text) if batched else [text]
        if is_split_into_words:
            inputs = [list(words) for words in inputs]
        encodings = self.tokenizer.encode_batch(inputs, is_pretokenized=is_split_into_words, add_special_tokens=True)
        return RuntimeEncoding(encodings, batched)


__all__ = ["RuntimeEncoding", "RuntimeTokenizer", "TOKENIZER_CONFIG_FILE", "TOKENIZER_FILE"]
