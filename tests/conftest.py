"""Fixtures: a tiny random joint model with a WordPiece tokenizer trained here, offline."""

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
    return hf_punctcase.load_pipeline(tiny_model_dir)
