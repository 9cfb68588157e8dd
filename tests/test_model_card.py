"""Model cards: metadata through huggingface_hub's ModelCard (model-index from every dev set), the
template shipped in the package, and licences inherited from the checkpoint a run started from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard

import hf_punctcase
from hf_punctcase.hub import check_card_metadata
from hf_punctcase.cards.card import TEMPLATE_PATH, card_training_data, render_model_card
from hf_punctcase.cards.checkpoint import card_data_for_checkpoint, card_for_checkpoint, replace_embedded_base
from hf_punctcase.cards.facts import DevSetEvaluation, PunctCaseCardFacts, TrainingDataset
from hf_punctcase.cards.licences import is_non_commercial, licence_metadata
from hf_punctcase.cards.lineage import EMBEDDED_DEFAULT_ID, embedded_model_id, embedded_model_name

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = sorted((ROOT / "model_cards").glob("*.md"))
METADATA_KEYS = {"model-index", "datasets", "metrics", "license", "base_model", "library_name", "pipeline_tag", "language", "tags"}


def _scores(punct_f1: float, case_f1: float | None = None) -> dict[str, float]:
    """Scores as hf_punctcase.evaluation gives them, per class and overall."""
    scores: dict[str, float] = {"words": 1000, "words_per_second": 500.0, "punct_slot_error_rate": 0.4}
    tasks = [("punct", ("COMMA", "PERIOD", "QUESTION"), punct_f1)]
    if case_f1 is not None:
        tasks.append(("case", ("UPPER_FIRST", "ALL_UPPER", "MIXED"), case_f1))
    for prefix, classes, f1 in tasks:
        for name in (*classes, "overall"):
            scores.update({f"{prefix}_{name}_precision": f1, f"{prefix}_{name}_recall": f1, f"{prefix}_{name}_f1": f1})
            if name != "overall":
                scores[f"{prefix}_{name}_support"] = 10
    return scores


def _facts(**overrides) -> PunctCaseCardFacts:
    values = dict(
        model_name="tiny non-commercial",
        base_encoder="a tiny BERT",
        num_parameters=1234,
        size_on_disk_mb=0.1,
        datasets=[
            TrainingDataset("Switchboard Dialog Act corpus", 1000, "CC BY-NC-SA 3.0", "stage 1, weight 1", "swda"),
            TrainingDataset("MTSamples medical transcription reports", None, "CC0", "MLM adaptation", "mtsamples"),
        ],
        recipe_command="python recipes/finetune.py --train_corpora swda",
        training_time="1 min, 10 steps",
        evaluations=[
            DevSetEvaluation("SwDA val", _scores(0.75, 0.85)),
            DevSetEvaluation("ACI-BENCH valid", _scores(0.5)),
            DevSetEvaluation("IWSLT dev2012 (Che)", {"words": 288225, "punct_overall_f1": 0.675}),
        ],
        base_model_id="sentence-transformers/all-MiniLM-L6-v2",
        repo_id="org/tiny-nc",
    )
    return PunctCaseCardFacts(**{**values, **overrides})


def _child_of(parent: str | Path, tiny_model_dir: str, folder: Path) -> Path:
    """A tiny checkpoint whose training record says it went on from ``parent`` on the user's own text."""
    shutil.copytree(tiny_model_dir, folder)
    summary = {
        "command": "python recipes/finetune.py --model_name_or_path PARENT --train_corpora text:mine.jsonl",
        "init": str(parent), "train_corpora": ["text:mine.jsonl"], "pool_words": {"text:mine.jsonl": 500},
        "train_words": 500, "train_seconds": 60, "global_step": 10, "epoch": 1.0,
    }
    (folder / "training_summary.json").write_text(json.dumps(summary))
    return folder


def _front(card: str) -> dict:
    return yaml.safe_load(card.split("---\n")[1])


def test_metadata_carries_a_model_index_of_every_dev_set_and_metric():
    card = render_model_card(_facts())
    front = check_card_metadata(card)
    assert METADATA_KEYS <= set(front)
    assert front["pipeline_tag"] == "token-classification" and front["library_name"] == "transformers"
    assert front["license"] == "other" and front["license_name"] == "non-commercial"
    assert front["datasets"] == ["swda", "mtsamples"] and front["language"] == ["en"]
    results = ModelCard(card).data.eval_results
    assert {(r.dataset_name, r.metric_config): r.metric_value for r in results} == {
        ("SwDA val", "punctuation"): 0.75, ("SwDA val", "casing"): 0.85,
        ("ACI-BENCH valid", "punctuation"): 0.5,  # no casing in this set: no casing figure
        ("IWSLT dev2012 (Che)", "punctuation"): 0.675,
    }
    assert {r.task_type for r in results} == {"token-classification"} and {r.metric_type for r in results} == {"f1"}
    assert ModelCard(card).data.model_name == "org/tiny-nc"
    # the text: a per-class table where precision and recall were given, a summary row for every set
    assert "| COMMA | 75.0 | 75.0 | 75.0 | 10 |" in card
    assert "| IWSLT dev2012 (Che) | 288,225 | – | – | – | **67.5** |" in card
    assert "Casing: not scored (this dev set has no casing)." in card
    assert "| MTSamples medical transcription reports — MLM adaptation | see Training | CC0 |" in card
    assert 'pipeline(model="org/tiny-nc", trust_remote_code=True)' in card


def test_a_card_is_what_huggingface_hub_writes_and_its_data_table_reads_back():
    facts = _facts()
    card = render_model_card(facts)
    assert str(ModelCard(card)) + ("" if str(ModelCard(card)).endswith("\n") else "\n") == card
    assert card_training_data(ModelCard(card)) == facts.datasets


def test_one_shared_licence_with_a_hub_id_is_the_card_licence():
    front = _front(render_model_card(_facts(datasets=[TrainingDataset("MTS-Dialog", 10, "CC BY 4.0", corpus="mts_dialog")])))
    assert front["license"] == "cc-by-4.0" and "license_name" not in front
    assert _front(render_model_card(_facts(datasets=[])))["license"] == "unknown"


def test_no_figures_no_model_index():
    card = render_model_card(_facts(evaluations=[]))
    assert "model-index" not in _front(card) and "model_name" not in _front(card)
    assert "No dev-set figures were recorded for this checkpoint." in card


def test_the_template_ships_in_the_package():
    assert TEMPLATE_PATH.is_file() and TEMPLATE_PATH.parent.parent == Path(hf_punctcase.__file__).parent
    import tomllib

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "templates/*.md" in package_data["hf_punctcase"]


def test_a_run_from_a_non_commercial_checkpoint_inherits_its_data_licence_and_name(tiny_model_dir, tmp_path):
    parent = tmp_path / "parent"
    shutil.copytree(tiny_model_dir, parent)
    (parent / "README.md").write_text(render_model_card(_facts()))
    child = _child_of(parent, tiny_model_dir, tmp_path / "child" / "final")

    card = card_for_checkpoint(child)
    front = check_card_metadata(card)
    assert front["license"] == "other" and front["license_name"] == "non-commercial"
    assert front["base_model"] == "org/tiny-nc"  # the checkpoint it started from, by the Hub id its card names
    assert front["datasets"] == ["swda", "mtsamples"]  # the user's own file has no dataset name
    assert "| Switchboard Dialog Act corpus — base checkpoint, stage 1, weight 1 | 1,000 | CC BY-NC-SA 3.0 |" in card
    assert "| MTSamples medical transcription reports — base checkpoint, MLM adaptation | see its card | CC0 |" in card
    assert "| the user's own text | 500 | as the user's data |" in card
    assert "**Licence of this checkpoint: non-commercial (trained on CC BY-NC-SA 3.0 data).**" in card
    assert "as the training data: as the user's data" not in card
    assert "- Trained further from: a joint checkpoint (org/tiny-nc)" in card


def test_a_run_from_a_checkpoint_carries_its_training_time_and_command(tiny_model_dir, tmp_path):
    parent = tmp_path / "parent"
    shutil.copytree(tiny_model_dir, parent)
    (parent / "README.md").write_text(render_model_card(_facts()))
    card = card_for_checkpoint(_child_of(parent, tiny_model_dir, tmp_path / "child"))
    # the parent's training comes first in the command and last in the time, so the card stands alone
    assert "- Command: `python recipes/finetune.py --train_corpora swda ; then python recipes/finetune.py " in card
    assert "; before that, the training of a joint checkpoint (org/tiny-nc): 1 min, 10 steps\n" in card
    assert "see its card)" not in card


def test_the_training_of_an_embedded_base_stays_on_the_card_that_replaces_it(tiny_model_dir, tmp_path):
    lines = (hf_punctcase.ACCURATE_MODEL_DIR / "README.md").read_text().splitlines()
    time, command = (next(line.removeprefix(p) for line in lines if line.startswith(p)) for p in ("- Time: ", "- Command: "))
    card = card_for_checkpoint(_child_of("accurate", tiny_model_dir, tmp_path / "final"))
    assert f"the embedded accurate model of hf_punctcase (`hf_punctcase/accurate_model`, what " \
           f"`load_pipeline(\"accurate\")` loads): {time}" in card
    assert f"- Command: `{command.strip('`')} ; then python recipes/finetune.py" in card


def test_a_successor_shipped_in_an_embedded_models_place_calls_it_the_previous_one(tiny_model_dir, tmp_path):
    facts = card_data_for_checkpoint(_child_of("accurate", tiny_model_dir, tmp_path / "final"))
    assert replace_embedded_base(facts) == "accurate"
    card = render_model_card(facts)
    assert "; before that, the training of the previous embedded accurate model of hf_punctcase: " in card
    assert "- Trained further from: the previous embedded accurate model of hf_punctcase (its training data are listed below)" in card
    assert 'load_pipeline("accurate")` loads' not in card  # which, once shipped, is the successor itself
    assert _front(card).get("base_model") == facts.encoder_id  # the encoder (none known for a tiny one), not the folder
    # a checkpoint from anything else is left as it is
    other = card_data_for_checkpoint(_child_of(tiny_model_dir, tiny_model_dir, tmp_path / "other"))
    assert replace_embedded_base(other) is None and render_model_card(other) == card_for_checkpoint(tmp_path / "other")


def test_a_base_card_without_a_training_section_is_referred_to(tiny_model_dir, tmp_path):
    parent = tmp_path / "parent"
    shutil.copytree(tiny_model_dir, parent)
    (parent / "README.md").write_text("---\nlicense: cc-by-nc-4.0\n---\n# Another card\n")
    card = card_for_checkpoint(_child_of(parent, tiny_model_dir, tmp_path / "child"))
    assert "(after the training of the base checkpoint: see its card)" in card


@pytest.mark.parametrize("init", ["embedded folder", "default"])
def test_a_run_from_the_embedded_default_carries_its_licences_and_names_it(init, tiny_model_dir, tmp_path):
    parent = hf_punctcase.DEFAULT_MODEL_DIR if init == "embedded folder" else "default"
    card = card_for_checkpoint(_child_of(parent, tiny_model_dir, tmp_path / "final"))
    front = check_card_metadata(card)
    assert front["base_model"] == EMBEDDED_DEFAULT_ID
    assert front["license"] == "other" and front["license_name"] == "non-commercial"
    assert {"ted", "swda", "mts_dialog", "aci_bench"} <= set(front["datasets"])
    assert "non-commercial (trained on CC BY-NC-ND 3.0, CC BY-NC-SA 3.0 data)" in card
    assert "the embedded default of hf_punctcase" in card
    assert "all-MiniLM-L6-v2" not in front["base_model"]


@pytest.mark.parametrize("init", ["embedded folder", "accurate"])
def test_a_run_from_the_embedded_accurate_model_carries_its_licences_and_names_it(init, tiny_model_dir, tmp_path):
    parent = hf_punctcase.ACCURATE_MODEL_DIR if init == "embedded folder" else "accurate"
    card = card_for_checkpoint(_child_of(parent, tiny_model_dir, tmp_path / "final"))
    front = check_card_metadata(card)
    # not the bare name "accurate", which would read as a Hub repo, nor the default's id
    assert front["base_model"] == embedded_model_id("accurate") == "hf_punctcase/accurate_model"
    assert embedded_model_name(front["base_model"]) == "accurate"
    assert front["license"] == "other" and front["license_name"] == "non-commercial"
    assert {"ted", "swda", "mts_dialog", "aci_bench"} <= set(front["datasets"])
    # every row of the embedded card's data table, one checkpoint further back, with its licence
    rows = [line for line in card.splitlines() if "— base checkpoint" in line]
    for d in card_training_data(ModelCard.load(hf_punctcase.ACCURATE_MODEL_DIR / "README.md")):
        assert any(row.startswith(f"| {d.name} — base checkpoint") and row.endswith(f"| {d.licence} |") for row in rows), d
    assert 'the embedded accurate model of hf_punctcase (`hf_punctcase/accurate_model`, what `load_pipeline("accurate")` loads)' in card


def test_embedded_model_ids_name_their_package_folders():
    assert EMBEDDED_DEFAULT_ID == embedded_model_id("default") == "hf_punctcase/default_model"
    assert {embedded_model_name(embedded_model_id(name)) for name in hf_punctcase.EMBEDDED_MODELS} == set(
        hf_punctcase.EMBEDDED_MODELS
    )
    assert embedded_model_name("org/name") is None and embedded_model_name(None) is None


def test_a_run_from_a_hub_checkpoint_names_it_and_reads_its_cached_card(tiny_model_dir, tmp_path, monkeypatch):
    from huggingface_hub import constants as hub_constants

    # the Hub cache as from_pretrained("org/tiny-nc") leaves it
    repo = tmp_path / "hub" / "models--org--tiny-nc"
    snapshot = repo / "snapshots" / "0123abcd"
    shutil.copytree(tiny_model_dir, snapshot)
    (snapshot / "README.md").write_text(render_model_card(_facts()))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))

    card = card_for_checkpoint(_child_of("org/tiny-nc", tiny_model_dir, tmp_path / "child"))
    front = _front(card)
    assert front["base_model"] == "org/tiny-nc" and front["license_name"] == "non-commercial"
    assert "- Trained further from: `org/tiny-nc`" in card
    assert "- Base encoder: a tiny BERT" in card  # as the base checkpoint's card names it


def test_a_base_checkpoint_card_of_another_layout_gives_its_metadata(tiny_model_dir, tmp_path):
    parent = tmp_path / "parent"
    shutil.copytree(tiny_model_dir, parent)
    (parent / "README.md").write_text("---\nlicense: cc-by-nc-4.0\ndatasets:\n- someone/calls\n---\n# Another card\n")
    front = _front(card_for_checkpoint(_child_of(parent, tiny_model_dir, tmp_path / "child")))
    assert front["license"] == "other" and front["license_name"] == "non-commercial"
    assert front["datasets"] == ["someone/calls"]


def test_a_base_checkpoint_without_card_or_record_leaves_the_licence_unknown(tiny_model_dir, tmp_path):
    card = card_for_checkpoint(_child_of(tiny_model_dir, tiny_model_dir, tmp_path / "child"))
    assert _front(card)["license"] == "unknown"
    assert "the base checkpoint's training data (no card or training record found)" in card


def test_an_encoder_start_is_no_base_checkpoint(tiny_encoder_dir, tiny_model_dir, tmp_path):
    card = card_for_checkpoint(_child_of(tiny_encoder_dir, tiny_model_dir, tmp_path / "child"))
    assert "Trained further from" not in card and "base checkpoint" not in card
    assert _front(card)["license_name"] == "as-the-training-data"


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name)
def test_published_cards_are_valid_and_state_software_facts_only(path: Path):
    card = path.read_text()
    front = check_card_metadata(card)
    from_scratch = "Base encoder: none (a CNN-BiLSTM trained from scratch)" in card
    assert METADATA_KEYS - ({"base_model"} if from_scratch else set()) <= set(front)
    # the licence follows the card's own data table: non-commercial where any corpus in it is
    rows = card_training_data(ModelCard(card))
    assert rows, "the card lists no training data"
    assert (front["license"], front.get("license_name")) == licence_metadata(rows)
    assert (front.get("license_name") == "non-commercial") == any(is_non_commercial(row.licence) for row in rows)
    names = {r.dataset_name for r in ModelCard(card).data.eval_results}
    assert {"TED dev2010+tst2012", "SwDA val", "MTS-Dialog validation", "ACI-BENCH valid"} <= names
    # cards describe the checkpoint, not how the project was developed; a speed table names its CPU and the
    # features it has or lacks ("no AMX"), as every speed figure must
    for word in ("runs/", "session", "issue", "lever", "development machine"):
        assert word not in card, word


def test_rows_of_checkpoints_several_back_count_them_instead_of_repeating():
    from hf_punctcase.cards.lineage import _one_checkpoint_back

    assert _one_checkpoint_back("stage 1, weight 1") == "base checkpoint, stage 1, weight 1"
    assert _one_checkpoint_back("base checkpoint, stage 1, weight 1") == "base checkpoint (2 checkpoints back), stage 1, weight 1"
    assert _one_checkpoint_back("base checkpoint, base checkpoint, stage 1") == "base checkpoint (3 checkpoints back), stage 1"
    assert _one_checkpoint_back("base checkpoint (3 checkpoints back), MLM adaptation") == "base checkpoint (4 checkpoints back), MLM adaptation"
    assert _one_checkpoint_back("") == "base checkpoint" and _one_checkpoint_back(None) == "base checkpoint"


def test_text_a_model_punctuated_carries_that_models_data_in_the_card(tiny_model_dir, tmp_path):
    """restore_corpus.py records which model restored a file and what that model was trained on; a
    checkpoint trained on the file lists those corpora (here the embedded default's, its Switchboard
    disfluency calls among them); a teacher-labelled file without the record makes the licence unknown."""
    from hf_punctcase.cards.lineage import read_provenance, write_provenance

    labelled = tmp_path / "captions_default.jsonl"
    labelled.write_text(json.dumps({"id": "ted/tedx/a", "text": "So what are the risks?"}) + "\n")
    write_provenance(labelled, "default", text_field="caption", output_field="text")
    assert read_provenance(labelled)["model"] == "default"

    def trained_on(specs: list[str], folder: Path) -> str:
        shutil.copytree(tiny_model_dir, folder)
        summary = {
            "command": "python recipes/finetune.py --train_corpora " + " ".join(specs), "train_corpora": specs,
            "pool_words": {spec: 4 for spec in specs}, "train_words": 4, "train_seconds": 1, "global_step": 1, "epoch": 1.0,
        }
        (folder / "training_summary.json").write_text(json.dumps(summary))
        return card_for_checkpoint(folder)

    card = trained_on([f"ted_captions_labelled:{labelled}", "mts_dialog"], tmp_path / "recorded")
    front = check_card_metadata(card)
    assert front["license_name"] == "non-commercial" and "switchboard_disfluency" in front["datasets"]
    assert "| Switchboard calls with Meteer disfluency markup — punctuated captions_default.jsonl: its model's data, " in card
    assert not [row for row in card.splitlines() if row.startswith("|") and str(tmp_path) in row]  # no machine's paths

    unrecorded = tmp_path / "captions_other.jsonl"
    shutil.copy(labelled, unrecorded)
    card = trained_on([f"ted_captions_labelled:{unrecorded}"], tmp_path / "unrecorded")
    assert "| the training data of the model that punctuated captions_other.jsonl | not recorded | unknown |" in card
    # the user's own text: nothing more without a record; a model found nowhere here leaves the licence unknown
    assert "model that punctuated" not in trained_on([f"text:{unrecorded}"], tmp_path / "own")
    write_provenance(unrecorded, "someone/elsewhere")
    assert read_provenance(unrecorded)["model_training_data"] is None
    assert _front(trained_on([f"text:{unrecorded}"], tmp_path / "hub"))["license"] == "unknown"


def test_asr_output_and_simulated_asr_errors_carry_the_licence_of_the_text_they_came_from(tiny_model_dir, tmp_path):
    """The speech loop records the corpus its text came from; a checkpoint trained on its output lists
    that corpus and licence (not only "as the user's data"), and the pools of --asr_noise_corpora
    (recorded as asr_noise:SPEC) get rows of their own."""
    from hf_punctcase.cards.lineage import write_text_provenance

    hypotheses = tmp_path / "ted_train.jsonl"
    hypotheses.write_text("")
    write_text_provenance(hypotheses, "the speech loop's ASR output", ["ted"], documents="ted-train")
    folder = tmp_path / "trained"
    shutil.copytree(tiny_model_dir, folder)
    specs = [f"asr_hypotheses:{hypotheses}=4", "mts_dialog"]
    summary = {
        "command": "python recipes/finetune.py", "train_corpora": specs,
        "pool_words": {specs[0]: 7, "mts_dialog": 5, "asr_noise:swda=0.1": 11},
        "train_words": 23, "train_seconds": 1, "global_step": 1, "epoch": 1.0,
    }
    (folder / "training_summary.json").write_text(json.dumps(summary))
    card = card_for_checkpoint(folder)
    front = check_card_metadata(card)
    assert {"ted", "swda", "mts_dialog"} <= set(front["datasets"]) and front["license_name"] == "non-commercial"
    assert "| TED talks, punctuated (duplicates and IWSLT dev/test talks excluded) — ted_train.jsonl: the speech loop's ASR output |" in card
    assert "| Switchboard Dialog Act corpus — with simulated ASR errors, weight 0.1 | 11 | CC BY-NC-SA 3.0 |" in card
    assert str(tmp_path) not in card


def test_own_text_whose_provenance_names_an_outside_source_carries_that_licence(tiny_model_dir, tmp_path):
    """A script's cleaned copy of a public corpus records where its text came from and under what licence;
    a checkpoint trained on it lists that source, and the file's own row and the licence note say that
    licence, not "as the user's data". Without the record the row says "as the user's data"."""
    from hf_punctcase.cards.facts import TrainingDataset
    from hf_punctcase.cards.lineage import record_datasets, write_text_provenance
    from hf_punctcase.cards.licences import licence_note

    conferences = tmp_path / "news_conferences.jsonl"
    conferences.write_text(json.dumps({"text": "Q. Mr. President, will you run? THE PRESIDENT. I will."}) + "\n")
    specs = [f"text:{conferences}=2", "ungd"]
    summary = {"train_corpora": specs, "pool_words": {specs[0]: 9, "ungd": 5}}
    own_row = record_datasets(summary)[0]
    assert own_row.licence == "as the user's data" and "not recorded" in licence_note(record_datasets(summary))

    source = TrainingDataset("US presidents' news conferences (Public Papers of the Presidents)", 9, "public domain (US government work)")
    write_text_provenance(conferences, "a cleaning script", [source])
    rows = record_datasets(summary)
    assert rows[0].licence == "public domain (US government work)" and rows[1].licence == "CC0"
    note = licence_note(rows)
    assert "no corpus of the training text forbids commercial use" in note and "non-commercial" not in note

    folder = tmp_path / "trained"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "training_summary.json").write_text(json.dumps({
        "command": "python recipes/finetune.py", **summary, "train_words": 14, "train_seconds": 1, "global_step": 1, "epoch": 1.0,
    }))
    card = card_for_checkpoint(folder)
    front = check_card_metadata(card)
    assert front["license"] == "other" and front["license_name"] == "as-the-training-data"
    assert "| US presidents' news conferences (Public Papers of the Presidents) — news_conferences.jsonl: a cleaning script |" in card
    assert "as the user's data" not in card and str(tmp_path) not in card

    # one non-commercial corpus makes the whole checkpoint non-commercial, whatever the file says
    rows = record_datasets({"train_corpora": [specs[0], "scotus"], "pool_words": {}})
    assert licence_note(rows).startswith("Licence: some of the training text is under non-commercial licences")
    assert "TED" not in licence_note(rows) and "TED terms" in licence_note(record_datasets({"train_corpora": ["ted"], "pool_words": {}}))


def test_a_model_made_on_a_tokenizer_carries_the_tokenizers_text(tmp_path):
    """The tokenizer's vocabulary is made from its training text: a model trained from scratch on it carries
    those corpora and licences; a tokenizer without its record gives a row of unknown licence, and a
    checkpoint that went on from another (no tokenizer in its record) adds nothing."""
    from hf_punctcase.cards.lineage import stage_datasets, tokenizer_source, write_tokenizer_record
    from hf_punctcase.cards.licences import licence_metadata

    folder = tmp_path / "tok_open"
    folder.mkdir()
    write_tokenizer_record(folder, {"ungd": 120, "ted": 80}, vocab_size=5000)
    stage = {"train_corpora": ["ungd"], "pool_words": {"ungd": 100}, "tokenizer": tokenizer_source(folder)}
    rows = stage_datasets(stage)
    assert [(d.corpus, d.words, d.description) for d in rows] == [
        ("ungd", 100, ""), ("ungd", 120, "the tokenizer's training text"), ("ted", 80, "the tokenizer's training text"),
    ]
    assert licence_metadata(rows) == ("other", "non-commercial")  # TED reached the model through its vocabulary

    unrecorded = tmp_path / "tok_old"
    unrecorded.mkdir()
    rows = stage_datasets({**stage, "tokenizer": tokenizer_source(unrecorded)})
    assert rows[-1].name == "the training text of the tokenizer tok_old" and rows[-1].licence == "unknown"
    assert licence_metadata(rows)[0] == "unknown"
    assert stage_datasets({"train_corpora": ["ungd"], "pool_words": {}}) == stage_datasets({"train_corpora": ["ungd"], "pool_words": {}, "tokenizer": None})


def test_the_card_lists_the_labels_of_every_head(tiny_model_dir, tmp_path):
    from hf_punctcase.labels import COMMAND_LABELS, DISFLUENCY_LABELS

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    assert "- Labels: punctuation O, COMMA, PERIOD, QUESTION; casing LOWER, UPPER_FIRST, ALL_UPPER, MIXED\n" in card_for_checkpoint(folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(disfluency_labels=list(DISFLUENCY_LABELS), command_labels=list(COMMAND_LABELS))
    (folder / "config.json").write_text(json.dumps(config))
    line = next(line for line in card_for_checkpoint(folder).splitlines() if line.startswith("- Labels:"))
    assert line.endswith("; disfluency FLUENT, DISFLUENT; spoken command " + ", ".join(COMMAND_LABELS))
