"""Encoder shrinking: the kept subwords keep their vectors and tokenisation, dropped ones are re-split."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

import hf_punctcase
from hf_punctcase.encoders import DEFAULT_MPNET_DIR, mpnet_base_v2_path
from hf_punctcase.training.shrinking import shrink_encoder, subword_counts, vocabulary_for_budget

from conftest import VOCABULARY, write_punctuated_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recipes"))

import finetune  # noqa: E402
import shrink_encoder as shrink_recipe  # noqa: E402
from test_recipes import TINY_TRAINING  # noqa: E402

COVERED = "so what are the risks i am not technical".split()


def _hidden_states(encoder_dir: str, words: list[str], num_layers: int | None = None) -> tuple[list[str], torch.Tensor]:
    tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
    overrides = {} if num_layers is None else {"num_hidden_layers": num_layers}
    model = AutoModel.from_pretrained(encoder_dir, **overrides).eval()
    inputs = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**inputs).last_hidden_state
    return tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]), hidden


def test_kept_subwords_keep_their_tokens_and_vectors(tiny_encoder_dir, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder_dir)
    counts = subword_counts(tokenizer, Counter(VOCABULARY * 3 + COVERED * 10))
    keep = vocabulary_for_budget(tokenizer, counts, vocab_size=90, words=VOCABULARY)
    assert len(keep) == 90 and keep == sorted(keep)
    assert set(tokenizer.all_special_ids) <= set(keep)
    parameters = shrink_encoder(tiny_encoder_dir, tmp_path / "small", keep, num_layers=1)

    original = AutoModel.from_pretrained(tiny_encoder_dir, num_hidden_layers=1, add_pooling_layer=False)
    hidden_size = original.config.hidden_size
    assert parameters == original.num_parameters() - (len(tokenizer) - 90) * hidden_size
    assert len(AutoTokenizer.from_pretrained(tmp_path / "small")) == 90
    # Every subword of the covered words was kept: same pieces, same hidden states as the original's first layer.
    tokens_before, hidden_before = _hidden_states(tiny_encoder_dir, COVERED, num_layers=1)
    tokens_after, hidden_after = _hidden_states(str(tmp_path / "small"), COVERED)
    assert tokens_after == tokens_before
    torch.testing.assert_close(hidden_after, hidden_before)


def test_words_whose_subwords_were_dropped_are_resplit_not_unknown(tiny_encoder_dir, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder_dir)
    counts = subword_counts(tokenizer, Counter({"the": 10}))
    # Only the special tokens, single characters (those of the words and a-z 0-9) and "the" stay.
    keep = vocabulary_for_budget(tokenizer, counts, vocab_size=10_000, words=["technical", "the"])
    assert len(keep) < len(tokenizer) / 2
    shrink_encoder(tiny_encoder_dir, tmp_path / "chars", keep)
    small = AutoTokenizer.from_pretrained(tmp_path / "chars")
    assert small.tokenize("the") == ["the"]
    assert small.tokenize("technical") == ["t", "##e", "##c", "##h", "##n", "##i", "##c", "##a", "##l"]
    assert small.unk_token not in small.tokenize("technical the")


def test_a_budget_below_the_special_and_character_tokens_is_refused(tiny_encoder_dir):
    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder_dir)
    with pytest.raises(ValueError, match="special and character tokens"):
        vocabulary_for_budget(tokenizer, Counter(), vocab_size=5, words=VOCABULARY)


def test_shrink_recipe_output_is_an_encoder_finetune_accepts(tiny_encoder_dir, tmp_path):
    corpus = write_punctuated_corpus(tmp_path / "corpus.jsonl")
    common = ["--encoder", tiny_encoder_dir, "--num_layers", "1", "--vocab_size", "80", "--corpora", f"text:{corpus}"]
    with pytest.raises(SystemExit, match="over --max_parameters"):
        shrink_recipe.main([*common, "--output_dir", str(tmp_path / "over"), "--max_parameters", "1000"])
    encoder = shrink_recipe.main([*common, "--output_dir", str(tmp_path / "encoder")])
    summary = json.loads((encoder / "shrink_summary.json").read_text())
    assert summary["vocab_size"] == 80 and summary["counted_words"] > 0
    assert 0.0 < summary["subword_coverage_before_resplitting"] <= 1.0
    joint = hf_punctcase.JointTokenClassificationModel.from_encoder(str(encoder))
    assert joint.num_parameters() == summary["joint_model_parameters"]
    assert joint.config.encoder.num_hidden_layers == 1 and joint.config.encoder.vocab_size == 80
    final = finetune.main([
        "--encoder", str(encoder), "--output_dir", str(tmp_path / "run"), "--train_corpora", f"text:{corpus}",
        "--eval_corpora", f"text:{corpus}", *TINY_TRAINING,
    ])
    restorer = hf_punctcase.load_pipeline(str(final))
    words = [w["word"].lower().rstrip(",.?!;:") for w in restorer("so what are the risks zyx")["words"]]
    assert words == ["so", "what", "are", "the", "risks", "zyx"]


@pytest.mark.skipif(not DEFAULT_MPNET_DIR.exists(), reason="all-mpnet-base-v2 is not unpacked here")
def test_shrunk_mpnet_matches_its_truncated_original(tmp_path):
    """A real encoder (MPNet: <s> </s> <pad> <unk> and a <mask> at the end of its vocabulary)."""
    source = mpnet_base_v2_path()
    tokenizer = AutoTokenizer.from_pretrained(source)
    counts = subword_counts(tokenizer, Counter(VOCABULARY))
    keep = vocabulary_for_budget(tokenizer, counts, vocab_size=300, words=VOCABULARY)
    shrink_encoder(source, tmp_path / "mpnet1", keep, num_layers=1)
    small = AutoTokenizer.from_pretrained(tmp_path / "mpnet1")
    assert small.convert_ids_to_tokens([small.mask_token_id, small.pad_token_id]) == ["<mask>", "<pad>"]
    tokens_before, hidden_before = _hidden_states(source, COVERED, num_layers=1)
    tokens_after, hidden_after = _hidden_states(str(tmp_path / "mpnet1"), COVERED)
    assert tokens_after == tokens_before
    torch.testing.assert_close(hidden_after, hidden_before)
