"""Labels moved from a reference transcript onto ASR output, and the corpora built with it (ACI-BENCH's
real ASR output, the user's own n-best lists)."""

import csv
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_punctcase.data import CorpusSpec, load_punct_case_dataset, read_aci_asr_pairs, read_asr_hypotheses, transfer_labels
from hf_punctcase.labels import LabeledWords, LabelScheme

SCHEME = LabelScheme()
REFERENCE = SCHEME.parse("So what are the risks? I am not technical. John went to NASA.")


def _triples(labeled: LabeledWords) -> list[tuple]:
    return list(zip(labeled.words, labeled.punct, labeled.case))


def test_identical_hypothesis_keeps_every_label():
    assert transfer_labels(REFERENCE, REFERENCE.words) == REFERENCE


def test_substitution_insertion_and_deletion():
    hypothesis = "so what are risks i am uh not technical jon went to nasa".split()
    result = _triples(transfer_labels(REFERENCE, hypothesis))
    assert result[3] == ("risks", "QUESTION", "LOWER")  # "the" dropped: nothing of it to keep
    assert result[6] == ("uh", "O", None)  # inserted: no mark, casing unknown
    assert result[9] == ("jon", "O", "UPPER_FIRST")  # substituted: its reference's punctuation and casing
    assert result[12] == ("nasa", "PERIOD", "ALL_UPPER")
    substituted = _triples(transfer_labels(SCHEME.parse("We met at NASA."), "we met at nassau".split()))
    assert substituted[3] == ("nassau", "PERIOD", None)  # ALL_UPPER is the reference word's spelling, not the position's


def test_marks_of_dropped_words_go_to_the_word_before():
    # "technical." dropped: its PERIOD is kept on "not"; at the very start there is no word before.
    result = transfer_labels(REFERENCE, "so what are the risks i am not john went to nasa".split())
    assert _triples(result)[7] == ("not", "PERIOD", "LOWER")
    dropped = transfer_labels(SCHEME.parse("Well, so what? Fine."), "so what fine".split())
    assert dropped.punct == ["O", "QUESTION", "PERIOD"]
    # The stronger label wins: "risks?" and "i" dropped after "the" keeps QUESTION, not the comma.
    strongest = transfer_labels(SCHEME.parse("Are the risks? I, too."), "are the too".split())
    assert strongest.punct == ["O", "QUESTION", "PERIOD"]


def test_missing_casing_stays_missing():
    reference = LabeledWords(["hi", "brian", "good"], ["COMMA", "PERIOD", "PERIOD"], [None, None, None])
    result = transfer_labels(reference, ["hi", "ryan", "good"])
    assert result.punct == ["COMMA", "PERIOD", "PERIOD"] and result.case == [None, None, None]
    unlabelled = LabeledWords(["so", "what", "now"], [None, None, "QUESTION"], [None, None, None])
    assert transfer_labels(unlabelled, ["so", "now"]).punct == [None, "QUESTION"]
    assert transfer_labels(unlabelled, ["so"]).punct == ["QUESTION"]  # a dropped label still moves back


words = st.lists(st.sampled_from(["a", "b", "c", "the", "risk", "uh"]), max_size=30)


@given(words, words)
def test_hypothesis_words_are_kept_in_order_with_one_label_each(reference_words, hypothesis):
    reference = LabeledWords(reference_words, ["PERIOD"] * len(reference_words), ["UPPER_FIRST"] * len(reference_words))
    result = transfer_labels(reference, hypothesis)
    assert result.words == hypothesis
    assert len(result.punct) == len(result.case) == len(hypothesis)
    assert set(result.punct) <= {"O", "PERIOD"}


def _write(path, fields, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fields)
        writer.writeheader()
        writer.writerows(rows)


def test_aci_bench_asr_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    aci = tmp_path / "medical" / "aci_bench"
    dialogue = ["dataset", "id", "dialogue", "note"]
    # Train: the human transcript is the challenge_data dialogue of the same encounter (metadata id).
    _write(aci / "challenge_data" / "train.csv", ["dataset", "encounter_id", "dialogue", "note"], [
        {"dataset": "virtscribe", "encounter_id": "D2N1", "dialogue": "[doctor] hi , brian . how are you ?\n[patient] good .", "note": ""},
        {"dataset": "aci", "encounter_id": "D2N2", "dialogue": "[doctor] no asr for this one .", "note": ""},
    ])
    _write(aci / "challenge_data" / "train_metadata.csv", ["dataset", "encounter_id", "id"], [
        {"dataset": "virtscribe", "encounter_id": "D2N1", "id": "VS1"}, {"dataset": "aci", "encounter_id": "D2N2", "id": "ACI2"},
    ])
    _write(aci / "src_experiment_data" / "train_virtscribe_asr.csv", dialogue, [
        {"dataset": "virtscribe", "id": "VS1", "dialogue": "[doctor] hi ryan how are you . [patient] uh good", "note": ""},
    ])
    # Valid: a *_virtscribe_humantrans.csv of its own.
    _write(aci / "src_experiment_data" / "valid_virtscribe_asr.csv", dialogue, [
        {"dataset": "virtscribe", "id": "VS2", "dialogue": "[doctor] any pain [patient] no", "note": ""},
    ])
    _write(aci / "src_experiment_data" / "valid_virtscribe_humantrans.csv", dialogue, [
        {"dataset": "virtscribe", "id": "VS2", "dialogue": "[doctor] any pain ?\n[patient] no .", "note": ""},
    ])
    pairs = list(read_aci_asr_pairs(aci / "src_experiment_data", "train"))
    assert pairs == [("VS1", "  hi ryan how are you .   uh good", "  hi , brian . how are you ?\n  good .")]

    ds = load_punct_case_dataset("aci_bench_asr", tmp_path)
    punct = list(SCHEME.punct_labels)
    train, validation = ds["train"][0], ds["validation"][0]
    assert train["words"] == ["hi", "ryan", "how", "are", "you", "uh", "good"]  # the ASR's words, its own marks dropped
    assert [punct[p] for p in train["punct"]] == ["COMMA", "PERIOD", "O", "O", "QUESTION", "O", "PERIOD"]
    assert set(train["case"]) == {-1}  # lowercase transcripts: no casing labels
    assert train["doc_id"] == "aci_bench_asr/train/VS1" and train["domain"] == "medical"
    assert [punct[p] for p in validation["punct"]] == ["O", "QUESTION", "PERIOD"]


def test_user_asr_hypotheses_with_n_best_lists(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "nbest.jsonl"
    lines = [
        {"id": f"utt{i}", "reference": "So what are the risks? I am not technical.",
         "hypotheses": ["so what are the risk i am not technical", "so what are risks i am uh not technical"]}
        for i in range(40)
    ]
    lines.append({"id": "one", "reference": "We met at NASA.", "hypothesis": "we met at nassau"})
    path.write_text("\n".join(json.dumps(line) for line in lines))
    ds = load_punct_case_dataset("asr_hypotheses", data_files=[path])
    rows = [row for split in ds for row in ds[split]]
    assert len(rows) == 81
    by_id = {row["doc_id"]: row for row in rows}
    second = by_id["nbest/utt0/1"]
    assert second["words"] == "so what are risks i am uh not technical".split()
    assert [SCHEME.punct_labels[p] for p in second["punct"]] == ["O", "O", "O", "QUESTION", "O", "O", "O", "O", "PERIOD"]
    assert [SCHEME.case_labels[c] if c >= 0 else None for c in second["case"]][:7] == [
        "UPPER_FIRST", "LOWER", "LOWER", "LOWER", "UPPER_FIRST", "LOWER", None]
    # Both hypotheses of a reference are in its split: no reference's words are on both sides.
    split_of = {row["doc_id"]: split for split in ds for row in ds[split]}
    assert all(split_of[f"nbest/utt{i}/0"] == split_of[f"nbest/utt{i}/1"] for i in range(40))
    assert len(set(split_of.values())) > 1
    # The labels follow the dataset's scheme: one without QUESTION has no mark for "risks?".
    scheme = LabelScheme(punct_labels=("O", "COMMA", "PERIOD"))
    narrow = load_punct_case_dataset("asr_hypotheses", data_files=[path], scheme=scheme)
    row = next(r for split in narrow for r in narrow[split] if r["doc_id"] == "nbest/utt0/1")
    assert [scheme.punct_labels[p] for p in row["punct"]] == ["O"] * 8 + ["PERIOD"]


def test_asr_hypotheses_bad_input(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"reference": "Hi."}))
    with pytest.raises(ValueError, match="needs \"reference\" and \"hypotheses\""):
        list(read_asr_hypotheses([path]))
    with pytest.raises(ValueError, match=".jsonl"):
        list(read_asr_hypotheses([tmp_path / "pairs.txt"]))
    with pytest.raises(ValueError, match="files are given for"):
        CorpusSpec.parse("asr_hypotheses")
    assert CorpusSpec.parse(f"asr_hypotheses:{path}=2").weight == 2
