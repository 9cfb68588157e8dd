"""Disfluency training data beyond the annotated calls: the statistics of real disfluencies in the
Switchboard calls with Meteer markup, synthetic disfluencies injected into fluent punctuated text at
those rates, and weak labels for the fillers of SwDA transcripts.

Synthetic disfluencies (:func:`inject_disfluencies`) are fillers and discourse markers drawn from their
distribution in the train calls ("uh", "um", "you know", "well", ...), repetitions ("the the": a copy
of the next words), restarts ("i went i drove": a copy of the next words whose last word is another
word of the text), each repair optionally followed by an edit term ("i mean"). Every inserted word is
DISFLUENT and has no punctuation or casing label (None: the builder stores it as missing, so that
the heads learn nothing about it); every word of the fluent text keeps its own labels and is FLUENT.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..labels import TRAILING_PUNCTUATION, LabeledWords
from .disfluency import read_switchboard_calls
from .splits import SWITCHBOARD_SPLIT, document_split

_BRACE = re.compile(r"\{([FDE]) ([^{}]*)\}")
# An innermost repair: "[ reparandum + repair ]" with no bracket inside.
_REPAIR = re.compile(r"\[([^\[\]+]*)\+([^\[\]]*)\]")
_MARKUP = re.compile(r"[{}\[\]+#/]|<[^<>]*>|\{[A-Z]")


def _words(markup: str) -> list[str]:
    """The lowercase words of a stretch of annotated text, marks and markup removed."""
    words = (token.strip(TRAILING_PUNCTUATION + "-").lower() for token in _MARKUP.sub(" ", markup).split())
    return [word for word in words if word]


@dataclass(frozen=True)
class DisfluencyStatistics:
    """How often each kind of disfluency occurs in annotated calls, per fluent word.

    ``fillers``: filler and discourse-marker forms ({F ...} and {D ...}) → count; ``edit_terms``: {E ...}
    forms → count; ``filler_rate``, ``repair_rate``: fillers and repairs per fluent word;
    ``repetition_share``: the share of repairs whose reparandum is repeated word for word;
    ``edit_term_rate``: edit terms per repair; ``reparandum_lengths``: reparandum length in words
    (1–4; longer ones counted as 4) → count."""

    fillers: dict[str, int]
    edit_terms: dict[str, int]
    filler_rate: float
    repair_rate: float
    repetition_share: float
    edit_term_rate: float
    reparandum_lengths: dict[int, int]


def disfluency_statistics(calls: Iterable[str]) -> DisfluencyStatistics:
    """The statistics of annotated calls (their Meteer markup, one string a call)."""
    fillers: Counter = Counter()
    edit_terms: Counter = Counter()
    lengths: Counter = Counter()
    repairs = repetitions = fluent_words = 0
    for call in calls:
        for kind, body in _BRACE.findall(call):
            form = " ".join(_words(body))
            if form:
                (edit_terms if kind == "E" else fillers)[form] += 1
        # Innermost repairs first, each replaced by its repair, until none is left.
        text = call
        while True:
            found = list(_REPAIR.finditer(text))
            if not found:
                break
            for match in found:
                reparandum = _words(_BRACE.sub(" ", match.group(1)))
                repair = _words(_BRACE.sub(" ", match.group(2)))
                if reparandum:
                    repairs += 1
                    lengths[min(len(reparandum), 4)] += 1
                    repetitions += reparandum == repair[: len(reparandum)]
            text = _REPAIR.sub(lambda m: m.group(2), text)
        fluent_words += len(_words(_BRACE.sub(" ", text)))
    fluent_words = max(fluent_words, 1)
    return DisfluencyStatistics(
        fillers=dict(fillers.most_common()),
        edit_terms=dict(edit_terms.most_common()),
        filler_rate=sum(fillers.values()) / fluent_words,
        repair_rate=repairs / fluent_words,
        repetition_share=repetitions / repairs if repairs else 0.0,
        edit_term_rate=sum(edit_terms.values()) / repairs if repairs else 0.0,
        reparandum_lengths=dict(sorted(lengths.items())),
    )


def train_call_statistics(path) -> DisfluencyStatistics:
    """The statistics of the train calls of an annotated file (the split of the
    ``switchboard_disfluency`` corpus), so that no held-out call shapes the synthetic data."""
    calls = [text for doc_id, text in read_switchboard_calls(path) if document_split(doc_id, **SWITCHBOARD_SPLIT) == "train"]
    return disfluency_statistics(calls)


def _draw(rng: random.Random, counts: dict) -> str:
    forms, weights = zip(*counts.items())
    return rng.choices(forms, weights)[0]


def inject_disfluencies(
    labeled: LabeledWords, rng: random.Random, statistics: DisfluencyStatistics, rate_scale: float = 1.0
) -> tuple[LabeledWords, list[str]]:
    """Fluent labelled words → the same words with synthetic disfluencies inserted, and a FLUENT /
    DISFLUENT label per word. Inserted words are lowercase, DISFLUENT, and their punctuation and
    casing labels are None; the fluent words keep their labels and their order, so dropping the
    DISFLUENT words gives back ``labeled``. ``rate_scale`` multiplies the real rates."""
    words, punct, case, disfluency = [], [], [], []

    def insert(stretch: Sequence[str]) -> None:
        for word in stretch:
            words.append(word)
            punct.append(None)
            case.append(None)
            disfluency.append("DISFLUENT")

    lengths, length_weights = zip(*statistics.reparandum_lengths.items()) if statistics.reparandum_lengths else ((1,), (1,))
    vocabulary = labeled.words
    for i, word in enumerate(labeled.words):
        if rng.random() < statistics.repair_rate * rate_scale:
            length = min(rng.choices(lengths, length_weights)[0], len(labeled.words) - i)
            reparandum = [w.lower() for w in labeled.words[i : i + length]]
            if rng.random() >= statistics.repetition_share:  # a restart: the last word changes
                reparandum[-1] = rng.choice(vocabulary).lower()
            insert(reparandum)
            if statistics.edit_terms and rng.random() < statistics.edit_term_rate:
                insert(_draw(rng, statistics.edit_terms).split())
        if statistics.fillers and rng.random() < statistics.filler_rate * rate_scale:
            insert(_draw(rng, statistics.fillers).split())
        words.append(word)
        punct.append(labeled.punct[i])
        case.append(labeled.case[i])
        disfluency.append("FLUENT")
    return LabeledWords(words, punct, case), disfluency


#: Filler words SwDA transcripts write as words: their weak labels say DISFLUENT (its other words' are
#: unknown, for their reparanda are not annotated).
SWDA_FILLERS = ("uh", "um")


def ngram_set(words: Sequence[str], n: int = 5) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def overlapping_documents(
    documents: Iterable[tuple[str, Sequence[str]]], held: Iterable[Sequence[str]], n: int = 5, share: float = 0.3
) -> set[str]:
    """The ids of ``documents`` (id, lowercase words) that are one of the ``held`` texts: at least
    ``share`` of a document's word n-grams occur in a single held text."""
    owner: dict[tuple[str, ...], set[int]] = {}
    for index, words in enumerate(held):
        for gram in ngram_set(words, n):
            owner.setdefault(gram, set()).add(index)
    found = set()
    for doc_id, words in documents:
        grams = ngram_set(words, n)
        hits: Counter = Counter(index for gram in grams for index in owner.get(gram, ()))
        if grams and hits and hits.most_common(1)[0][1] >= share * len(grams):
            found.add(doc_id)
    return found


__all__ = [
    "DisfluencyStatistics",
    "SWDA_FILLERS",
    "disfluency_statistics",
    "inject_disfluencies",
    "ngram_set",
    "overlapping_documents",
    "train_call_statistics",
]
