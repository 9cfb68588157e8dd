"""Training mixtures: several corpora with sampling weights, cut into fixed-size word windows.

A corpus is named by a spec string, ``NAME[:FILE[,FILE...]][=WEIGHT]``:

    ted=0.5          half of the TED training pool (a random half)
    mts_dialog=3     three passes over MTS-Dialog per pass over the mixture
    text:sampled.jsonl,more.txt    the user's punctuated files, weight 1
    asr_hypotheses:nbest.jsonl=2   the user's ASR n-best lists, labels from their references

A weight is the number of passes over that corpus per epoch of the mixture: the integer part repeats
the whole corpus, the fraction adds a random subset. Sampling weights in the sense of
"upsample the small in-domain corpus" are then explicit and reproducible.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import datasets

from ..labels import LabelScheme
from .builder import FILE_SOURCES, SOURCES, load_punct_case_dataset


@dataclass(frozen=True)
class CorpusSpec:
    name: str
    weight: float = 1.0
    data_files: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, spec: str) -> CorpusSpec:
        """``"ted=0.5"`` → CorpusSpec("ted", 0.5); ``"text:a.jsonl,b.txt=2"`` → text with two files."""
        body, _, weight = spec.partition("=")
        name, _, files = body.partition(":")
        if name not in SOURCES:
            raise ValueError(f"unknown corpus {name!r} in {spec!r}; known: {sorted(SOURCES)}")
        try:
            value = float(weight) if weight else 1.0
        except ValueError:
            raise ValueError(f"the weight in {spec!r} is not a number") from None
        if value <= 0:
            raise ValueError(f"the weight in {spec!r} must be > 0")
        data_files = tuple(f for f in files.split(",") if f)
        if (name in FILE_SOURCES) != bool(data_files):
            raise ValueError(f"{spec!r}: files are given for (and only for) {' and '.join(FILE_SOURCES)}, as NAME:FILE[,FILE]")
        return cls(name, value, data_files)

    def load(self, data_dir: str | os.PathLike | None, max_words: int, scheme: LabelScheme | None = None) -> datasets.DatasetDict:
        options = {"data_files": list(self.data_files)} if self.data_files else {}
        return load_punct_case_dataset(self.name, data_dir, max_words=max_words, scheme=scheme, **options)

    def __str__(self) -> str:
        files = ":" + ",".join(self.data_files) if self.data_files else ""
        return f"{self.name}{files}={self.weight:g}"


def count_words(dataset: datasets.Dataset) -> int:
    return sum(len(words) for words in dataset["words"])


def weighted_mix(parts: Sequence[tuple[datasets.Dataset, float]], seed: int = 0) -> datasets.Dataset:
    """Concatenate corpora, each repeated ``weight`` times (a fractional weight keeps a random subset),
    and shuffle the result."""
    rng = random.Random(seed)
    pieces = []
    for dataset, weight in parts:
        whole, fraction = int(weight), weight - int(weight)
        pieces += [dataset] * whole
        if fraction > 0 and len(dataset):
            keep = sorted(rng.sample(range(len(dataset)), max(1, math.floor(fraction * len(dataset)))))
            pieces.append(dataset.select(keep))
    if not pieces:
        raise ValueError("nothing to mix: every corpus is empty")
    return datasets.concatenate_datasets(pieces).shuffle(seed=seed)


def cap_words(dataset: datasets.Dataset, max_words: int) -> datasets.Dataset:
    """The first examples of ``dataset`` holding at most ``max_words`` words (at least one example)."""
    total = 0
    for index, words in enumerate(dataset["words"]):
        total += len(words)
        if total > max_words:
            return dataset.select(range(max(index, 1)))
    return dataset


def window_examples(dataset: datasets.Dataset, window_words: int, batch_size: int = 2000) -> datasets.Dataset:
    """Re-cut each document's examples into consecutive windows of ``window_words`` words.

    ``load_punct_case_dataset`` cuts documents at sentence ends, so every example would start a
    sentence; inference windows start anywhere, and training should see the same. Examples of one
    document must be adjacent (as the loader writes them); a document that straddles two map batches
    gives one short window more.
    """
    if window_words < 1:
        raise ValueError(f"window_words must be ≥ 1, got {window_words}")
    label_columns = [c for c in ("punct", "case", "disfluency") if c in dataset.column_names]

    def recut(batch):
        out = {name: [] for name in batch}
        index = 0
        while index < len(batch["doc_id"]):
            end = index
            while end < len(batch["doc_id"]) and batch["doc_id"][end] == batch["doc_id"][index]:
                end += 1
            words = [w for row in batch["words"][index:end] for w in row]
            labels = {c: [x for row in batch[c][index:end] for x in row] for c in label_columns}
            for start in range(0, len(words), window_words):
                stop = start + window_words
                for name in batch:
                    if name == "words":
                        out[name].append(words[start:stop])
                    elif name in label_columns:
                        out[name].append(labels[name][start:stop])
                    else:
                        out[name].append(batch[name][index])
            index = end
        return out

    return dataset.map(recut, batched=True, batch_size=batch_size, desc=f"windows of {window_words} words")


def corpus_texts(spec: CorpusSpec, data_dir: str | os.PathLike | None, split: str = "train") -> Iterator[str]:
    """The raw punctuated texts of one split of a corpus (for the MIXED-case lexicon, which needs
    surface forms such as "iPhone" that the labelled examples no longer carry)."""
    from .sources import data_dir as resolve

    reader = SOURCES[spec.name][0]
    root = None if spec.name in FILE_SOURCES else Path(resolve(data_dir))
    options = {"data_files": list(spec.data_files)} if spec.data_files else {}
    for doc_split, _, document, *_ in reader(root, options):
        if doc_split == split and isinstance(document, str):
            yield document
