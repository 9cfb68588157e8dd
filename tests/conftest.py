"""Fixtures: a tiny random joint model with a WordPiece tokenizer trained here, and a tiny random
CNN-BiLSTM with a Unigram tokenizer trained here, offline."""

from __future__ import annotations

import os
import random

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from tokenizers import BertWordPieceTokenizer  # noqa: E402
from transformers import BertConfig, PreTrainedTokenizerFast  # noqa: E402

import hf_punctcase  # noqa: E402

VOCABULARY = (
    "so what are the risks i am not technical we think that this is a good idea but you know it was "
    "really hard to say and then they went home because nobody could tell me how much it costs the doctor "
    "asked whether the patient had any pain in her chest or fever yesterday iphone nasa"
).split()


#: The dtype the tiny pipeline runs in: float32, or bfloat16 to run the suite in bf16
#: (HF_PUNCTCASE_TEST_DTYPE=bfloat16 python -m pytest); no test depends on which CPU runs it.
TEST_DTYPE_NAME = os.environ.get("HF_PUNCTCASE_TEST_DTYPE", "float32")
TEST_DTYPE = getattr(torch, TEST_DTYPE_NAME)
#: How far two runs of one model on the same words may differ in a probability when the batch, the
#: padding or the kernels differ (bf16 rounds to 8 bits of mantissa).
PROBABILITY_TOLERANCE = 1e-4 if TEST_DTYPE == torch.float32 else 3e-2


def assert_same_restoration(actual, expected, atol: float = PROBABILITY_TOLERANCE) -> None:
    """Two pipeline results (or lists of them) of the same words, called with return_probabilities=True:
    the probabilities within ``atol``, and each label equal where the model is confident (its best
    label ahead of the next by more than 2 × ``atol``); the text equal where every label is."""
    import numpy as np

    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for one, other in zip(actual, expected):
            assert_same_restoration(one, other, atol)
        return
    assert len(actual["words"]) == len(expected["words"])
    confident_everywhere = True
    for task, field in (("punct", "punctuation"), ("case", "casing")):
        got, want = actual["probabilities"][task], expected["probabilities"][task]
        np.testing.assert_allclose(got, want, atol=atol, rtol=0)
        if len(want) == 0:
            continue
        ranked = np.sort(want, axis=-1)
        confident = ranked[:, -1] - ranked[:, -2] > 2 * atol
        confident_everywhere &= bool(confident.all())
        for index in np.flatnonzero(confident):
            assert actual["words"][index][field] == expected["words"][index][field], (task, index)
    if confident_everywhere:
        assert actual["text"] == expected["text"]


def random_text(rng: random.Random, num_words: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(num_words))


@pytest.fixture(scope="session")
def tiny_tokenizer() -> PreTrainedTokenizerFast:
    rng = random.Random(0)
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    corpus = [random_text(rng, 30) for _ in range(200)] + ["3.5 1,000 don't high-functioning ? . , ! -- café"]
    wordpiece.train_from_iterator(corpus, vocab_size=200, min_frequency=1)
    return PreTrainedTokenizerFast(
        tokenizer_object=wordpiece._tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    )


def tiny_config(**kwargs) -> hf_punctcase.JointTokenClassificationConfig:
    encoder = BertConfig(
        vocab_size=200,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
    )
    kwargs.setdefault("mixed_case_lexicon", {"iphone": "iPhone"})
    return hf_punctcase.JointTokenClassificationConfig(encoder=encoder, **kwargs)


@pytest.fixture(scope="session")
def tiny_model(tiny_tokenizer) -> hf_punctcase.JointTokenClassificationModel:
    torch.manual_seed(0)
    return hf_punctcase.JointTokenClassificationModel(tiny_config()).eval()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_model, tiny_tokenizer) -> str:
    path = tmp_path_factory.mktemp("tiny_model")
    tiny_model.save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_pipeline(tiny_model_dir):
    # TEST_DTYPE (fp32 unless asked) whatever the CPU: tests compare it with pipelines built elsewhere
    # (a subprocess, the Hub), which load in the same dtype
    return hf_punctcase.load_pipeline(tiny_model_dir, dtype=TEST_DTYPE)


@pytest.fixture(scope="session")
def tiny_encoder_dir(tmp_path_factory, tiny_tokenizer) -> str:
    """A tiny random BERT encoder (no MLM head, as the shipped encoders) with the tiny tokenizer."""
    from transformers import BertModel

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny_encoder")
    BertModel(tiny_config().encoder, add_pooling_layer=False).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes tens of seconds (builds a virtual environment); runs by default")


def tiny_corpus_texts(num_texts: int = 200, seed: int = 0) -> list[str]:
    """Punctuated, cased texts of the fixture vocabulary, for training tiny tokenizers."""
    rng = random.Random(seed)
    sentences = [random_text(rng, rng.randint(3, 12)) for _ in range(num_texts)]
    texts = [s.capitalize() + rng.choice([".", "?", ","]) for s in sentences]
    return texts + ["3.5 1,000 don't high-functioning ? . , ! -- café NASA iPhone"]


@pytest.fixture(scope="session")
def tiny_cnn_tokenizer():
    """The CNN-BiLSTM family's Unigram tokenizer, trained here on the fixture vocabulary."""
    from hf_punctcase.models.cnn_bilstm import train_tokenizer

    return train_tokenizer(tiny_corpus_texts(), vocab_size=150, model_max_length=128)


def tiny_cnn_config(vocab_size: int, **kwargs) -> hf_punctcase.CnnBiLstmConfig:
    kwargs.setdefault("mixed_case_lexicon", {"iphone": "iPhone"})
    return hf_punctcase.CnnBiLstmConfig(vocab_size=vocab_size, embedding_size=16, hidden_size=12, **kwargs)


@pytest.fixture(scope="session")
def tiny_cnn_model(tiny_cnn_tokenizer) -> hf_punctcase.CnnBiLstmForJointTokenClassification:
    torch.manual_seed(0)
    model = hf_punctcase.CnnBiLstmForJointTokenClassification(tiny_cnn_config(len(tiny_cnn_tokenizer)))
    model.mark_word_initial_pieces(tiny_cnn_tokenizer)
    return model.eval()


@pytest.fixture(scope="session")
def tiny_cnn_dir(tmp_path_factory, tiny_cnn_model, tiny_cnn_tokenizer) -> str:
    path = tmp_path_factory.mktemp("tiny_cnn")
    tiny_cnn_model.save_pretrained(path)
    tiny_cnn_tokenizer.save_pretrained(path)
    return str(path)


def run_cli(monkeypatch, capsys, argv: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    """``hf-punctcase ARGV`` in this process (stdin replaced when given): exit code, stdout, stderr."""
    import io
    import sys

    from hf_punctcase.cli import main

    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_punctuated_corpus(path, num_documents: int = 80, seed: int = 0) -> str:
    """A .jsonl corpus of punctuated, cased documents for recipe tests (the "text" corpus)."""
    import json

    rng = random.Random(seed)
    sentences = [
        "So what are the risks?", "I am not technical.", "We think that this is a good idea, but you know.",
        "The doctor asked whether the patient had any pain in her chest.", "It was really hard to say, and then they went home.",
        "Nobody could tell me how much it costs.", "NASA bought an iPhone yesterday.",
    ]
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(num_documents):
            text = " ".join(rng.choice(sentences) for _ in range(rng.randint(4, 12)))
            handle.write(json.dumps({"id": f"doc{i}", "text": text}) + "\n")
    return str(path)
