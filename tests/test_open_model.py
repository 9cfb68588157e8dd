"""The embedded model a company may use: every corpus behind it allows commercial use, its card says so,
and it restores through the same pipeline as the default."""

import json

import pytest
from huggingface_hub import ModelCard

import hf_punctcase
from hf_punctcase.cards.card import card_training_data
from hf_punctcase.cards.licences import is_non_commercial
from hf_punctcase.evaluation import evaluate_pipeline
from hf_punctcase.hub import check_card_metadata

from test_default_model import SAMPLE

#: The corpora whose licences forbid commercial use or do not say (hf_punctcase.data's LICENCES), besides
#: every TED one: the conversations, the court, the NLTK samples, the news inside the Wikipedia sample.
NOT_FOR_COMMERCIAL_USE = {
    "swda", "swda_fillers", "switchboard_disfluency", "switchboard_disfluency_synthetic", "dailydialog", "dictation",
    "scotus", "nltk", "wikipedia", "fortunes",
}


def test_no_corpus_behind_the_open_model_forbids_commercial_use():
    card = ModelCard.load(hf_punctcase.OPEN_MODEL_DIR / "README.md")
    front = check_card_metadata(str(card))
    assert front["license_name"] != "non-commercial" and "nc" not in front["license"]
    assert front["base_model"] == "sentence-transformers/all-mpnet-base-v2"
    rows = card_training_data(card)
    assert rows, "the card lists no training data"
    for row in rows:
        assert not is_non_commercial(row.licence) and row.licence not in ("unknown", "as the user's data"), row
    corpora = {row.corpus.split("/")[-1] for row in rows} | set(front["datasets"])
    assert not corpora & NOT_FOR_COMMERCIAL_USE and not any(name.startswith("ted") for name in corpora), corpora
    assert "no corpus of the training text forbids commercial use" in str(card)


def test_the_open_model_restores_every_word_and_clears_the_defaults_floor():
    restorer = hf_punctcase.load_pipeline("open")
    text = "so what are the risks i am not technical"
    restored = restorer(text)["text"]
    assert [token.lower().rstrip(".,?") for token in restored.split()] == text.split()
    assert restored.startswith("So") and restored.endswith((".", "?"))
    scores = evaluate_pipeline(restorer, SAMPLE)
    assert scores["punct_overall_f1"] >= 0.60 and scores["case_overall_f1"] >= 0.75, scores


def test_the_open_model_has_punctuation_and_casing_heads_only():
    config = json.loads((hf_punctcase.OPEN_MODEL_DIR / "config.json").read_text())
    assert config["encoder"]["model_type"] == "mpnet" and config["encoder"]["num_hidden_layers"] == 6
    assert not config.get("disfluency_labels") and not config.get("command_labels") and not config.get("paragraph_labels")
    restorer = hf_punctcase.load_pipeline("open")
    with pytest.raises(ValueError, match="no disfluency head"):
        restorer("so um what are the risks", remove_disfluencies=True)
