"""Simulated ASR errors for training at any scale: substitutions, insertions and deletions at the
rates, and with the confusions, that real recognisers showed on the speech loop's output
(:mod:`hf_punctcase.speech`).

The speech loop gives real errors but only a few thousand sentences an hour; this noise is what a
training mixture can apply to millions of words. :class:`AsrNoiseModel` measures, from reference /
hypothesis pairs aligned by jiwer, how often a reference word is substituted, deleted, or followed by
an inserted word, and which words replace which. :meth:`AsrNoiseModel.corrupt` draws a noisy word
sequence from a reference: a substituted word becomes one it was confused with, or, for a word never
seen confused, a word the recognisers wrote that is spelled most like it (rapidfuzz), the way acoustic
confusions mostly sound alike. The labels of the noisy words come from
:func:`~hf_punctcase.data.label_transfer.transfer_labels`, exactly as for real ASR output.
"""

from __future__ import annotations

import json
import os
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..labels import LabeledWords, LabelScheme
from .label_transfer import transfer_labels

#: How a training record names a pool of --asr_noise_corpora: ``asr_noise:SPEC``.
ASR_NOISE_POOL = "asr_noise:"


@dataclass(frozen=True)
class AsrNoiseModel:
    """Rates per reference word and what recognisers wrote instead.

    Args:
        substitution_rate: share of reference words replaced by another word.
        deletion_rate: share of reference words dropped.
        insertion_rate: inserted words per reference word (each drawn after a reference word).
        confusions: reference word → {word written instead: count}.
        insertions: words recognisers inserted, with counts.
    """

    substitution_rate: float
    deletion_rate: float
    insertion_rate: float
    confusions: dict[str, dict[str, int]] = field(default_factory=dict)
    insertions: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rates = (self.substitution_rate, self.deletion_rate, self.insertion_rate)
        if any(rate < 0 for rate in rates) or self.substitution_rate + self.deletion_rate > 1:
            raise ValueError(f"rates must be >= 0 with substitution + deletion <= 1, got {rates}")
        if self.substitution_rate and not self.confusions:
            raise ValueError("a substitution rate needs observed confusions to draw substitutes from")
        if self.insertion_rate and not self.insertions:
            raise ValueError("an insertion rate needs observed insertions to draw from")
        # what draws look up, built once (the fields stay plain data for asdict / JSON)
        written = tuple(sorted({word for counts in self.confusions.values() for word in counts}))
        object.__setattr__(self, "_written", written)
        object.__setattr__(self, "_substitutes", {word: _table(counts) for word, counts in self.confusions.items() if counts})
        object.__setattr__(self, "_insertion_table", _table(self.insertions) if self.insertions else None)
        object.__setattr__(self, "_sounding_alike", {})  # word → its closest written word, found once

    # ---- measuring -------------------------------------------------------------------------------

    @classmethod
    def measure(cls, pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> AsrNoiseModel:
        """Measure from ``(reference words, hypothesis words)`` pairs (lowercase, unpunctuated)."""
        import jiwer

        pairs = [(" ".join(ref), " ".join(hyp)) for ref, hyp in pairs if ref]
        if not pairs:
            raise ValueError("no reference words to measure ASR errors on")
        output = jiwer.process_words([ref for ref, _ in pairs], [hyp for _, hyp in pairs])
        confusions: dict[str, Counter] = {}
        insertions: Counter = Counter()
        for ref_words, hyp_words, chunks in zip(output.references, output.hypotheses, output.alignments):
            for chunk in chunks:
                if chunk.type == "substitute":
                    for ref, hyp in zip(ref_words[chunk.ref_start_idx : chunk.ref_end_idx],
                                        hyp_words[chunk.hyp_start_idx : chunk.hyp_end_idx]):
                        confusions.setdefault(ref, Counter())[hyp] += 1
                elif chunk.type == "insert":
                    insertions.update(hyp_words[chunk.hyp_start_idx : chunk.hyp_end_idx])
        reference_words = sum(len(ref) for ref in output.references)
        return cls(
            substitution_rate=output.substitutions / reference_words,
            deletion_rate=output.deletions / reference_words,
            insertion_rate=output.insertions / reference_words,
            confusions={ref: dict(counter) for ref, counter in sorted(confusions.items())},
            insertions=dict(insertions.most_common()),
        )

    @classmethod
    def from_speech_loop(cls, paths: Iterable[str | os.PathLike]) -> AsrNoiseModel:
        """Measure on the 1-best of every record of speech loop outputs, those the WER filter dropped
        included (they hold the errors a recogniser makes on hard audio)."""
        from ..speech.records import read_records

        pairs = []
        for path in paths:
            for record in read_records(path):
                if record.get("one_best") is not None:
                    pairs.append((LabelScheme().parse(record["reference"]).words, record["one_best"].split()))
        return cls.measure(pairs)

    def with_rates(
        self, substitution: float | None = None, deletion: float | None = None, insertion: float | None = None
    ) -> AsrNoiseModel:
        """The same confusions at other rates (None keeps a rate)."""
        return replace(
            self,
            substitution_rate=self.substitution_rate if substitution is None else substitution,
            deletion_rate=self.deletion_rate if deletion is None else deletion,
            insertion_rate=self.insertion_rate if insertion is None else insertion,
        )

    def save(self, path: str | os.PathLike) -> None:
        from ..atomic_files import atomic_write_text

        atomic_write_text(path, json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> AsrNoiseModel:
        return cls(**json.loads(Path(path).read_text(encoding="utf-8")))

    # ---- drawing ---------------------------------------------------------------------------------

    def corrupt(self, words: Sequence[str], rng: np.random.Generator) -> list[str]:
        """A noisy version of ``words``: each word deleted, substituted or kept at the model's rates,
        and an inserted word drawn after it at the insertion rate."""
        noisy: list[str] = []
        draws = rng.random((len(words), 2))
        for word, (fate, insertion) in zip(words, draws):
            if fate < self.deletion_rate:
                pass
            elif fate < self.deletion_rate + self.substitution_rate:
                noisy.append(self._substitute(word, rng))
            else:
                noisy.append(word)
            if insertion < self.insertion_rate:
                noisy.append(_draw(self._insertion_table, rng))
        return noisy

    def _substitute(self, word: str, rng: np.random.Generator) -> str:
        table = self._substitutes.get(word)
        if table is not None:
            return _draw(table, rng)
        if word not in self._sounding_alike:
            self._sounding_alike[word] = _closest(word, self._written)
        return self._sounding_alike[word]


def _closest(word: str, candidates: Sequence[str]) -> str:
    from rapidfuzz import fuzz, process

    # the most similar written word other than the word itself (a substitution changes the word)
    for match, _, _ in process.extract(word, candidates, scorer=fuzz.ratio, limit=2):
        if match != word:
            return match
    return word


def _table(counts: dict[str, int]) -> tuple[tuple[str, ...], np.ndarray]:
    """Words and their cumulative probabilities, for :func:`_draw`."""
    weights = np.asarray(list(counts.values()), dtype=np.float64)
    return tuple(counts), np.cumsum(weights) / weights.sum()


def _draw(table: tuple[tuple[str, ...], np.ndarray], rng: np.random.Generator) -> str:
    words, cumulative = table
    return words[min(int(np.searchsorted(cumulative, rng.random(), side="right")), len(words) - 1)]


def simulate_asr(reference: LabeledWords, model: AsrNoiseModel, rng: np.random.Generator) -> LabeledWords:
    """``reference`` as a recogniser might have written it, labelled as real ASR output is
    (:func:`~hf_punctcase.data.label_transfer.transfer_labels`)."""
    return transfer_labels(reference, model.corrupt(reference.words, rng))


def add_asr_noise(dataset, model: AsrNoiseModel, seed: int = 0):
    """Noisy copies of a corpus's examples (``words`` / ``punct`` / ``case`` columns of
    :func:`~hf_punctcase.data.load_punct_case_dataset`): each example gets its own draws, seeded by
    ``seed`` and its index, so a dataset repeated with other seeds gets other errors. Disfluency
    labels are not carried over (marked missing)."""
    punct_names = dataset.features["punct"].feature.names
    case_names = dataset.features["case"].feature.names

    def noisy(example: dict, index: int) -> dict:
        rng = np.random.default_rng([seed, index, zlib.crc32(example["doc_id"].encode("utf-8"))])
        reference = LabeledWords(
            list(example["words"]),
            [punct_names[i] if i >= 0 else None for i in example["punct"]],
            [case_names[i] if i >= 0 else None for i in example["case"]],
        )
        hypothesis = simulate_asr(reference, model, rng)
        return {
            "words": hypothesis.words,
            "punct": [-1 if p is None else punct_names.index(p) for p in hypothesis.punct],
            "case": [-1 if c is None else case_names.index(c) for c in hypothesis.case],
            "disfluency": [-1] * len(hypothesis.words),
            # Words an ASR system may drop or change are no dictated command's: unknown, as disfluency.
            "command": [-1] * len(hypothesis.words),
            "paragraph": [-1] * len(hypothesis.words),
        }

    return dataset.map(noisy, with_indices=True, desc="simulated ASR noise")


__all__ = ["AsrNoiseModel", "add_asr_noise", "simulate_asr"]
