"""Shrink a pretrained encoder to a parameter budget: its first k layers and the subwords a domain uses.

    counts = subword_counts(tokenizer, word_counts)   # word → count in, subword id → count out
    keep = vocabulary_for_budget(tokenizer, counts, vocab_size=4300, words=word_counts)
    shrink_encoder("path/to/encoder", "encoders/mpnet3-4k", keep, num_layers=3)

A base-size encoder spends a fifth of its parameters on word embeddings (all-mpnet-base-v2: 23.4M of
109.5M), and most of those rows are subwords English speech transcripts do not use (other scripts,
rare names). Dropping rows keeps every kept subword's pretrained vector exactly; a low-rank factorisation
would not (mpnet's embedding matrix keeps 39% of its variance at rank 128). Words whose subwords were
dropped are split into smaller kept pieces: every character the counted words contain stays in the
vocabulary, as a word start and as a continuation, so no word that was covered becomes unknown.

The result is an ordinary encoder directory (config, weights, tokenizer) that any recipe takes as
``--encoder``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import torch
from transformers import AutoTokenizer, PreTrainedTokenizerBase

from ..atomic_files import atomic_write_text
from ..data import CorpusSpec
from ..encoders import resolve_encoder
from ..labels import LabelScheme
from ..models.joint_transformer import JointTokenClassificationModel
from ..models.joint_transformer.modeling import _encoder_from_pretrained, truncated_encoder_config
from ..tokenization import model_words

logger = logging.getLogger(__name__)

_TOKENIZER_FILES = ("tokenizer_config.json", "special_tokens_map.json")
_TOKEN_ID_KEYS = ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id", "mask_token_id")


def subword_counts(tokenizer: PreTrainedTokenizerBase, word_counts: Mapping[str, int], lowercase: bool = True) -> Counter:
    """How often each subword id occurs in a text with these word counts, tokenised as the model
    sees its words."""
    as_seen: Counter = Counter()
    for word, count in word_counts.items():
        (seen_word,) = model_words([word], lowercase)
        as_seen[seen_word] += count
    distinct = list(as_seen)
    counts: Counter = Counter()
    for start in range(0, len(distinct), 10_000):
        batch = distinct[start : start + 10_000]
        for word, ids in zip(batch, tokenizer(batch, add_special_tokens=False)["input_ids"]):
            for token_id in ids:
                counts[token_id] += as_seen[word]
    return counts


def _wordpiece_state(tokenizer: PreTrainedTokenizerBase) -> dict:
    """The tokenizer's serialised state (tokenizer.json), checked to be a WordPiece model."""
    state = json.loads(tokenizer.backend_tokenizer.to_str())
    if state["model"]["type"] != "WordPiece":
        raise ValueError(f"vocabulary pruning supports WordPiece tokenizers, not {state['model']['type']}")
    return state


def vocabulary_for_budget(
    tokenizer: PreTrainedTokenizerBase,
    counts: Counter,
    vocab_size: int,
    words: Iterable[str] | None = None,
) -> list[int]:
    """The subword ids to keep, in their original order: the special tokens, a start and a
    continuation piece for every character of ``words`` (or of the counted subwords), then the most
    frequent subwords of ``counts`` up to ``vocab_size``."""
    prefix = _wordpiece_state(tokenizer)["model"]["continuing_subword_prefix"]
    vocab = tokenizer.get_vocab()
    keep = set(tokenizer.all_special_ids) | {vocab[token] for token in tokenizer.get_added_vocab()}
    if words is None:
        pieces = tokenizer.convert_ids_to_tokens(list(counts))
        words = [piece.removeprefix(prefix) for piece in pieces]
    characters = set("".join(model_words(list(words), True))) | set("abcdefghijklmnopqrstuvwxyz0123456789")
    for character in characters:
        for piece in (character, prefix + character):
            if piece in vocab:
                keep.add(vocab[piece])
    if len(keep) > vocab_size:
        raise ValueError(f"vocab_size={vocab_size} is below the {len(keep)} special and character tokens that must stay")
    for token_id, _ in counts.most_common():
        if len(keep) >= vocab_size:
            break
        keep.add(token_id)
    return sorted(keep)


def _remap_post_processor(processor: dict | None, new_id: dict[int, int]) -> None:
    if processor is None:
        return
    kind = processor["type"]
    if kind in ("RobertaProcessing", "BertProcessing"):
        for key in ("sep", "cls"):
            processor[key][1] = new_id[processor[key][1]]
    elif kind == "TemplateProcessing":
        for special in processor["special_tokens"].values():
            special["ids"] = [new_id[i] for i in special["ids"]]
    elif kind == "Sequence":
        for inner in processor["processors"]:
            _remap_post_processor(inner, new_id)
    elif kind != "ByteLevel":
        raise ValueError(f"cannot remap the token ids of a {kind} post-processor")


def shrink_tokenizer(tokenizer: PreTrainedTokenizerBase, keep_ids: list[int], output_dir: str | os.PathLike) -> None:
    """Write ``tokenizer`` with only ``keep_ids``, renumbered 0..n-1 in their original order."""
    state = _wordpiece_state(tokenizer)
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    new_id = {old: new for new, old in enumerate(keep_ids)}
    old_tokens = tokenizer.convert_ids_to_tokens(keep_ids)
    state["model"]["vocab"] = {token: new_id[old] for token, old in zip(old_tokens, keep_ids)}
    for added in state["added_tokens"]:
        added["id"] = new_id[added["id"]]
    _remap_post_processor(state.get("post_processor"), new_id)
    atomic_write_text(output_dir / "tokenizer.json", json.dumps(state, ensure_ascii=False))
    # The slow tokenizer reads vocab.txt: the same tokens, one per line in id order.
    atomic_write_text(output_dir / "vocab.txt", "".join(f"{token}\n" for token in old_tokens))
    source = Path(tokenizer.name_or_path)
    for name in _TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy(source / name, output_dir / name)


def shrink_encoder(
    encoder_name_or_path: str | os.PathLike,
    output_dir: str | os.PathLike,
    keep_ids: list[int],
    num_layers: int | None = None,
) -> int:
    """Save ``encoder_name_or_path`` with its first ``num_layers`` layers and the word-embedding rows
    and tokenizer entries of ``keep_ids`` only. Returns the saved encoder's parameter count."""
    tokenizer = AutoTokenizer.from_pretrained(encoder_name_or_path)
    model = _encoder_from_pretrained(encoder_name_or_path, truncated_encoder_config(encoder_name_or_path, num_layers))
    config = model.config
    new_id = {old: new for new, old in enumerate(keep_ids)}
    old_embeddings = model.get_input_embeddings()
    rows = old_embeddings.weight.detach()[torch.tensor(keep_ids)]
    for key in _TOKEN_ID_KEYS:
        old = getattr(config, key, None)
        if old is not None:
            if old not in new_id:
                raise ValueError(f"{key}={old} is not among the kept token ids")
            setattr(config, key, new_id[old])
    padding_idx = None if old_embeddings.padding_idx is None else new_id[old_embeddings.padding_idx]
    model.set_input_embeddings(torch.nn.Embedding.from_pretrained(rows, freeze=False, padding_idx=padding_idx))
    config.vocab_size = len(keep_ids)
    model.save_pretrained(output_dir)
    shrink_tokenizer(tokenizer, keep_ids, output_dir)
    return model.num_parameters()


def corpus_word_counts(
    corpora: Sequence[str], data_dir: str | os.PathLike | None = None, max_corpus_words: int = 4_000_000
) -> Counter:
    """Word counts of the train splits of some corpus specs (words as the labelled data holds them:
    lowercase, without marks); each corpus contributes its first examples up to ``max_corpus_words``
    words (the example that reaches the cap included)."""
    word_counts: Counter = Counter()
    for spec in map(CorpusSpec.parse, corpora):
        seen = 0
        for words in spec.load(data_dir, max_words=200, scheme=LabelScheme(), splits=["train"])["train"]["words"]:
            word_counts.update(words)
            seen += len(words)
            if seen >= max_corpus_words:
                break
        logger.info("%s: %d words", spec.name, seen)
    return word_counts


def shrink_for_corpora(
    encoder: str | os.PathLike,
    output_dir: str | os.PathLike,
    vocab_size: int,
    corpora: Sequence[str],
    num_layers: int | None = None,
    max_corpus_words: int = 4_000_000,
    data_dir: str | os.PathLike | None = None,
) -> dict:
    """Shrink ``encoder`` (a folder, a model id, or minilm / mpnet) to its first ``num_layers`` layers and
    the ``vocab_size`` subwords the train splits of ``corpora`` use most, into ``output_dir``.

    Returns what was done: the vocabulary size, the words counted, the share of their subwords the kept
    vocabulary covered before words were re-split, and the parameter counts of the encoder and of the
    joint model built on it."""
    encoder = resolve_encoder(encoder)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    word_counts = corpus_word_counts(corpora, data_dir, max_corpus_words)
    counts = subword_counts(tokenizer, word_counts)
    keep = vocabulary_for_budget(tokenizer, counts, vocab_size, words=word_counts)
    kept = set(keep)
    coverage = sum(n for token_id, n in counts.items() if token_id in kept) / sum(counts.values())
    encoder_parameters = shrink_encoder(encoder, output_dir, keep, num_layers=num_layers)
    joint_parameters = JointTokenClassificationModel.from_encoder(str(output_dir)).num_parameters()
    return {
        "encoder": encoder,
        "num_layers": num_layers,
        "vocab_size": len(keep),
        "counted_words": sum(word_counts.values()),
        "subword_coverage_before_resplitting": coverage,
        "encoder_parameters": encoder_parameters,
        "joint_model_parameters": joint_parameters,
    }


__all__ = [
    "corpus_word_counts",
    "shrink_encoder",
    "shrink_for_corpora",
    "shrink_tokenizer",
    "subword_counts",
    "vocabulary_for_budget",
]
