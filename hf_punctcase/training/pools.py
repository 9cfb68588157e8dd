"""The data of a training run: the training mixture (corpus pools, weights, simulated ASR noise, a cap on
words) and the dev sets, tokenised as the Trainer scores them."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
from transformers import PretrainedConfig, PreTrainedTokenizerBase

from ..data import (
    FILE_SOURCES,
    CorpusSpec,
    cap_words,
    count_words,
    load_punct_case_dataset,
    mixed_case_lexicon,
    weighted_mix,
    window_examples,
)
from ..data.asr_noise import ASR_NOISE_POOL, AsrNoiseModel, add_asr_noise
from ..labels import LabelScheme
from ..restoration import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS, max_input_length
from ..tasks import Task
from ..tokenization import tokenize_dataset
from .arguments import DataArguments

logger = logging.getLogger(__name__)


@dataclass
class TrainingPools:
    """The training windows of each corpus spec (in the order given), and the MIXED-case lexicon of
    the texts they came from (every training document, whatever its sampling weight)."""

    parts: list[tuple[CorpusSpec, datasets.Dataset]]
    lexicon: dict[str, str]


def load_training_pools(
    specs: Sequence[CorpusSpec],
    data_dir: str | os.PathLike | None,
    window_words: int,
    scheme: LabelScheme | None = None,
    file_split: str | None = None,
) -> TrainingPools:
    """The train split of each corpus, cut into consecutive windows of ``window_words`` words.

    Each corpus is parsed once (a cached load not at all): the windows are cut as the documents are
    parsed, and the lexicon is read off the written forms the same pass kept. ``file_split="train"``
    trains on every document of the user's file corpora instead of their hash split's train share."""
    loaded = []
    for spec in specs:
        splits = spec.load(
            data_dir, window_words, scheme, splits=["train"], windows=True, written_forms=True, file_split=file_split
        )
        if "train" not in splits:
            raise ValueError(f"{spec} has no train split")
        loaded.append((spec, splits["train"]))
    lexicon = mixed_case_lexicon(dataset for _, dataset in loaded)
    # The written forms have served: the training data carries the usual columns only.
    return TrainingPools([(spec, dataset.remove_columns("written")) for spec, dataset in loaded], lexicon)


def noisy_pools(
    data_args: DataArguments, scheme: LabelScheme, file_split: str | None, seed: int
) -> list[tuple[CorpusSpec, datasets.Dataset]]:
    """The train windows of ``--asr_noise_corpora`` with simulated ASR errors
    (:func:`~hf_punctcase.data.asr_noise.add_asr_noise`), each with its spec's weight."""
    noise = AsrNoiseModel.load(data_args.asr_noise_model)
    if data_args.asr_noise_rates is not None:
        noise = noise.with_rates(*data_args.asr_noise_rates)
    specs = [CorpusSpec.parse(spec) for spec in data_args.asr_noise_corpora]
    pools = load_training_pools(specs, data_args.data_dir, data_args.window_words, scheme, file_split)
    return [(spec, add_asr_noise(windows, noise, seed=seed)) for spec, windows in pools.parts]



def check_files(data_args: DataArguments) -> None:
    """Raise FileNotFoundError naming the option and the file for a corpus file, validation file or
    noise model that is not there, before any corpus is read."""
    for option, specs in (
        ("--train_corpora", data_args.train_corpora),
        ("--eval_corpora", data_args.dev_corpora),
        ("--asr_noise_corpora", data_args.asr_noise_corpora),
    ):
        for spec in specs:
            for file in CorpusSpec.parse(spec).data_files:
                if not Path(file).is_file():
                    raise FileNotFoundError(f"{option} {spec}: no file {file}")
    for option, file in (("--validation_file", data_args.validation_file), ("--asr_noise_model", data_args.asr_noise_model)):
        if file and not Path(file).exists():
            raise FileNotFoundError(f"{option}: no file {file}")


@dataclass
class TrainingMixture:
    """The windows a run trains on, the words of each pool (by spec; simulated-ASR pools prefixed), and
    the MIXED-case lexicon of the training texts."""

    windows: datasets.Dataset
    pool_words: dict[str, int]
    lexicon: dict[str, str]


def training_mixture(
    data_args: DataArguments, specs: Sequence[CorpusSpec], scheme: LabelScheme, seed: int
) -> TrainingMixture:
    """The corpus pools and the simulated-ASR pools mixed by their weights, capped at ``max_train_words``."""
    pools = load_training_pools(specs, data_args.data_dir, data_args.window_words, scheme, data_args.file_split)
    pool_words = {str(spec): count_words(windows) for spec, windows in pools.parts}
    parts = [(windows, spec.weight) for spec, windows in pools.parts]
    if data_args.asr_noise_model:
        for spec, windows in noisy_pools(data_args, scheme, data_args.file_split, seed=seed):
            pool_words[f"{ASR_NOISE_POOL}{spec}"] = count_words(windows)
            parts.append((windows, spec.weight))
    windows = weighted_mix(parts, seed=seed)
    if data_args.max_train_words:
        windows = cap_words(windows, data_args.max_train_words)
    logger.info("training mixture: %d examples, %d words (pools: %s)", len(windows), count_words(windows), pool_words)
    return TrainingMixture(windows, pool_words, pools.lexicon)


def _resolved_files(spec: CorpusSpec) -> set[Path]:
    return {Path(f).resolve() for f in spec.data_files}


def load_dev_sets(
    specs: Sequence[CorpusSpec],
    data_dir: str | os.PathLike | None,
    max_words: int,
    scheme: LabelScheme | None = None,
    validation_file: str | os.PathLike | None = None,
    train_specs: Sequence[CorpusSpec] = (),
    file_split: str | None = None,
    max_eval_words: int | None = None,
) -> dict[str, datasets.Dataset]:
    """The dev set, by name: the validation split of each corpus spec, and the user's ``validation_file``
    (every document of it; named by its file name).

    A file corpus (``text:FILE``) that no training spec reads is a dev set of its own: all its documents
    are scored. One that training reads too is scored on its hash split's validation share, the
    documents training leaves out; when training takes all of them (``file_split="train"``) nothing is
    left, and that is an error rather than a dev set of training data."""
    trained = set().union(*(_resolved_files(s) for s in train_specs if s.name in FILE_SOURCES))
    dev: dict[str, datasets.Dataset] = {}
    for spec in specs:
        spec_split = None
        if spec.name in FILE_SOURCES:
            if not _resolved_files(spec) & trained:
                spec_split = "validation"
            elif file_split is not None:
                raise ValueError(
                    f"{spec} is also a training corpus, and training takes all its documents (--text_split all, the "
                    "default with --validation_file): none are left to score; pass --text_split hash, or another file"
                )
        splits = spec.load(data_dir, max_words, scheme, splits=["validation"], file_split=spec_split)
        if "validation" not in splits:
            hashed = spec_split is None and spec.name in FILE_SOURCES
            hint = " (its hash split sent no document to validation: pass --validation_file)" if hashed else ""
            raise ValueError(f"{spec.name} has no validation split{hint}")
        name = spec.name
        if name in dev:  # two file corpora: tell them apart by their files
            name = f"{spec.name}:{','.join(Path(f).name for f in spec.data_files)}"
        dev[name] = splits["validation"]
    if validation_file is not None:
        if Path(validation_file).resolve() in trained:
            raise ValueError(f"the validation file {validation_file} is also a training corpus")
        dev[Path(validation_file).name] = load_punct_case_dataset(
            "text", data_files=[validation_file], max_words=max_words, scheme=scheme,
            file_split="validation", splits=["validation"],
        )["validation"]
    if not dev:
        raise ValueError("no dev set: name --eval_corpora or a --validation_file")
    if max_eval_words:
        dev = {name: cap_words(data, max_eval_words) for name, data in dev.items()}
    return dev


def tokenize_dev_set(
    dev: datasets.Dataset,
    tokenizer: PreTrainedTokenizerBase,
    config: PretrainedConfig,
    with_context: bool,
    max_seq_length: int,
    tasks: Sequence[Task],
) -> datasets.Dataset:
    """The dev set as the Trainer scores it. ``with_context``: in the pipeline's windows (each word
    scored once, in the middle of a window, with the pipeline's context on each side), tokenised to the
    model's input length as the pipeline does; a window longer than that is cut without overlap, so that
    no word counts twice. Otherwise its examples as loaded (sentence chunks), to ``max_seq_length``."""
    lowercase = config.lowercase_input
    if not with_context:
        return tokenize_dataset(dev, tokenizer, max_seq_length, lowercase=lowercase, tasks=tasks)
    # One batch: a document cut across two would lose its context at the cut.
    windows = window_examples(dev, DEFAULT_WINDOW_WORDS, batch_size=None, context_words=DEFAULT_CONTEXT_WORDS)
    length = max_input_length(config.max_position_embeddings, tokenizer.model_max_length)
    return tokenize_dataset(windows, tokenizer, length, stride=0, lowercase=lowercase, tasks=tasks)


__all__ = [
    "TrainingMixture",
    "check_files",
    "TrainingPools",
    "load_dev_sets",
    "load_training_pools",
    "noisy_pools",
    "tokenize_dev_set",
    "training_mixture",
]
