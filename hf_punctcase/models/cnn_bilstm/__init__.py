"""The CNN-BiLSTM family: a small model trained from scratch on its own 5,000-subword vocabulary, for
restoration on devices (ONNX export, :mod:`hf_punctcase.runtime`)."""

from .configuration import CnnBiLstmConfig
from .modeling import CnnBiLstmForJointTokenClassification, CnnBiLstmPreTrainedModel
from .tokenization import DEFAULT_VOCAB_SIZE, train_tokenizer, train_tokenizer_on_corpora, training_words

__all__ = [
    "DEFAULT_VOCAB_SIZE",
    "CnnBiLstmConfig",
    "CnnBiLstmForJointTokenClassification",
    "CnnBiLstmPreTrainedModel",
    "train_tokenizer",
    "train_tokenizer_on_corpora",
    "training_words",
]
