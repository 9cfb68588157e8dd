"""The sharded corpora (xz JSONL, one document a line) on fixture shards written here, in the layout of
../shared/data/spoken and ../shared/data/general."""

import json
import lzma

import pytest

from hf_punctcase.data import LICENCES, NON_COMMERCIAL, CorpusSpec, load_punct_case_dataset, read_shards
from hf_punctcase.data.builder import SOURCES
from hf_punctcase.data.splits import SHARDED_HOLDOUT, sharded_split
from hf_punctcase.data.sources import SHARDED_CORPORA
from hf_punctcase.evaluation import DEV_SETS
from hf_punctcase.evaluation.dev_sets import held_out_openings
from hf_punctcase.labels import MISSING_LABEL, LabelScheme
from hf_punctcase.labels import PARAGRAPH_LABELS

END = PARAGRAPH_LABELS.index("END")


def _write_shards(folder, documents, per_shard=7):
    folder.mkdir(parents=True, exist_ok=True)
    for number, start in enumerate(range(0, len(documents), per_shard)):
        with lzma.open(folder / f"part-{number:05d}.jsonl.xz", "wt", encoding="utf-8") as handle:
            for document in documents[start : start + per_shard]:
                handle.write(json.dumps(document) + "\n")


def _conversation(i):
    return {
        "id": f"show/episode-{i}.md",
        "source": "changelog",
        "speakers": ["Host", "Guest", "Host"],
        "paragraphs": [f"Welcome to episode {i}. How are you?", "I'm good, thanks.  Glad to be here.", "Great."],
    }


@pytest.fixture()
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    _write_shards(root / "spoken" / "changelog", [_conversation(i) for i in range(300)])
    speeches = [
        {"id": f"Session {year - 1945} - {year}/C{i}.txt", "date": str(year), "paragraphs": [f"Mr. President, we meet in {year}.", "Peace matters."]}
        for year in (2004, 2005, 2015) for i in range(3)
    ]
    _write_shards(root / "spoken" / "ungd", speeches)
    return root


def test_shards_are_read_in_order_one_document_at_a_time(root):
    documents = read_shards(root / "spoken" / "changelog")
    assert next(documents)["id"] == "show/episode-0.md"  # a generator: nothing read past the first line
    assert [d["id"] for d in documents][-1] == "show/episode-299.md"


def test_every_sharded_corpus_is_a_source_with_a_licence_and_a_holdout():
    for name in SHARDED_CORPORA:
        assert name in SOURCES and name in LICENCES and name in SHARDED_HOLDOUT
    assert LICENCES["scotus"][1] in NON_COMMERCIAL  # CC BY-NC: a checkpoint trained on it says so
    assert not {LICENCES[name][1] for name in ("changelog", "ungd", "wikipedia_2015", "gutenberg")} & NON_COMMERCIAL


def test_a_turn_is_a_paragraph_and_whole_documents_go_to_one_split(root):
    ds = load_punct_case_dataset("changelog", root, max_words=50)
    assert set(ds) == {"train", "validation", "test"}
    docs = {split: set(ds[split]["doc_id"]) for split in ds}
    assert not docs["train"] & docs["validation"] and not docs["train"] & docs["test"]
    assert sum(map(len, docs.values())) == 300
    example = ds["train"][0]
    assert example["words"] == ["welcome", "to", "episode", example["words"][3], "how", "are", "you",
                                "i'm", "good", "thanks", "glad", "to", "be", "here", "great"]
    # The paragraph head learns each turn's last word as END, every other word INSIDE.
    assert [i for i, label in enumerate(example["paragraph"]) if label == END] == [6, 13, 14]
    assert MISSING_LABEL not in example["case"]


def test_the_un_debates_hold_out_whole_years(root):
    ds = load_punct_case_dataset("ungd", root)
    years = {split: {doc_id.split(" - ")[1][:4] for doc_id in ds[split]["doc_id"]} for split in ds}
    assert years == {"train": {"2004"}, "validation": {"2005"}, "test": {"2015"}}


def test_a_malformed_shard_line_names_its_shard_and_line(tmp_path):
    folder = tmp_path / "spoken" / "changelog"
    _write_shards(folder, [_conversation(0)])
    with lzma.open(folder / "part-00001.jsonl.xz", "wt") as handle:
        handle.write(json.dumps(_conversation(1)) + "\n" + '{"id": "x", "paragraphs": "not a list"}\n')
    with pytest.raises(ValueError, match=r"part-00001\.jsonl\.xz:2: a document needs"):
        list(read_shards(folder))
    with pytest.raises(FileNotFoundError, match="no part"):
        list(read_shards(tmp_path / "empty"))


def test_the_dev_set_is_the_opening_of_each_validation_document(root):
    scheme = LabelScheme()
    openings = held_out_openings("changelog", root, scheme, per_document=5, total=12)
    validation = [i for i in range(300) if sharded_split("changelog", _conversation(i)) == "validation"]
    assert validation  # the fixture holds some out
    # Five words would cut "Welcome to episode N. How are": the opening stops at the sentence end.
    assert all(o.words == ["welcome", "to", "episode", o.words[3]] for o in openings)
    assert sum(len(o) for o in openings) <= 12 and len(openings) == min(3, len(validation))
    names = [dev_set.name for dev_set in DEV_SETS]
    assert "Changelog podcasts val" in names and "UN General Debate val" in names


def test_a_mixture_names_the_new_corpora_with_weights(root):
    spec = CorpusSpec.parse("changelog=0.5")
    assert (spec.name, spec.weight) == ("changelog", 0.5)
