"""The CNN-BiLSTM's family entry (:class:`~hf_punctcase.models.common.family.ModelFamily`)."""

from __future__ import annotations

from ...labels import LabelScheme
from ..common.family import ModelFamily
from .configuration import CnnBiLstmConfig
from .modeling import CnnBiLstmForJointTokenClassification

#: What a run's record and card give as the start of a CNN-BiLSTM trained from scratch.
FROM_SCRATCH = "none (a CNN-BiLSTM trained from scratch)"


def describe(config: dict) -> str:
    """A checkpoint of the family in words, from its config.json."""
    unit = config.get("recurrent_unit", "subword")
    over = "over the first subword of each word" if unit == "word" else "over every subword"
    return (
        f"a small CNN-BiLSTM trained from scratch on its own {config.get('vocab_size', 5000):,}-subword vocabulary "
        f"({config.get('num_cnn_layers', 3)} convolutional layers over subwords, then {config.get('num_bilstm_layers', 2)} "
        f"BiLSTM layers and an LSTM {over}), whose punctuation head reads each {unit}'s state and the next and whose "
        f"casing head reads the previous {unit}'s state and each, for restoration on devices"
    )


def new_model(model_args, scheme: LabelScheme, lexicon: dict[str, str], punct_loss_weight: float):
    """A new CNN-BiLSTM sized to its tokenizer's vocabulary (``--tokenizer_name_or_path``;
    ``--config_overrides`` changes its other fields: ``hidden_size=256,dropout=0.3``), with freshly
    initialised weights."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_args.tokenizer_name_or_path)
    if tokenizer.pad_token_id is None:
        raise ValueError(f"the tokenizer {model_args.tokenizer_name_or_path} has no padding token")
    fields = CnnBiLstmConfig(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        punct_labels=list(scheme.punct_labels),
        case_labels=list(scheme.case_labels),
        punct_loss_weight=punct_loss_weight,
        label_smoothing=model_args.label_smoothing,
        punct_class_weights=model_args.punct_class_weights,
        mixed_case_lexicon=lexicon,
    )
    if model_args.config_overrides:
        fields.update_from_string(model_args.config_overrides)
    config = CnnBiLstmConfig.from_dict(fields.to_dict())  # checks the fields as changed
    model = CnnBiLstmForJointTokenClassification(config)
    if config.recurrent_unit == "word":
        model.mark_word_initial_pieces(tokenizer)
    return model, tokenizer, FROM_SCRATCH


FAMILY = ModelFamily(
    name="cnn_bilstm",
    config_class=CnnBiLstmConfig,
    model_class=CnnBiLstmForJointTokenClassification,
    new_model=new_model,
    describe=describe,
)

__all__ = ["FAMILY", "FROM_SCRATCH", "describe", "new_model"]
