"""Corpus specs, weighted mixtures and training windows."""

from __future__ import annotations

import datasets
import pytest

from hf_punctcase.data import CorpusSpec, cap_words, count_words, load_punct_case_dataset, weighted_mix, window_examples
from hf_punctcase.evaluation import evaluate_dataset
from hf_punctcase.labels import MISSING_LABEL
from hf_punctcase.restoration import plan_windows

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


def test_window_examples_with_context_label_each_word_once_as_the_pipeline_windows_it():
    data = _rows({"a": [7, 5, 9], "b": [4], "c": [12, 3]})
    data = data.map(lambda row, i: {"punct": [i % 3] * len(row["words"])}, with_indices=True)  # labels tell rows apart
    windows = window_examples(data, window_words=8, context_words=2, batch_size=None)
    for doc_id in ("a", "b", "c"):
        words = [w for d, ws in zip(data["doc_id"], data["words"]) if d == doc_id for w in ws]
        labels = [x for d, ps in zip(data["doc_id"], data["punct"]) if d == doc_id for x in ps]
        rows = [i for i, d in enumerate(windows["doc_id"]) if d == doc_id]
        planned = list(plan_windows(len(words), 8, 2))
        assert len(rows) == len(planned)
        scored_words, scored_labels = [], []
        for row, window in zip(rows, planned):
            assert windows["words"][row] == words[window.start : window.end]
            kept = [(w, x) for w, x in zip(windows["words"][row], windows["punct"][row]) if x != MISSING_LABEL]
            scored_words += [w for w, _ in kept]
            scored_labels += [x for _, x in kept]
            assert windows["case"][row][: window.core_start - window.start] == [MISSING_LABEL] * (window.core_start - window.start)
        # Every word is scored once, in order, with its own label; the rest is context.
        assert scored_words == words and scored_labels == labels
    assert max(len(w) for w in windows["words"]) == 8


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


TRICKY = [
    "\"NASA's\" iPhone, the U.S. and e.g. McDonald's -- 'quoted' (bracketed) iPhone. iPHONE iPhone's? Mr. McDonald's.",
    "students' books... NASA'S report; iphone Iphone IPhone IPHONE iPhone! ‘single’ «guillemets» 3D x-Ray eBay eBay.",
    "Don't stop. ΟΔΟΣ Straße İstanbul Jones'. U.S.' policy, eBay's eBay. eBay's",
]


def _tricky_corpus(tmp_path) -> tuple[str, list[str]]:
    import json

    path = tmp_path / "tricky.jsonl"
    texts = [text for _ in range(3) for text in TRICKY]
    path.write_text("".join(json.dumps({"id": f"t{i}", "text": text}) + "\n" for i, text in enumerate(texts)))
    return str(path), texts


def test_training_windows_and_lexicon_come_from_one_pass_and_match_the_two_pass_ones(tmp_path, monkeypatch):
    """Windows cut as documents are parsed equal sentence chunks re-cut by window_examples, and the
    lexicon read off the written forms equals the one built from the raw texts."""
    import json

    from hf_punctcase.labels import build_mixed_case_lexicon
    from hf_punctcase.training import load_training_pools

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    tricky, tricky_texts = _tricky_corpus(tmp_path)
    plain = write_punctuated_corpus(tmp_path / "plain.jsonl", num_documents=40)
    specs = [CorpusSpec.parse(f"text:{plain}=2"), CorpusSpec.parse(f"text:{tricky}")]
    pools = load_training_pools(specs, None, window_words=9, file_split="train")

    raw_texts = [json.loads(line)["text"] for line in open(plain, encoding="utf-8")] + tricky_texts
    expected_lexicon = build_mixed_case_lexicon(raw_texts)
    assert pools.lexicon == expected_lexicon
    assert pools.lexicon["iphone"] == "iPhone" and pools.lexicon["ebay"] == "eBay" and "nasa's" not in pools.lexicon
    for spec, windows in pools.parts:
        sentences = load_punct_case_dataset("text", data_files=list(spec.data_files), max_words=9, file_split="train")["train"]
        # one map batch: window_examples then cuts no document at a batch boundary
        recut = window_examples(sentences, 9, batch_size=len(sentences))
        assert windows.column_names == recut.column_names == sentences.column_names
        assert windows.to_list() == recut.to_list()


def test_the_lexicon_needs_the_written_forms(tmp_path, monkeypatch):
    from hf_punctcase.data import mixed_case_lexicon

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    tricky, _ = _tricky_corpus(tmp_path)
    with_forms = load_punct_case_dataset("text", data_files=[tricky], file_split="train", written_forms=True)["train"]
    assert with_forms["written"][0][:3] == ["NASA's", "iPhone", "the"]
    assert all(len(w) == len(f) for w, f in zip(with_forms["words"], with_forms["written"]))
    without = load_punct_case_dataset("text", data_files=[tricky], file_split="train")["train"]
    assert "written" not in without.column_names
    with pytest.raises(ValueError, match="written_forms=True"):
        mixed_case_lexicon([without])


def test_words_without_text_give_no_written_form(tmp_path, monkeypatch):
    """ASR hypotheses (labels transferred from a reference) have no written form of their own."""
    import json

    from hf_punctcase.data import mixed_case_lexicon

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "nbest.jsonl"
    path.write_text(json.dumps({"id": "a", "reference": "The iPhone, the iPhone.", "hypotheses": ["the iphone the iphone"]}) + "\n")
    data = load_punct_case_dataset("asr_hypotheses", data_files=[path], file_split="train", written_forms=True)["train"]
    assert data["written"] == [[None, None, None, None]]
    assert mixed_case_lexicon([data]) == {}


def test_teacher_labelled_captions_load_as_punctuated_text_and_carry_teds_licence(tmp_path, monkeypatch):
    """restore_corpus.py's output over the TED auto-captions (the restored text in ``text``) trains as
    punctuated text; the card names it as TED's captions, with TED's non-commercial licence."""
    import json

    from hf_punctcase.cards.lineage import corpus_dataset
    from hf_punctcase.data.builder import NON_COMMERCIAL

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    labelled = tmp_path / "captions_default.jsonl"
    records = [{"id": f"ted/tedx/talk{i}", "caption": "so what are the risks i am not technical",
                "text": "So what are the risks? I am not technical."} for i in range(3)]
    labelled.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    spec = CorpusSpec.parse(f"ted_captions_labelled:{labelled}=0.5")
    assert spec == CorpusSpec("ted_captions_labelled", 0.5, (str(labelled),))
    train = spec.load(None, 200, file_split="train")["train"]
    assert train[0]["words"] == "so what are the risks i am not technical".split()
    names = train.features["punct"].feature.names
    assert [names[p] for p in train[0]["punct"]][4] == "QUESTION" and train[0]["domain"] == "ted"
    row = corpus_dataset(str(spec), 27)
    assert "auto-captions" in row.name and row.licence in NON_COMMERCIAL
    with pytest.raises(ValueError, match="needs data_files"):
        load_punct_case_dataset("ted_captions_labelled")
