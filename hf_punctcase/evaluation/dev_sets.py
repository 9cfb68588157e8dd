"""The dev sets every model is scored on, in one list: benchmarks, model cards and recipes read it.

Each set is a list of reference documents (:class:`~hf_punctcase.labels.LabeledWords`) that the
pipeline sees lowercased and unpunctuated, as ASR gives them. Sets without reliable casing are
scored on punctuation only. The real-ASR set pairs ACI-BENCH's ASR output with the human transcript
of the same dialogue; its scores come from aligning the two (``PunctCase`` with words).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data import data_dir, read_aci_asr_pairs, read_aci_bench, read_che, read_iwslt_cased, read_mts_dialog, read_swda
from ..data.sources import SHARDED_CORPORA, paragraphed_text, read_shards
from ..labels import LabeledWords, LabelScheme
from ..restoration import SENTENCE_END_LABELS


@dataclass(frozen=True)
class DevSet:
    """A named dev set: ``load(root, scheme)`` gives its references."""

    name: str
    load: Callable[[Path, LabelScheme], list[LabeledWords]]
    has_casing: bool
    #: Files under the data folder it needs (a set whose files are absent is skipped, and said so).
    files: tuple[str, ...]


@dataclass(frozen=True)
class AsrDevSet:
    """ASR output of documents with their human transcripts: ``load(root, scheme)`` gives
    ``(hypothesis words, reference)`` pairs."""

    name: str
    load: Callable[[Path, LabelScheme], list[tuple[list[str], LabeledWords]]]
    files: tuple[str, ...]


def _parsed(documents, scheme: LabelScheme) -> list[LabeledWords]:
    return [scheme.parse(text) for _, text in documents]


_TED = ("iwslt/dev2010_cased.txt", "iwslt/tst2012_cased.txt")
_SWDA = "conversational/swda/swda_conversations.jsonl"
_MTS = "medical/mts_dialog/MTS-Dialog-ValidationSet.csv"
_ACI = "medical/aci_bench/challenge_data/valid.csv"
_ACI_ASR = "medical/aci_bench/src_experiment_data"

#: The most words of each sharded corpus's dev set, and of each of its held-out documents there, by
#: corpus: the opening of every validation document (whole sentences), so that the set spans all its
#: episodes, arguments, speeches, articles or books at a cost like the other sets'.
SHARDED_DEV_WORDS = {
    "changelog": (2_000, 40_000),
    "scotus": (2_000, 40_000),
    "ungd": (400, 40_000),
    "wikipedia_2015": (1_000, 40_000),
    "gutenberg": (8_000, 40_000),
}


def held_out_openings(
    name: str, root: Path, scheme: LabelScheme, per_document: int | None = None, total: int | None = None
) -> list[LabeledWords]:
    """The validation documents of sharded corpus ``name`` (its builder split), each cut to its first
    ``per_document`` words at a sentence end (a document without one inside them is cut there), in the
    shards' order, until ``total`` words."""
    from ..data.splits import sharded_split

    per_document = per_document or SHARDED_DEV_WORDS[name][0]
    total = total or SHARDED_DEV_WORDS[name][1]
    openings, taken = [], 0
    for document in read_shards(root.joinpath(*SHARDED_CORPORA[name])):
        if taken >= total:
            break
        if sharded_split(name, document) != "validation":
            continue
        labeled = scheme.parse(paragraphed_text(document))
        limit = min(per_document, total - taken, len(labeled))
        ends = [i + 1 for i, label in enumerate(labeled.punct[:limit]) if label in SENTENCE_END_LABELS]
        stop = ends[-1] if ends else limit
        if stop:
            openings.append(LabeledWords(labeled.words[:stop], labeled.punct[:stop], labeled.case[:stop]))
            taken += stop
    return openings


def _sharded_dev_set(title: str, name: str) -> DevSet:
    folder = "/".join(SHARDED_CORPORA[name])
    return DevSet(title, lambda root, s: held_out_openings(name, root, s), True, (folder,))


DEV_SETS: tuple[DevSet, ...] = (
    DevSet("TED dev2010+tst2012", lambda root, s: _parsed(read_iwslt_cased([root / f for f in _TED]), s), True, _TED),
    DevSet("IWSLT dev2012 (Che)", lambda root, s: [read_che(root / "iwslt" / "dev2012_che_labeled.tsv")], False,
           ("iwslt/dev2012_che_labeled.tsv",)),
    DevSet("SwDA val", lambda root, s: _parsed(read_swda(root / _SWDA, split="val"), s), True, (_SWDA,)),
    DevSet("MTS-Dialog validation", lambda root, s: _parsed(read_mts_dialog(root / _MTS), s), True, (_MTS,)),
    DevSet("ACI-BENCH valid", lambda root, s: _parsed(read_aci_bench(root / _ACI), s), False, (_ACI,)),
    _sharded_dev_set("Changelog podcasts val", "changelog"),
    _sharded_dev_set("SCOTUS arguments val", "scotus"),
    _sharded_dev_set("UN General Debate val", "ungd"),
    _sharded_dev_set("Wikipedia 2015 val", "wikipedia_2015"),
    _sharded_dev_set("Gutenberg val", "gutenberg"),
)

ASR_DEV_SETS: tuple[AsrDevSet, ...] = (
    AsrDevSet(
        "ACI-BENCH valid ASR vs human (aligned)",
        lambda root, s: [(s.parse(asr).words, s.parse(human)) for _, asr, human in read_aci_asr_pairs(root / _ACI_ASR)],
        (_ACI_ASR,),
    ),
)


def speech_loop_dev_sets(path: str | os.PathLike, name: str | None = None) -> tuple[DevSet, AsrDevSet]:
    """A speech loop output (recipes/speech_loop.py) as two dev sets over the same documents: its
    reference transcripts (``"{name}: reference"``) and its 1-best hypotheses scored against them
    after alignment (``"{name}: ASR"``), so that a model's reference and ASR F1 sit side by side.
    Utterances are joined back into their documents (:func:`hf_punctcase.speech.passages` with
    ``keep_dropped``), in file order; an utterance whose hypothesis was dropped or that a recogniser
    heard nothing in contributes its reference words only (all deleted in the hypothesis). The file is
    read here, once; ``ValueError`` if it holds no records or records of several recognizers."""
    from ..speech.records import passages, read_records

    path = Path(path)
    records = read_records(path)
    if not records:
        raise ValueError(f"{path}: no speech loop records")
    documents = [(p["hypotheses"][0].split(), p["reference"]) for p in passages(records, keep_dropped=True)]
    name = name or path.stem
    return (
        DevSet(f"{name}: reference", lambda root, s: [s.parse(text) for _, text in documents], True, ()),
        AsrDevSet(f"{name}: ASR", lambda root, s: [(words, s.parse(text)) for words, text in documents], ()),
    )


def short_texts(references: Sequence[LabeledWords], sentences: Sequence[int] = (1, 2, 3)) -> list[LabeledWords]:
    """The references cut into short texts of whole sentences, as a caption line, a dialogue turn or a
    voice command comes: ``sentences[0]`` sentences, then ``sentences[1]``, ... in turn, the turn going
    on across documents. A sentence ends at a PERIOD, QUESTION or EXCLAMATION label; the words after
    a document's last sentence end are left out (they are no whole sentence)."""
    if not sentences or any(count < 1 for count in sentences):
        raise ValueError(f"sentences must be counts ≥ 1, got {list(sentences)}")
    counts = itertools.cycle(sentences)
    texts = []
    for reference in references:
        ends = [i + 1 for i, label in enumerate(reference.punct) if label in SENTENCE_END_LABELS]
        start = taken = 0
        while taken < len(ends):
            taken = min(taken + next(counts), len(ends))
            stop = ends[taken - 1]
            texts.append(
                LabeledWords(reference.words[start:stop], reference.punct[start:stop], reference.case[start:stop])
            )
            start = stop
    return texts


def available(dev_set: DevSet | AsrDevSet, data_dir_path: str | os.PathLike | None = None) -> bool:
    """Whether the data folder exists and holds every file the set needs."""
    try:
        root = data_dir(data_dir_path)
    except FileNotFoundError:
        return False
    return all((root / name).exists() for name in dev_set.files)


__all__ = ["ASR_DEV_SETS", "AsrDevSet", "DEV_SETS", "DevSet", "available", "speech_loop_dev_sets"]
