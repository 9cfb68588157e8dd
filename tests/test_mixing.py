"""Corpus specs, weighted mixtures and training windows."""

from __future__ import annotations

import datasets
import pytest

from hf_punctcase.data import CorpusSpec, cap_words, count_words, load_punct_case_dataset, weighted_mix, window_examples
from hf_punctcase.evaluation import evaluate_dataset

from conftest import write_punctuated_corpus


def test_corpus_spec_parsing():
    assert CorpusSpec.parse("ted") == CorpusSpec("ted", 1.0)
    assert CorpusSpec.parse("mts_dialog=3") == CorpusSpec("mts_dialog", 3.0)
    assert CorpusSpec.parse("text:a.jsonl,b.txt=0.5") == CorpusSpec("text", 0.5, ("a.jsonl", "b.txt"))
    assert str(CorpusSpec.parse("text:a.jsonl=2")) == "text:a.jsonl=2"
    for bad, message in (("tedd", "unknown corpus"), ("ted=x", "not a number"), ("ted=0", "> 0"), ("text", "files"), ("ted:a.txt", "files")):
        with pytest.raises(ValueError, match=message):
            CorpusSpec.parse(bad)


def _rows(doc_lengths: dict[str, list[int]]) -> datasets.Dataset:
    rows = []
    for doc_id, lengths in doc_lengths.items():
        counter = 0
        for length in lengths:
            words = [f"{doc_id}w{counter + i}" for i in range(length)]
            counter += length
            rows.append({"doc_id": doc_id, "domain": "x", "words": words, "punct": [1] * length, "case": [0] * length})
    return datasets.Dataset.from_list(rows)


def test_window_examples_recuts_each_document_in_order_without_losing_words():
    data = _rows({"a": [7, 5, 9], "b": [4], "c": [12, 3]})
    windows = window_examples(data, window_words=6)
    assert [len(w) for w in windows["words"]] == [6, 6, 6, 3, 4, 6, 6, 3]
    assert windows["doc_id"] == ["a"] * 4 + ["b"] + ["c"] * 3
    assert [w for ws in windows["words"] for w in ws] == [w for ws in data["words"] for w in ws]
    assert all(len(p) == len(w) for p, w in zip(windows["punct"], windows["words"]))


def test_weighted_mix_repeats_and_subsamples():
    small, large = _rows({"s": [10]}), _rows({f"l{i}": [10] for i in range(10)})
    mixed = weighted_mix([(small, 3), (large, 0.5)], seed=0)
    assert mixed["doc_id"].count("s") == 3
    assert sum(d.startswith("l") for d in mixed["doc_id"]) == 5
    assert count_words(cap_words(mixed, 35)) == 30


def test_evaluate_dataset_scores_whole_documents(tiny_pipeline, tmp_path):
    path = write_punctuated_corpus(tmp_path / "c.jsonl", num_documents=30)
    data = load_punct_case_dataset("text", data_files=[path], max_words=20)["train"]
    scores = evaluate_dataset(tiny_pipeline, data)
    assert scores["words"] == count_words(data)
    assert scores["punct_COMMA_support"] + scores["punct_PERIOD_support"] + scores["punct_QUESTION_support"] == sum(
        1 for labels in data["punct"] for label in labels if label > 0
    )
    assert "case_overall_f1" in scores
