"""Corpus builders on small fixture files written here, in the layouts of ../shared/data."""

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_punctcase.data import (
    chunk_at_sentences,
    document_split,
    load_punct_case_dataset,
    read_che,
    read_nemo,
    write_che,
    write_nemo,
)
from hf_punctcase.labels import MISSING_LABEL, LabeledWords, LabelScheme

SCHEME = LabelScheme()
PUNCT = list(SCHEME.punct_labels)


@pytest.fixture()
def corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    (root / "ted").mkdir(parents=True)
    talks = [
        {"collection": "ted", "title": f"talk{i}", "punctuated": True, "duplicate_of": None,
         "overlaps_iwslt_eval": [], "text": f"Talk {i} starts here. (Laughter) Is it good? Yes -- it is."}
        for i in range(60)
    ]
    talks += [
        {"collection": "tedx", "title": "raw", "punctuated": False, "duplicate_of": None, "overlaps_iwslt_eval": [], "text": "no marks here"},
        {"collection": "ted", "title": "dup", "punctuated": True, "duplicate_of": "talk1", "overlaps_iwslt_eval": [], "text": "Dup."},
        {"collection": "ted", "title": "dev", "punctuated": True, "duplicate_of": None, "overlaps_iwslt_eval": ["tst2012"], "text": "Dev talk."},
    ]
    (root / "ted" / "talks.jsonl").write_text("\n".join(json.dumps(t) for t in talks))
    (root / "iwslt").mkdir()
    (root / "iwslt" / "dev2010_cased.txt").write_text("You know, it works. \nDoes it? \n")
    (root / "iwslt" / "tst2012_cased.txt").write_text("NASA said so.\n")
    (root / "iwslt" / "dev2012_che_labeled.tsv").write_text("we\tO\n're\tCOMMA\ndo\tO\nn't\tPERIOD\n")
    (root / "conversational" / "swda").mkdir(parents=True)
    conversations = [
        {"split": split, "conversation_no": str(n), "utterances": [
            {"speaker": "A", "text": "Okay, uh,", "da_tag": "x"}, {"speaker": "B", "text": "what do you think?", "da_tag": "qw"}]}
        for n, split in enumerate(["train", "train", "val", "test"])
    ]
    (root / "conversational" / "swda" / "swda_conversations.jsonl").write_text("\n".join(json.dumps(c) for c in conversations))
    (root / "medical" / "mts_dialog").mkdir(parents=True)
    for name in ("MTS-Dialog-TrainingSet.csv", "MTS-Dialog-ValidationSet.csv"):
        with open(root / "medical" / "mts_dialog" / name, "w", newline="") as handle:
            writer = csv.DictWriter(handle, ["ID", "section_header", "section_text", "dialogue"])
            writer.writeheader()
            writer.writerow({"ID": "0", "section_header": "GENHX", "section_text": "x",
                             "dialogue": "Doctor: Any chest pain?\nPatient: No, none."})
    (root / "medical" / "aci_bench" / "challenge_data").mkdir(parents=True)
    for name in ("train.csv", "valid.csv"):
        with open(root / "medical" / "aci_bench" / "challenge_data" / name, "w", newline="") as handle:
            writer = csv.DictWriter(handle, ["dataset", "encounter_id", "dialogue", "note"])
            writer.writeheader()
            writer.writerow({"dataset": "aci", "encounter_id": f"D{name}", "dialogue": "[doctor] hi , brian . how are you ?\n[patient] good .", "note": "x"})
            writer.writerow({"dataset": "aci", "encounter_id": "raw", "dialogue": "[doctor] hi brian how are you [patient] good", "note": "x"})
    return root


def _words(dataset):
    return [w for row in dataset["words"] for w in row]


def test_ted(corpus):
    ds = load_punct_case_dataset("ted", corpus)
    assert set(ds) == {"train", "validation", "test"}
    docs = {split: set(ds[split]["doc_id"]) for split in ds}
    assert not docs["train"] & docs["test"]
    assert len(docs["train"]) + len(docs["test"]) == 60  # not the raw, duplicate or IWSLT-overlapping talks
    assert docs["validation"] == {"iwslt/dev2010_cased", "iwslt/tst2012_cased"}
    row = ds["train"][0]
    assert row["words"] == ["talk", row["words"][1], "starts", "here", "is", "it", "good", "yes", "it", "is"]
    assert [PUNCT[p] for p in row["punct"]] == ["O", "O", "O", "PERIOD", "O", "O", "QUESTION", "COMMA", "O", "PERIOD"]
    assert row["domain"] == "ted"
    again = load_punct_case_dataset("ted", corpus)
    assert again["train"]["doc_id"] == ds["train"]["doc_id"]  # deterministic


def test_swda_mts_aci_and_che(corpus):
    swda = load_punct_case_dataset("swda", corpus)
    assert {split: len(swda[split]) for split in swda} == {"train": 2, "validation": 1, "test": 1}
    assert swda["train"][0]["words"] == ["okay", "uh", "what", "do", "you", "think"]
    mts = load_punct_case_dataset("mts_dialog", corpus)
    assert mts["train"][0]["words"] == ["any", "chest", "pain", "no", "none"]  # speaker tags removed
    aci = load_punct_case_dataset("aci_bench", corpus)
    assert len(aci["validation"]) == 1  # the dialogue without any punctuation gives no labels
    row = aci["validation"][0]
    assert row["words"] == ["hi", "brian", "how", "are", "you", "good"]
    assert [PUNCT[p] for p in row["punct"]] == ["COMMA", "PERIOD", "O", "O", "QUESTION", "PERIOD"]
    assert set(row["case"]) == {-1}  # lowercase dialogue: casing ignored, not guessed
    assert set(row["disfluency"]) == {-1}  # not annotated
    che = load_punct_case_dataset("iwslt_dev2012", corpus)
    assert che["validation"][0]["words"] == ["we're", "don't"]
    assert set(che["validation"][0]["case"]) == {-1}


def test_switchboard_disfluency(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "conversational" / "switchboard_disfluency_sample"
    folder.mkdir(parents=True)
    calls = []
    for _ in range(12):
        calls += [
            "A.1: {F Uh, } do you have a pet? /",
            "B.2: {D Well, } [ I wouldn't, + {F uh, } I definitely wouldn't ] say that, / {C and } it's",
            "  a <laughter> dog. /",
        ]
    (folder / "disfluency").write_text("\n".join(calls) + "\n")
    ds = load_punct_case_dataset("switchboard_disfluency", tmp_path)
    assert sum(len(ds[s]) for s in ds) == 12
    row = ds["train"][0]
    assert row["words"] == ["uh", "do", "you", "have", "a", "pet", "well", "i", "wouldn't", "uh", "i", "definitely",
                            "wouldn't", "say", "that", "and", "it's", "a", "dog"]
    names = ["FLUENT", "DISFLUENT"]
    assert [names[d][0] for d in row["disfluency"]] == list("DFFFFFDDDDFFFFFFFFF")
    assert [PUNCT[p] for p in row["punct"]][:7] == ["COMMA", "O", "O", "O", "O", "QUESTION", "COMMA"]


def test_user_text_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "a.txt").write_text("Hello there. How are you?")
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "x", "text": "Fine, thanks."}) + "\n")
    ds = load_punct_case_dataset("text", data_files=[tmp_path / "a.txt", tmp_path / "b.jsonl"])
    assert sorted(w for split in ds for w in _words(ds[split])) == sorted(["hello", "there", "how", "are", "you", "fine", "thanks"])
    with pytest.raises(ValueError, match="data_files"):
        load_punct_case_dataset("text")
    with pytest.raises(ValueError, match="unknown corpus"):
        load_punct_case_dataset("nope")


def test_che_round_trip(tmp_path):
    examples = [SCHEME.parse("We're sure, don't you think? Yes.")]
    write_che(tmp_path / "out.tsv", examples)
    assert (tmp_path / "out.tsv").read_text().splitlines()[:2] == ["we're\tO", "sure\tCOMMA"]
    back = read_che(tmp_path / "out.tsv")
    assert back.words == examples[0].words and back.punct == examples[0].punct
    (tmp_path / "nbsp.tsv").write_text("so\tO\n\u00a0\tCOMMA\nyes\tPERIOD\n")
    spaced = read_che(tmp_path / "nbsp.tsv")
    assert spaced.words == ["so", "yes"] and spaced.punct == ["COMMA", "PERIOD"]
    (tmp_path / "bad.tsv").write_text("no tab here\n")
    with pytest.raises(ValueError, match="bad.tsv:1"):
        read_che(tmp_path / "bad.tsv")


def test_nemo_round_trip(tmp_path):
    examples = [SCHEME.parse("Hello, world. Is NASA here?"), SCHEME.parse("yes")]
    write_nemo(tmp_path, examples)
    assert (tmp_path / "text.txt").read_text() == "hello world is nasa here\nyes\n"
    assert (tmp_path / "labels.txt").read_text().splitlines()[0] == ",U .O OU OU ?O"
    back = list(read_nemo(tmp_path))
    assert back[0].punct == examples[0].punct
    assert back[0].case == ["UPPER_FIRST", "LOWER", "UPPER_FIRST", "UPPER_FIRST", "LOWER"]  # NeMo keeps one bit
    (tmp_path / "labels.txt").write_text("OU\n")
    with pytest.raises(ValueError, match="line 1 has 5 words but 1 labels"):
        list(read_nemo(tmp_path))


def test_document_split_is_stable():
    assert document_split("ted/ted/some talk") == document_split("ted/ted/some talk")
    shares = [document_split(f"doc{i}") for i in range(4000)]
    assert 0.03 < shares.count("test") / 4000 < 0.07 and 0.03 < shares.count("validation") / 4000 < 0.07


@given(st.lists(st.sampled_from(["O", "O", "O", "COMMA", "PERIOD", "QUESTION"]), max_size=300), st.integers(1, 60))
def test_chunks_tile_and_prefer_sentence_ends(punct, max_words):
    labeled = LabeledWords(["w"] * len(punct), punct, ["LOWER"] * len(punct))
    spans = list(chunk_at_sentences(labeled, max_words))
    assert [i for s, e in spans for i in range(s, e)] == list(range(len(punct)))
    for start, end in spans[:-1]:
        assert 0 < end - start <= max_words
        inside = [i for i in range(start, end) if punct[i] in ("PERIOD", "QUESTION")]
        if inside:  # a span with a sentence end in it is cut at a sentence end
            assert punct[end - 1] in ("PERIOD", "QUESTION")


def test_general_and_medical_sources(tmp_path, monkeypatch):
    import zipfile

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    root = tmp_path
    dd = root / "conversational" / "dailydialog" / "extracted" / "train"
    dd.mkdir(parents=True)
    (dd / "dialogues_train.txt").write_text("Good morning , sir . Is there a bank ? __eou__ Well , too far.Can you ? __eou__\n")
    ds = load_punct_case_dataset("dailydialog", root)
    row = ds["train"][0]
    assert row["words"] == ["good", "morning", "sir", "is", "there", "a", "bank", "well", "too", "far", "can", "you"]
    assert [PUNCT[p] for p in row["punct"]] == ["O", "COMMA", "PERIOD", "O", "O", "O", "QUESTION", "COMMA", "O", "PERIOD", "O", "QUESTION"]

    med = root / "medical" / "mtsamples"
    med.mkdir(parents=True)
    with open(med / "mtsamples.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, ["note_id", "description", "medical_specialty", "sample_name", "transcription", "keywords"])
        writer.writeheader()
        for specialty in ("A", "B"):  # the same report under two specialties
            writer.writerow({"note_id": specialty, "description": "", "medical_specialty": specialty, "sample_name": "",
                             "transcription": "PLAN:,1. She will rest.,  Follow up in 2 weeks.", "keywords": ""})
    ds = load_punct_case_dataset("mtsamples", root)
    rows = [r for split in ds for r in ds[split]]
    assert len(rows) == 1  # deduplicated
    # "PLAN:,1." was a line break: the header gets its colon (→ COMMA), the list number its period
    assert rows[0]["words"] == ["plan", "1", "she", "will", "rest", "follow", "up", "in", "2", "weeks"]
    assert [PUNCT[p] for p in rows[0]["punct"]] == ["COMMA", "PERIOD", "O", "O", "PERIOD", "O", "O", "O", "O", "PERIOD"]

    masc = root / "general" / "masc" / "plain" / "spoken"
    masc.mkdir(parents=True)
    (masc / "talk.txt").write_text("We met, and then? We left.")
    (masc / "sw2014-ms98-a-trans.txt").write_text("lowercase without marks")
    ds = load_punct_case_dataset("masc", root)
    assert [w for split in ds for w in _words(ds[split])] == ["we", "met", "and", "then", "we", "left"]

    nltk = root / "general" / "nltk"
    (nltk / "gutenberg").mkdir(parents=True)
    (nltk / "gutenberg" / "book.txt").write_text("It was a dark night. The end.")
    with zipfile.ZipFile(nltk / "brown_tagged.zip", "w") as archive:
        archive.writestr("brown/ca01", "The/at jury/nn said/vbd ``/`` yes/uh ''/'' ./.\n")
        archive.writestr("brown/README", "not a text")
    ds = load_punct_case_dataset("nltk", root)
    words = sorted(w for split in ds for w in _words(ds[split]))
    assert words == sorted(["it", "was", "a", "dark", "night", "the", "end", "the", "jury", "said", "yes"])


def test_unlabeled_ted(corpus):
    from hf_punctcase.data import load_unlabeled_dataset

    unlabeled = load_unlabeled_dataset(data_dir_path=corpus)
    assert unlabeled["text"] == ["no marks here"]


def test_stats_command(corpus, capsys):
    from hf_punctcase.cli import main

    assert main(["stats", "aci_bench", "swda", "--data-dir", str(corpus)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| corpus | split | examples | words | COMMA | PERIOD | QUESTION |")
    aci_validation = next(line for line in table if line.startswith("| aci_bench | validation"))
    # "hi , brian . how are you ? good ." → 6 words, 1 comma, 2 periods, 1 question, no casing
    assert aci_validation.split(" | ")[2:9] == ["1", "6", "1", "2", "1", "0", "0"]
    assert aci_validation.split(" | ")[-2] == "6"
    assert main(["stats", "nope"]) == 2


def test_fortunes_and_wikipedia(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "general" / "fortunes").mkdir(parents=True)
    (tmp_path / "general" / "fortunes" / "fortunes.jsonl").write_text(
        json.dumps({"file": "art", "text": "7:30, Channel 5:\n\tThe Bionic Dog drinks too much."}) + "\n"
    )
    ds = load_punct_case_dataset("fortunes", tmp_path)
    row = next(r for split in ds for r in ds[split])
    assert row["words"] == ["7:30", "channel", "5", "the", "bionic", "dog", "drinks", "too", "much"]
    assert [PUNCT[p] for p in row["punct"]] == ["COMMA", "O", "COMMA", "O", "O", "O", "O", "O", "PERIOD"]
    wiki = tmp_path / "general" / "wikipedia_sample"
    wiki.mkdir(parents=True)
    (wiki / "enwiki_sample_plaintext.jsonl").write_text(json.dumps({"title": "Anarchism", "text": "Anarchism is a philosophy."}) + "\n")
    (wiki / "lee_background.cor").write_text("The NSW fires burned.\n\nRain came.\n")
    ds = load_punct_case_dataset("wikipedia", tmp_path)
    docs = sorted({d for split in ds for d in ds[split]["doc_id"]})
    assert docs == ["lee/0", "lee/2", "wikipedia/Anarchism"]
    nsw = next(r for split in ds for r in ds[split] if r["doc_id"] == "lee/0")
    assert nsw["case"][1] == 2  # NSW → ALL_UPPER


def test_cache_follows_user_files(tmp_path, monkeypatch):
    import os
    import time

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "mine.txt"
    path.write_text("First version.")
    first = load_punct_case_dataset("text", data_files=[path])
    assert [w for split in first for w in _words(first[split])] == ["first", "version"]
    path.write_text("Second version, longer.")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    second = load_punct_case_dataset("text", data_files=[path])
    assert [w for split in second for w in _words(second[split])] == ["second", "version", "longer"]


def test_ted_reader_skips_talks_that_are_not_english(tmp_path):
    import json as _json

    from hf_punctcase.data import read_ted_talks

    talks = [
        {"collection": "ted_archive", "title": t, "punctuated": True, "duplicate_of": None, "overlaps_iwslt_eval": [], "text": text}
        for t, text in (("en", "Hello there. It works, really."), ("ko", "미국 진출 기업은 과학재단 비교적 얍볼 수 있게 됐다. wr fatwa."))
    ]
    path = tmp_path / "talks.jsonl"
    path.write_text("\n".join(_json.dumps(t) for t in talks))
    assert [doc_id for doc_id, _ in read_ted_talks(path)] == ["ted/ted_archive/en"]


def test_ted_captions_are_unlabelled_words(corpus):
    splits = load_punct_case_dataset("ted_captions", data_dir_path=corpus)
    rows = [row for split in splits.values() for row in split]
    assert [row["words"] for row in rows] == [["no", "marks", "here"]]
    assert rows[0]["punct"] == [-1, -1, -1] and rows[0]["case"] == [-1, -1, -1]


def test_unknown_keywords_are_refused_rather_than_swallowed(corpus):
    # `data_dir` is not the keyword: it must not be taken silently for a source option.
    with pytest.raises(TypeError, match="data_dir"):
        load_punct_case_dataset("ted", data_dir=corpus)
    assert "validation" in load_punct_case_dataset("ted", data_dir_path=corpus)
    with pytest.raises(ValueError, match="data_files"):
        load_punct_case_dataset("ted", corpus, data_files=["x.txt"])


def test_only_the_splits_asked_for(corpus):
    ds = load_punct_case_dataset("swda", corpus, splits=["validation"])
    assert list(ds) == ["validation"]
    with pytest.raises(ValueError, match="no test split"):
        load_punct_case_dataset("mts_dialog", corpus, splits=["test"])


def test_user_files_can_go_to_one_split(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": f"Document {i} here."}) + "\n" for i in range(60)))
    hashed = load_punct_case_dataset("text", data_files=[path])
    assert set(hashed) == {"train", "validation", "test"}  # 60 documents: some hash to each split
    whole = load_punct_case_dataset("text", data_files=[path], file_split="train")
    assert list(whole) == ["train"] and whole["train"].num_rows == 60
    assert list(load_punct_case_dataset("text", data_files=[path], file_split="validation")) == ["validation"]
    with pytest.raises(ValueError, match="file_split"):
        load_punct_case_dataset("text", data_files=[path], file_split="dev")


def test_a_missing_corpus_file_raises_the_readers_own_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "data").mkdir()
    with pytest.raises(FileNotFoundError, match="talks.jsonl"):
        load_punct_case_dataset("ted", tmp_path / "data")


def test_windows_cut_documents_into_consecutive_windows(corpus):
    sentences = load_punct_case_dataset("ted", corpus, max_words=5, splits=["train"])["train"]
    windows = load_punct_case_dataset("ted", corpus, max_words=5, splits=["train"], windows=True)["train"]
    assert windows.features == sentences.features
    for doc_id in set(sentences["doc_id"]):
        rows = [r for r in sentences if r["doc_id"] == doc_id]
        cut = [r for r in windows if r["doc_id"] == doc_id]
        for column in ("words", "punct", "case", "disfluency"):
            assert [x for r in cut for x in r[column]] == [x for r in rows for x in r[column]]
        assert [len(r["words"]) for r in cut][:-1] == [5] * (len(cut) - 1)


def _write_mtsamples(corpus: Path, report: str) -> None:
    """40 MTSamples reports, ``report`` with its ``{n}`` the report's number."""
    med = corpus / "medical" / "mtsamples"
    med.mkdir(parents=True)
    with open(med / "mtsamples.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, ["note_id", "description", "medical_specialty", "sample_name", "transcription", "keywords"])
        writer.writeheader()
        for n in range(40):
            writer.writerow({"note_id": str(n), "description": "", "medical_specialty": "A", "sample_name": "",
                             "transcription": report.format(n=n), "keywords": ""})


def test_dictation_speaks_marks_as_commands_and_labels_every_other_corpus_as_words(corpus):
    from hf_punctcase.labels import COMMAND_LABELS, SPOKEN_COMMANDS

    _write_mtsamples(corpus, "PLAN: She will rest {n} days; see me then! Any pain?")
    ds = load_punct_case_dataset("dictation", corpus)
    rows = [row for split in ds for row in ds[split]]
    assert rows and all(row["doc_id"].startswith("dictation/") for row in rows)
    commands = [COMMAND_LABELS[c] for row in rows for c in row["command"]]
    assert {"COLON", "SEMICOLON", "EXCLAMATION", "QUESTION", "PERIOD"} <= set(commands)
    for row in rows:
        for i, (word, command) in enumerate(zip(row["words"], row["command"])):
            label = COMMAND_LABELS[command]
            if label != "WORD":
                # A command's words spell it, carry no mark and no casing; so does the word before it
                # carry no mark (the command is its mark).
                assert any(word in phrase.split() for phrase in SPOKEN_COMMANDS[label])
                assert PUNCT[row["punct"][i]] == "O" and row["case"][i] == -1
        # A command's words and the word before it are fluent; nothing else is labelled for disfluency.
        fluent = {i for i, c in enumerate(row["command"]) if COMMAND_LABELS[c] != "WORD"}
        fluent |= {i - 1 for i in fluent if i > 0}
        assert [i for i, d in enumerate(row["disfluency"]) if d != MISSING_LABEL] == sorted(fluent)
        assert all(row["disfluency"][i] == 0 for i in fluent)
    # Every other corpus is undictated: all its words are words.
    ted = load_punct_case_dataset("ted", corpus)
    assert {c for split in ted for row in ted[split] for c in row["command"]} == {COMMAND_LABELS.index("WORD")}


def test_a_share_of_dictated_documents_is_spoken_with_disfluencies_that_carry_out_no_command(corpus):
    from hf_punctcase.data.builder import DISFLUENT_DICTATION_SHARE
    from hf_punctcase.labels import COMMAND_LABELS, DISFLUENCY_LABELS

    folder = corpus / "conversational" / "switchboard_disfluency_sample"
    folder.mkdir(parents=True)
    calls = [f"A.{2 * n + 1}: {{F Uh, }} [ we, + we ] went home. /\nB.{2 * n + 2}: {{F um, }} it was late. /" for n in range(20)]
    (folder / "disfluency").write_text("\n".join(calls) + "\n")
    _write_mtsamples(corpus, "PLAN: She will rest {n} days, then walk. Any pain?")
    ds = load_punct_case_dataset("dictation", corpus)
    rows = [row for split in ds for row in ds[split]]
    disfluent = [row for row in rows if DISFLUENCY_LABELS.index("DISFLUENT") in row["disfluency"]]
    assert 0 < len(disfluent) < len(rows) and DISFLUENT_DICTATION_SHARE < 1
    for row in disfluent:
        labels = [DISFLUENCY_LABELS[d] for d in row["disfluency"]]
        assert set(labels) == {"FLUENT", "DISFLUENT"}  # every word labelled
        for label, command, punct in zip(labels, row["command"], row["punct"]):
            if label == "DISFLUENT":  # an inserted word: no command, no mark of its own
                assert COMMAND_LABELS[command] == "WORD" and punct == -1
    assert any("uh" in row["words"] or "um" in row["words"] for row in disfluent)


def test_ted_talks_give_their_paragraphs_and_other_corpora_none(corpus):
    from hf_punctcase.labels import PARAGRAPH_LABELS

    talks = corpus / "ted" / "talks.jsonl"
    extra = {"collection": "ted", "title": "paragraphs", "punctuated": True, "duplicate_of": None, "overlaps_iwslt_eval": [],
             "text": "First we waited. Then it came.\nIt was big.\nThe end."}
    talks.write_text(talks.read_text() + "\n" + json.dumps(extra))
    ds = load_punct_case_dataset("ted", corpus)
    row = next(r for split in ds for r in ds[split] if r["words"][:3] == ["first", "we", "waited"])
    ends = [w for w, p in zip(row["words"], row["paragraph"]) if PARAGRAPH_LABELS[p] == "END"]
    assert ends == ["came", "big", "end"]
    iwslt = [r for r in ds["validation"]]  # IWSLT's lines are segments, not paragraphs: unknown
    assert iwslt and all(set(r["paragraph"]) == {-1} for r in iwslt)
    assert {p for split in load_punct_case_dataset("swda", corpus).values() for r in split for p in r["paragraph"]} == {-1}
