"""Disfluency data: Meteer markup, the statistics of annotated calls, synthetic injection, SwDA's weak
labels and the exclusion of annotated calls from them."""

from __future__ import annotations

import random

import pytest

from hf_punctcase.data import (
    DEFAULT_DATA_DIR,
    disfluency_statistics,
    inject_disfluencies,
    load_punct_case_dataset,
    overlapping_documents,
    parse_meteer,
)
from hf_punctcase.labels import DISFLUENCY_LABELS, LabelScheme

SCHEME = LabelScheme()
CALLS = [
    "{F Uh, } [ we were, + we were ] going home. / {D Well, } [ I went, + {E I mean } I drove ] there. /",
    "{F Um, } it was [ the, + the ] best, {D you know. } / [ [ I, + I ] think, + I think ] so. /",
]


def test_parse_meteer_marks_fillers_edit_terms_and_reparanda():
    tokens, labels = parse_meteer(CALLS[0])
    marked = [(t.strip(",.").lower(), label == "DISFLUENT") for t, label in zip(tokens, labels)]
    assert marked == [
        ("uh", True), ("we", True), ("were", True), ("we", False), ("were", False), ("going", False), ("home", False),
        ("well", True), ("i", True), ("went", True), ("i", True), ("mean", True), ("i", False), ("drove", False),
        ("there", False),
    ]
    # Nested repairs: every reparandum is disfluent, the last repair fluent.
    tokens, labels = parse_meteer(CALLS[1])
    assert [t.strip(",.") for t, label in zip(tokens, labels) if label == "FLUENT"] == ["it", "was", "the", "best", "I", "think", "so"]


def test_statistics_of_annotated_calls():
    stats = disfluency_statistics(CALLS)
    assert stats.fillers == {"uh": 1, "well": 1, "um": 1, "you know": 1}
    assert stats.edit_terms == {"i mean": 1}
    # Repairs: "we were" (repeated), "I went" (restart), "the" (repeated), "I" and "I think" (repeated).
    assert stats.reparandum_lengths == {1: 2, 2: 3}
    assert stats.repetition_share == pytest.approx(4 / 5)
    assert stats.edit_term_rate == pytest.approx(1 / 5)
    fluent_words = 14  # "we were going home I drove there" + "it was the best I think so"
    assert stats.filler_rate == pytest.approx(4 / fluent_words)
    assert stats.repair_rate == pytest.approx(5 / fluent_words)


def test_injection_keeps_the_fluent_words_and_their_labels():
    stats = disfluency_statistics(CALLS)
    labeled = SCHEME.parse("So what are the risks? I am not technical, but we think that this is a good idea.")
    for seed in range(20):
        injected, disfluency = inject_disfluencies(labeled, random.Random(seed), stats, rate_scale=3.0)
        assert len(injected.words) == len(disfluency)
        keep = [label == "FLUENT" for label in disfluency]
        assert [w for w, k in zip(injected.words, keep) if k] == labeled.words
        assert [p for p, k in zip(injected.punct, keep) if k] == labeled.punct
        assert [c for c, k in zip(injected.case, keep) if k] == labeled.case
        inserted = [i for i, k in enumerate(keep) if not k]
        assert all(injected.punct[i] is None and injected.case[i] is None for i in inserted)
        assert all(injected.words[i] == injected.words[i].lower() for i in inserted)
        assert set(disfluency) <= set(DISFLUENCY_LABELS)
    some, _ = inject_disfluencies(labeled, random.Random(7), stats, rate_scale=3.0)
    again, _ = inject_disfluencies(labeled, random.Random(7), stats, rate_scale=3.0)
    assert some == again and len(some.words) > len(labeled.words)
    unchanged, labels = inject_disfluencies(labeled, random.Random(7), stats, rate_scale=0.0)
    assert unchanged == labeled and set(labels) == {"FLUENT"}


def test_overlapping_documents_finds_the_same_conversation():
    held = ["we went to the store and then we drove home after the game was over".split()]
    documents = [
        ("same", "yeah we went to the store and then we drove home after the game".split()),
        ("other", "the weather was nice and we sat outside all afternoon long today".split()),
    ]
    assert overlapping_documents(documents, held) == {"same"}


needs_data = pytest.mark.skipif(
    not (DEFAULT_DATA_DIR / "conversational" / "swda").is_dir()
    or not (DEFAULT_DATA_DIR / "conversational" / "switchboard_disfluency_sample").is_dir(),
    reason="needs ../shared/data/conversational (SwDA and the annotated Switchboard calls)",
)


@needs_data
def test_swda_fillers_leave_out_the_annotated_calls():
    fillers = load_punct_case_dataset("swda_fillers", splits=["train"], max_words=100_000)["train"]
    calls = load_punct_case_dataset("switchboard_disfluency", max_words=100_000)
    held = [row["words"] for split in calls.values() for row in split]
    documents = [(row["doc_id"], row["words"]) for row in fillers]
    assert not overlapping_documents(documents, held)
    assert "swda/2019/fillers" not in {row["doc_id"] for row in fillers}  # "do you have a pet Randy": an annotated call
    names = fillers.features["disfluency"].feature.names
    row = fillers[0]
    for word, label in zip(row["words"], row["disfluency"]):
        assert (names[label] if label >= 0 else None) == ("DISFLUENT" if word in ("uh", "um") else None)
