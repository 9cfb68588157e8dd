"""Training mixtures: several corpora with sampling weights, cut into fixed-size word windows.

A corpus is named by a spec string, ``NAME[:FILE[,FILE...]][=WEIGHT]``:

    ted=0.5          half of the TED training pool (a random half)
    mts_dialog=3     three passes over MTS-Dialog per pass over the mixture
    text:sampled.jsonl,more.txt    the user's punctuated files, weight 1
    asr_hypotheses:nbest.jsonl=2   the user's ASR n-best lists, labels from their references

A weight is the number of passes over that corpus per epoch of the mixture: the integer part repeats
the whole corpus, the fraction adds a random subset. Sampling weights in the sense of
"upsample the small in-domain corpus" are then explicit and reproducible.

The user's files split into train/validation/test by a stable hash of each document's id, unless
:meth:`CorpusSpec.load` is given ``file_split`` (``"train"``: every document trains, as when the dev
set is a file of its own). :func:`mixed_case_lexicon` gives the MIXED-case lexicon of loaded corpora.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import datasets
import pyarrow as pa
import pyarrow.compute as pc

from ..labels import MISSING_LABEL, LabelScheme, build_mixed_case_lexicon, case_label_of
from ..restoration import plan_windows
from ..tasks import TASKS
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

    def load(
        self,
        data_dir: str | os.PathLike | None,
        max_words: int,
        scheme: LabelScheme | None = None,
        *,
        splits: Sequence[str] | None = None,
        windows: bool = False,
        written_forms: bool = False,
        file_split: str | None = None,
    ) -> datasets.DatasetDict:
        """This corpus through :func:`~hf_punctcase.data.load_punct_case_dataset` (whose arguments these
        are). ``file_split`` applies to the user's files only (``text:``, ``asr_hypotheses:``): a corpus
        of ../shared/data keeps its own splits."""
        return load_punct_case_dataset(
            self.name,
            data_dir,
            max_words=max_words,
            scheme=scheme,
            data_files=list(self.data_files) if self.data_files else None,
            file_split=file_split if self.name in FILE_SOURCES else None,
            splits=splits,
            windows=windows,
            written_forms=written_forms,
        )

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


def window_examples(
    dataset: datasets.Dataset, window_words: int, batch_size: int | None = 2000, context_words: int = 0
) -> datasets.Dataset:
    """Re-cut each document's examples into windows of ``window_words`` words.

    ``load_punct_case_dataset`` cuts documents at sentence ends by default, so every example would start
    a sentence; inference windows start anywhere, and training should see the same. Loading with
    ``windows=True`` cuts those windows in one pass; this re-cuts a dataset already loaded.

    With ``context_words`` the windows are the pipeline's (:func:`~hf_punctcase.restoration.plan_windows`):
    each answers for its middle ``window_words - 2 * context_words`` words and sees up to
    ``context_words`` words on each side, whose labels are left out (-1, as a label a source cannot
    give), so that a dev set scored on them counts each word once, with the context the pipeline
    gives it. Examples of one document must be adjacent (as the loader writes them); a document that
    straddles two map batches gives one short window more, and no context across that cut
    (``batch_size=None``: the whole dataset in one batch).
    """
    if window_words < 1:
        raise ValueError(f"window_words must be ≥ 1, got {window_words}")
    label_columns = [task.word_column for task in TASKS.values() if task.word_column in dataset.column_names]

    def recut(batch):
        out = {name: [] for name in batch}
        index = 0
        while index < len(batch["doc_id"]):
            end = index
            while end < len(batch["doc_id"]) and batch["doc_id"][end] == batch["doc_id"][index]:
                end += 1
            words = [w for row in batch["words"][index:end] for w in row]
            labels = {c: [x for row in batch[c][index:end] for x in row] for c in label_columns}
            for window in plan_windows(len(words), window_words, context_words):
                before, after = window.core_start - window.start, window.end - window.core_end
                for name in batch:
                    if name == "words":
                        out[name].append(words[window.start : window.end])
                    elif name in label_columns:
                        core = labels[name][window.core_start : window.core_end]
                        out[name].append([MISSING_LABEL] * before + core + [MISSING_LABEL] * after)
                    else:
                        out[name].append(batch[name][index])
            index = end
        return out

    described = f"windows of {window_words} words" + (f", {context_words} of context" if context_words else "")
    return dataset.map(recut, batched=True, batch_size=batch_size, desc=described)


def mixed_case_lexicon(parts: Iterable[datasets.Dataset], min_count: int = 2) -> dict[str, str]:
    """The MIXED-case lexicon (:func:`hf_punctcase.labels.build_mixed_case_lexicon`) of the texts that
    datasets loaded with ``written_forms=True`` were parsed from, read off their ``written`` column: the
    same lexicon as of the raw texts, without reading them again. Words without a written form (pre-labelled
    words, ASR hypotheses) do not count, as they have no text."""
    parts = list(parts)
    for part in parts:
        if "written" not in part.column_names:
            raise ValueError("the MIXED-case lexicon needs the written forms: load the corpus with written_forms=True")
    forms = [
        pc.list_flatten(chunk)
        for part in parts
        for table in part.select_columns(["written"]).with_format("arrow").iter(batch_size=10_000)
        for chunk in table.column("written").chunks
    ]
    if not forms:
        return {}
    # Only a word with some MIXED form can enter the lexicon, so the forms of the other words (nearly all of
    # them) need not be counted: Arrow finds the distinct forms and filters the stream down to the candidates'.
    distinct = pc.unique(pa.chunked_array(forms, type=pa.string())).drop_null().to_pylist()
    candidates = {form.lower() for form in distinct if case_label_of(form) == "MIXED"}
    counted = pa.array([form for form in distinct if form.lower() in candidates], type=pa.string())
    # A written form is a token's core, which the lexicon's own tokenising leaves as it is: fed one at a
    # time and in corpus order, the candidates' forms count exactly as the tokens of the texts did.
    stream = (form for chunk in forms for form in chunk.filter(pc.is_in(chunk, value_set=counted)).to_pylist())
    return build_mixed_case_lexicon(stream, min_count=min_count)
